import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension ChildProcess {
  /// A child just started: its PID, the read end of its stdout pipe, the file of its stderr.
  struct Spawned {
    var pid: pid_t
    var stdout: Int32
    var stderrURL: URL?
  }

  /// Starts `executable` with `posix_spawn` rather than Foundation's `Process`, for three
  /// reasons: the child gets an empty signal mask (Foundation's children start with SIGTERM
  /// and SIGINT blocked), only fds 0–2 are inherited (a leaked socket of a parallel test would
  /// keep that test's connection open), and we reap it ourselves (``ChildWatch``), so it can be
  /// signalled by PID without racing a reaper.
  ///
  /// stdin is `stdin`'s bytes (through a temporary file; none: /dev/null), stdout a pipe, stderr a temporary
  /// file (so a chatty child never blocks on it) or the stdout pipe.
  static func spawn(
    _ executable: URL, _ arguments: [String], environment: [String: String],
    workingDirectory: URL?, stdin: [UInt8], stderr: StandardError
  ) throws -> Spawned {
    let files = FileManager.default
    let stem = files.temporaryDirectory
      .appendingPathComponent("child-\(executable.lastPathComponent)-\(UUID().uuidString)")
    let stdinURL = stdin.isEmpty ? nil : stem.appendingPathExtension("stdin")
    if let stdinURL { try Data(stdin).write(to: stdinURL) }
    // The child has it open once posix_spawn returns (it returns after the exec).
    defer { if let stdinURL { try? files.removeItem(at: stdinURL) } }
    let stderrURL = stderr == .captured ? stem.appendingPathExtension("stderr") : nil
    var stderrFD: Int32 = -1
    if let stderrURL {
      stderrFD = open(stderrURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
      guard stderrFD >= 0 else {
        throw ChildProcessError.spawnFailed("open \(stderrURL.path)", errno)
      }
    }
    defer { if stderrFD >= 0 { close(stderrFD) } }

    var pipeFDs: [Int32] = [-1, -1]
    guard GNU.pipeCloseOnExec(&pipeFDs) == 0 else {
      throw ChildProcessError.spawnFailed("pipe", errno)
    }
    var readEndOwned = true
    defer {
      close(pipeFDs[1])
      if readEndOwned { close(pipeFDs[0]) }
    }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdinURL?.path ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    posix_spawn_file_actions_adddup2(&actions, stderrURL == nil ? pipeFDs[1] : stderrFD, 2)
    try GNU.closeFrom(3, in: &actions)
    if let workingDirectory { try GNU.changeDirectory(to: workingDirectory.path, in: &actions) }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var defaultSignals = sigset_t()
    sigemptyset(&defaultSignals)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD] { sigaddset(&defaultSignals, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
    // Its own process group, so a Ctrl-C at the terminal goes to `swift test` alone; the
    // scripts exit by themselves once their parent is gone (peer_common.watch_parent).
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

    let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
    guard spawned == 0 else { throw ChildProcessError.spawnFailed(executable.path, spawned) }
    readEndOwned = false
    return Spawned(pid: pid, stdout: pipeFDs[0], stderrURL: stderrURL)
  }
}

/// glibc functions that Swift's Glibc module hides behind _GNU_SOURCE, looked up by name.
enum GNU {
  private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
  private typealias AddCloseFrom =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
  private typealias AddChangeDirectory =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?)
    -> Int32

  /// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec from the start, so no child spawned by
  /// another thread meanwhile inherits them.
  static func pipeCloseOnExec(_ fds: inout [Int32]) -> Int32 {
    guard let symbol = dlsym(nil, "pipe2") else { return -1 }
    return unsafeBitCast(symbol, to: Pipe2.self)(&fds, O_CLOEXEC)
  }

  /// Adds "close every fd from `lowest` up" (glibc 2.34+) to `actions`.
  static func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) throws {
    let add: AddCloseFrom = try function("posix_spawn_file_actions_addclosefrom_np", "2.34")
    let result = add(&actions, lowest)
    guard result == 0 else {
      throw ChildProcessError.spawnFailed("posix_spawn_file_actions_addclosefrom_np", result)
    }
  }

  /// Adds "change to directory `path`" (glibc 2.29+) to `actions`.
  static func changeDirectory(
    to path: String, in actions: inout posix_spawn_file_actions_t
  ) throws {
    let add: AddChangeDirectory = try function("posix_spawn_file_actions_addchdir_np", "2.29")
    let result = path.withCString { add(&actions, $0) }
    guard result == 0 else {
      throw ChildProcessError.spawnFailed("posix_spawn_file_actions_addchdir_np \(path)", result)
    }
  }

  private static func function<F>(_ name: String, _ glibc: String) throws -> F {
    guard let symbol = dlsym(nil, name) else {
      throw ChildProcessError.spawnFailed("\(name) is missing (glibc older than \(glibc))", ENOSYS)
    }
    return unsafeBitCast(symbol, to: F.self)
  }
}
