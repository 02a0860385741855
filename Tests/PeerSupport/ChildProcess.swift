import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A program a test runs — one of the package's executables, a Python peer, a system tool —
/// whose stdout lines and exit are watched as they come, so that the test can wait for a line,
/// a port or the exit, each within a timeout, and signal or stop it by PID.
///
/// Every runner of `PeerSupport` is built on it: ``ToolProcess`` (the package's executables),
/// ``PythonPeer`` (scripts run to their end) and ``PeerServer`` (servers that announce a port).
/// Started with `posix_spawn` (see ``spawn(_:_:environment:workingDirectory:stdin:stderr:)``):
/// an empty signal mask, only fds 0–2 inherited, its own process group.
///
/// stdout is read through a pipe into ``lines`` and ``stdout``; stderr goes to a temporary file
/// (``stderr``, for failure messages) or into stdout. Every wait has a timeout, ends early with
/// task cancellation, and fails with a ``ChildProcessError`` that carries what the child
/// printed. One dropped while it runs is killed (SIGKILL); the exit is always reaped.
public final class ChildProcess: Sendable {
  /// How a child ended.
  public enum Exit: Sendable, Equatable, CustomStringConvertible {
    /// It exited with this status (0 after a clean SIGTERM shutdown).
    case exited(Int32)
    /// A signal it did not handle ended it (SIGKILL = 9 after a `stop` that had to force it).
    case signalled(Int32)

    /// The exit status, or the signal's number (as Foundation's `terminationStatus` has it).
    public var status: Int32 {
      switch self {
      case .exited(let status), .signalled(let status): status
      }
    }

    public var description: String {
      switch self {
      case .exited(let status): "exit status \(status)"
      case .signalled(let signal): "killed by signal \(signal)"
      }
    }
  }

  /// Where the child's stderr goes.
  public enum StandardError: Sendable {
    /// A temporary file, read by ``ChildProcess/stderr`` at any time.
    case captured
    /// The stdout pipe, interleaved as a terminal shows them; ``ChildProcess/stderr`` is empty.
    case mergedIntoStdout
  }

  /// What it is called in messages: the executable's or the script's name.
  public let name: String
  /// Its process ID (its own process group, too).
  public let pid: pid_t
  private let watch: ChildWatch

  /// Starts `executable` with `arguments` (argv[0] is the executable's path) in the background.
  ///
  /// `stdin` is all it reads (none: /dev/null); `workingDirectory` nil keeps ours. Throws
  /// ``ChildProcessError/spawnFailed(_:_:)`` when it cannot be started.
  public init(
    _ executable: URL, _ arguments: [String], name: String? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    workingDirectory: URL? = nil, stdin: [UInt8] = [], stderr: StandardError = .captured
  ) throws {
    let spawned = try Self.spawn(
      executable, arguments, environment: environment, workingDirectory: workingDirectory,
      stdin: stdin, stderr: stderr)
    self.name = name ?? executable.lastPathComponent
    self.pid = spawned.pid
    self.watch = try ChildWatch(
      pid: spawned.pid, stdout: spawned.stdout, stderrURL: spawned.stderrURL)
  }

  deinit {
    watch.signal(SIGKILL)
    if let stderrURL = watch.stderrURL { try? FileManager.default.removeItem(at: stderrURL) }
  }

  // MARK: What it printed

  /// Every stdout line so far, without the newline (a last unterminated line once it ended).
  public var lines: [String] { watch.snapshot.lines }

  /// Every byte of stdout so far.
  public var stdout: [UInt8] { watch.snapshot.stdout }

  /// `stdout` as UTF-8 text.
  public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

  /// What it has written to stderr so far.
  public var stderr: String { watch.stderr }

  /// How it ended, or nil while it runs.
  public var exitStatus: Exit? { watch.snapshot.exit }

  /// Whether it still runs.
  public var isRunning: Bool { exitStatus == nil }

  // MARK: Waiting

  /// Waits for the first line at index `from` or later of ``lines`` that satisfies `predicate`.
  ///
  /// Pass `from: lines.count` to ignore what was printed before. Throws
  /// ``ChildProcessError/timedOut(waitingFor:after:stdout:stderr:)`` after `timeout`,
  /// ``ChildProcessError/exited(waitingFor:_:stdout:stderr:)`` when stdout ends first, and
  /// `CancellationError` when the task is cancelled.
  public func waitForLine(
    from: Int = 0, timeout: Duration = .seconds(10), _ what: String = "a matching line",
    where predicate: @escaping @Sendable (String) -> Bool
  ) async throws -> String {
    let what = "\(name): \(what)"
    return try await watch.wait(for: what, timeout: timeout) { state in
      let first = max(0, from)
      if first < state.lines.count, let line = state.lines[first...].first(where: predicate) {
        return .success(line)
      }
      if state.stdoutClosed {
        return .failure(.exited(waitingFor: what, state.exit, stdout: state.lines, stderr: ""))
      }
      return nil
    }
  }

