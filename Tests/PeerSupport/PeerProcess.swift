import Foundation
import FleetSync

#if canImport(Glibc)
  import Glibc
#endif

/// A child process whose stdout lines and exit are watched by two threads of its own.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, for three reasons: the child
/// gets an empty signal mask (Foundation's children start with SIGTERM and SIGINT blocked),
/// only fds 0–2 are inherited (a leaked socket of a parallel test would keep that test's
/// connection open), and we reap it ourselves, so `stop` can kill it by PID without racing
/// the reaper: the waiter thread first waits with `WNOWAIT` (the child stays a zombie and its
/// PID cannot be reused), then reaps inside the lock that `signal` also takes.
///
/// stdout is a pipe read line by line; stderr goes to a temporary file, so a chatty child
/// never blocks on it. Waits (`wait(for:…)`) are continuations resumed when a line arrives or
/// the child exits, with a timeout and task cancellation.
final class PeerProcess: Sendable {
  struct State: Sendable {
    /// Every stdout line, in order, without the newline.
    var lines: [String] = []
    /// Set once stdout reached EOF: no more lines will come.
    var stdoutClosed = false
    /// Set once the child has exited (before it is reaped).
    var exit: PeerExitStatus?
    fileprivate var waiters: [UInt64: Waiter] = [:]
    fileprivate var cancelled: Set<UInt64> = []
    fileprivate var nextWaiter: UInt64 = 0
  }

  fileprivate struct Waiter: Sendable {
    /// Returns what to do (outside the lock) when the wait is over, or nil to keep waiting.
    var evaluate: @Sendable (State) -> (@Sendable () -> Void)?
    var fail: @Sendable (any Error) -> Void
  }

  let pid: pid_t
  let stderrURL: URL
  private let state = PosixMutex(State())

  /// Starts `executable` with `arguments` (argv[0] is the executable's path) and `environment`.
  init(executable: URL, arguments: [String], environment: [String: String]) throws {
    let stderrURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("peer-\(UUID().uuidString).stderr")
    let stderrFD = open(stderrURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard stderrFD >= 0 else { throw PeerServerError.spawnFailed("open \(stderrURL.path)", errno) }
    defer { close(stderrFD) }

    var pipeFDs: [Int32] = [-1, -1]
    guard GNU.pipeCloseOnExec(&pipeFDs) == 0 else {
      throw PeerServerError.spawnFailed("pipe", errno)
    }
    var readEndOwned = true
    defer {
      close(pipeFDs[1])
      if readEndOwned { close(pipeFDs[0]) }
    }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    posix_spawn_file_actions_adddup2(&actions, stderrFD, 2)
    try GNU.closeFrom(3, in: &actions)

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
    guard spawned == 0 else { throw PeerServerError.spawnFailed(executable.path, spawned) }

    self.pid = pid
    self.stderrURL = stderrURL
    readEndOwned = false
    let readEnd = pipeFDs[0]
    Thread.detachNewThread { [self] in readLines(from: readEnd) }
    Thread.detachNewThread { [self] in awaitExit() }
  }

  deinit {
    try? FileManager.default.removeItem(at: stderrURL)
  }

  /// What the child has written to stderr so far.
  var stderr: String {
    String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
  }

  var snapshot: State { state.withLock { $0 } }

  /// Sends `signal` unless the child has exited; returns whether it was sent.
  @discardableResult
  func signal(_ signal: Int32) -> Bool {
    // Under the lock the waiter thread reaps in, so `pid` is still our child (maybe a zombie).
    state.withLock { state in
      guard state.exit == nil else { return false }
      return kill(pid, signal) == 0
    }
  }

  /// Waits until `check` returns a result for the state (checked now and after every change).
  func wait<T: Sendable>(
    for what: String, timeout: Duration,
    _ check: @escaping @Sendable (State) -> Result<T, PeerServerError>?
  ) async throws -> T {
    let id = state.withLock { state in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<T, any Error>) in
        let finish: @Sendable (Result<T, PeerServerError>) -> @Sendable () -> Void = { result in
          { continuation.resume(with: result.mapError { $0 as any Error }) }
        }
        let now: (@Sendable () -> Void)? = state.withLock { state in
          if state.cancelled.remove(id) != nil {
            return { continuation.resume(throwing: CancellationError()) }
          }
          if let result = check(state) { return finish(result) }
          state.waiters[id] = Waiter(
            evaluate: { state in check(state).map(finish) },
            fail: { continuation.resume(throwing: $0) })
          return nil
        }
        if let now {
          now()
          return
        }
        Task { [weak self] in
          try? await Task.sleep(for: timeout)
          guard let self else { return }
          let lines = self.snapshot.lines
          self.fail(
            id,
            PeerServerError.timedOut(
              waitingFor: what, after: timeout, stdout: lines, stderr: self.stderr))
        }
      }
    } onCancel: {
      let registered = state.withLock { state in
        if state.waiters[id] != nil { return true }
        state.cancelled.insert(id)
        return false
      }
      if registered { fail(id, CancellationError()) }
    }
  }

  private func fail(_ id: UInt64, _ error: any Error) {
    let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
    waiter?.fail(error)
  }

  /// Applies `change` and resumes the waiters it satisfies (outside the lock).
  private func update(_ change: @Sendable (inout State) -> Void) {
    let actions = state.withLock { state -> [@Sendable () -> Void] in
      change(&state)
      var ready: [@Sendable () -> Void] = []
      for (id, waiter) in state.waiters {
        if let action = waiter.evaluate(state) {
          state.waiters[id] = nil
          ready.append(action)
        }
      }
      return ready
    }
    for action in actions { action() }
  }

  // MARK: The two threads

  private func readLines(from fd: Int32) {
    defer { close(fd) }
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      pending.append(contentsOf: buffer[0..<count])
      var lines: [String] = []
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        lines.append(String(decoding: pending[..<newline], as: UTF8.self))
        pending.removeSubrange(...newline)
      }
      if !lines.isEmpty {
        let batch = lines
        update { $0.lines.append(contentsOf: batch) }
      }
    }
    let last = pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    update { state in
      if let last { state.lines.append(last) }
      state.stdoutClosed = true
    }
  }

  private func awaitExit() {
    var info = siginfo_t()
    // WNOWAIT: learn of the exit but leave the zombie, so the PID stays ours until we reap.
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
    update { state in
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      // The <sys/wait.h> macros do not import: low 7 bits = terminating signal, else the
      // exit code is in bits 8–15.
      let signal = status & 0x7f
      state.exit = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
  }
}

/// glibc functions that Swift's Glibc module hides behind _GNU_SOURCE, looked up by name.
private enum GNU {
  private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
  private typealias AddCloseFrom =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

  /// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec from the start, so no child spawned by
  /// another thread meanwhile inherits them.
  static func pipeCloseOnExec(_ fds: inout [Int32]) -> Int32 {
    guard let symbol = dlsym(nil, "pipe2") else { return -1 }
    return unsafeBitCast(symbol, to: Pipe2.self)(&fds, O_CLOEXEC)
  }

  /// Adds "close every fd from `lowest` up" (glibc 2.34+) to `actions`.
  static func closeFrom(
    _ lowest: Int32, in actions: inout posix_spawn_file_actions_t
  ) throws {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
      throw PeerServerError.spawnFailed(
        "posix_spawn_file_actions_addclosefrom_np is missing (glibc older than 2.34)", ENOSYS)
    }
    let result = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
    guard result == 0 else {
      throw PeerServerError.spawnFailed("posix_spawn_file_actions_addclosefrom_np", result)
    }
  }
}