  /// Waits until `count` lines at index `from` or later of ``lines`` satisfy `predicate`, and
  /// returns the first `count` of them; throws as ``waitForLine(from:timeout:_:where:)``.
  public func waitForLines(
    _ count: Int, from: Int = 0, timeout: Duration = .seconds(10),
    _ what: String = "matching lines", where predicate: @escaping @Sendable (String) -> Bool
  ) async throws -> [String] {
    let what = "\(name): \(count) × \(what)"
    return try await watch.wait(for: what, timeout: timeout) { state in
      let first = max(0, from)
      let matching = first < state.lines.count ? state.lines[first...].filter(predicate) : []
      if matching.count >= count { return .success(Array(matching.prefix(count))) }
      if state.stdoutClosed {
        return .failure(.exited(waitingFor: what, state.exit, stdout: state.lines, stderr: ""))
      }
      return nil
    }
  }

  /// Waits for its first non-empty line, which must announce the port it listens on; returns
  /// the port and the index in ``lines`` of the line after it.
  ///
  /// Throws ``ChildProcessError/badListeningLine(_:_:expected:stderr:)`` when that line is
  /// something else, ``ChildProcessError/exitedBeforeListening(_:_:stdout:stderr:)`` when it
  /// ends first, and a time-out after `timeout`; it is not stopped.
  public func waitForPort(
    _ announcement: PortAnnouncement, timeout: Duration
  ) async throws -> (port: Int, next: Int) {
    let name = self.name
    return try await watch.wait(for: "\(name) to print \(announcement)", timeout: timeout) {
      state in
      if let index = state.lines.firstIndex(where: { !$0.isEmpty }) {
        let line = state.lines[index]
        guard let port = announcement.port(line) else {
          return .failure(
            .badListeningLine(name, line, expected: announcement.description, stderr: ""))
        }
        return .success((port, index + 1))
      }
      if state.finished {
        return .failure(.exitedBeforeListening(name, state.exit!, stdout: state.lines, stderr: ""))
      }
      return nil
    }
  }

  /// Checks `condition` every 10 ms until it holds, for what the child does not print (its
  /// sockets in /proc/PID/fd, say). Throws after `timeout`, and when it exits first.
  public func waitUntil(
    _ what: String, timeout: Duration = .seconds(15), _ condition: () -> Bool
  ) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
      if let exit = exitStatus {
        throw ChildProcessError.exited(
          waitingFor: "\(name): \(what)", exit, stdout: lines, stderr: stderr)
      }
      guard ContinuousClock.now < deadline else {
        throw ChildProcessError.timedOut(
          waitingFor: "\(name): \(what)", after: timeout, stdout: lines, stderr: stderr)
      }
      // Polled: no event says that the condition became true.
      try await Task.sleep(for: .milliseconds(10))
    }
  }

  /// Waits for it to end by itself (or by a signal someone else sent) and for the last of its
  /// stdout; returns how it ended. After `timeout` it is killed (SIGKILL), so that no test
  /// leaves one behind, and ``ChildProcessError/timedOut(waitingFor:after:stdout:stderr:)``
  /// thrown.
  public func waitForExit(timeout: Duration = .seconds(10)) async throws -> Exit {
    do {
      return try await exit(within: timeout)
    } catch let error as ChildProcessError {
      if case .timedOut = error { kill() }
      throw error
    }
  }

  /// Waits for it to end by itself within `timeout` (see ``waitForExit(timeout:)``) and
  /// returns what it printed. A non-zero exit is not an error here: it is in the output.
  public func output(within timeout: Duration) async throws -> Output {
    let exit = try await waitForExit(timeout: timeout)
    return Output(exit: exit, stdout: stdout, stderr: stderr)
  }

  private func exit(within timeout: Duration) async throws -> Exit {
    try await watch.wait(for: "\(name) to exit", timeout: timeout) { state in
      state.finished ? .success(state.exit!) : nil
    }
  }

  // MARK: Signals

  /// Sends `signal` by PID unless it has exited (and been reaped: then the PID may be someone
  /// else's); returns whether it was sent.
  @discardableResult
  public func signal(_ signal: Int32) -> Bool {
    watch.signal(signal)
  }

  /// Kills it (SIGKILL) and returns at once, for a `defer`; it is reaped on a thread of its own.
  public func kill() {
    watch.signal(SIGKILL)
  }

  /// Sends `signal` and waits for it to end by itself within `timeout`, for a test of how it
  /// shuts down; returns how it ended. After `timeout` it is killed (SIGKILL) and
  /// ``ChildProcessError/timedOut(waitingFor:after:stdout:stderr:)`` thrown.
  @discardableResult
  public func terminate(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async throws
    -> Exit
  {
    self.signal(signal)
    return try await waitForExit(timeout: timeout)
  }

  /// Ends it: `signal` (SIGTERM unless said), then SIGKILL if it still runs after `grace`
  /// (with `grace` zero, SIGKILL at once); returns how it ended, once it has been reaped.
  /// Safe to call more than once: once it has exited, nothing is sent.
  @discardableResult
  public func stop(_ signal: Int32 = SIGTERM, grace: Duration = .seconds(5)) async -> Exit {
    let first = grace == .zero ? SIGKILL : signal
    self.signal(first)
    if first != SIGKILL, let exit = try? await exit(within: grace) { return exit }
    self.signal(SIGKILL)
    // SIGKILL cannot be caught; the kernel ends the process at once.
    return (try? await exit(within: .seconds(30))) ?? .signalled(SIGKILL)
  }
}
