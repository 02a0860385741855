import FleetSync
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Our `interop-server` executable (built beside the test bundle) running on 127.0.0.1 with a
/// port the OS picked, for one test.
///
/// ``start()`` launches it with Foundation's `Process` and returns once it printed
/// `LISTENING <port>`; ``stop(grace:)`` sends SIGTERM by PID and returns how it ended (SIGKILL
/// after the grace period). Prefer ``withInteropServer(_:)``, which always stops it. A server
/// dropped while running is killed with SIGKILL. It does not watch its parent: a test run
/// that crashes leaves it running.
final class InteropServerProcess: Sendable {
  /// How the process ended.
  enum Exit: Sendable, Equatable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    var description: String {
      switch self {
      case .exited(let status): "exit status \(status)"
      case .signalled(let signal): "killed by signal \(signal)"
      }
    }
  }

  private struct State: Sendable {
    var stdout = ""
    var exit: Exit?
    var waiters: [UInt64: Waiter] = [:]
    var nextWaiter: UInt64 = 0
  }

  private struct Waiter: Sendable {
    var isReady: @Sendable (State) -> Bool
    var continuation: CheckedContinuation<Void, any Error>
  }

  static var executable: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("interop-server")
  }

  /// The port it listens on (127.0.0.1).
  let port: Int
  let pid: pid_t
  // Kept so that Foundation keeps watching the child; never touched after `start`.
  private let process: Process
  private let state: PosixMutex<State>
  private let stderrURL: URL

  private init(port: Int, process: Process, state: PosixMutex<State>, stderrURL: URL) {
    self.port = port
    self.pid = process.processIdentifier
    self.process = process
    self.state = state
    self.stderrURL = stderrURL
  }

  deinit {
    if state.withLock({ $0.exit == nil }) { kill(pid, SIGKILL) }
    try? FileManager.default.removeItem(at: stderrURL)
  }

  /// Starts `interop-server --port 0` and waits (up to `timeout`) for `LISTENING <port>`.
  /// Throws ``InteropServerError`` when the executable is missing, exits, or stays silent.
  static func start(
    arguments extra: [String] = [], timeout: Duration = .seconds(30)
  ) async throws -> InteropServerProcess {
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw InteropServerError(
        what: "no interop-server at \(executable.path); `swift build --build-tests` builds it",
        stdout: "", stderr: "")
    }
    let stderrURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("interop-server-\(UUID().uuidString).stderr")
    _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
    let errors = try FileHandle(forWritingTo: stderrURL)
    defer { try? errors.close() }
    let output = Pipe()
    let process = Process()
    process.executableURL = executable
    process.arguments = ["--port", "0", "--host", "127.0.0.1"] + extra
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = output
    process.standardError = errors

    let state = PosixMutex(State())
    // Set before `run`, so that an instant exit is still seen.
    process.terminationHandler = { process in
      let exit: Exit =
        process.terminationReason == .uncaughtSignal
        ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
      update(state) { $0.exit = exit }
    }
    try process.run()
    try? output.fileHandleForWriting.close()
    let reader = output.fileHandleForReading
    Thread.detachNewThread {
      while true {
        let data = reader.availableData
        if data.isEmpty { break }
        let text = String(decoding: data, as: UTF8.self)
        update(state) { $0.stdout += text }
      }
      try? reader.close()
    }

    let pid = process.processIdentifier
    let transcript: @Sendable (String) -> InteropServerError = { what in
      InteropServerError(
        what: what, stdout: state.withLock { $0.stdout },
        stderr: String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self))
    }
    let first: Substring
    do {
      try await wait(
        on: state, for: "LISTENING <port>", timeout: timeout, failure: transcript,
        until: { $0.stdout.contains("\n") || $0.exit != nil })
      first = state.withLock { $0.stdout }.split(separator: "\n").first ?? ""
    } catch {
      kill(pid, SIGKILL)
      try? FileManager.default.removeItem(at: stderrURL)
      throw error
    }
    let parts = first.split(separator: " ")
    guard parts.count == 2, parts[0] == "LISTENING", let port = Int(parts[1]), port > 0 else {
      kill(pid, SIGKILL)
      let error = transcript("interop-server did not print LISTENING <port> first")
      try? FileManager.default.removeItem(at: stderrURL)
      throw error
    }
    return InteropServerProcess(port: port, process: process, state: state, stderrURL: stderrURL)
  }

  /// What it printed to stdout so far.
  var stdoutText: String { state.withLock { $0.stdout } }

  /// What it printed to stderr so far.
  var stderrText: String {
    String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
  }

  /// How it ended, or nil while it runs.
  var exit: Exit? { state.withLock { $0.exit } }

  /// Waits for the process to end by itself (after a signal someone else sent).
  func waitForExit(timeout: Duration = .seconds(10)) async throws -> Exit {
    try await Self.wait(
      on: state, for: "interop-server to exit", timeout: timeout,
      failure: { [self] in error($0) }, until: { $0.exit != nil })
    return exit!
  }

  /// SIGTERM (SIGKILL when `grace` is zero), then SIGKILL if it still runs after `grace`;
  /// returns how it ended. Safe to call more than once: once the exit has been seen no signal
  /// is sent (Foundation reaps the child, after which its PID may belong to someone else).
  @discardableResult
  func stop(grace: Duration = .seconds(10)) async -> Exit {
    if let exit { return exit }
    kill(pid, grace == .zero ? SIGKILL : SIGTERM)
    if let exit = try? await waitForExit(timeout: grace == .zero ? .seconds(30) : grace) {
      return exit
    }
    kill(pid, SIGKILL)
    return (try? await waitForExit(timeout: .seconds(30))) ?? .signalled(SIGKILL)
  }

  /// An error that carries both streams.
  func error(_ what: String) -> InteropServerError {
    InteropServerError(what: what, stdout: stdoutText, stderr: stderrText)
  }

  // MARK: Waiting

  /// Resumes once `isReady` holds for `state` (checked now and after every change); throws
  /// `failure(...)` after `timeout`.
  private static func wait(
    on state: PosixMutex<State>, for what: String, timeout: Duration,
    failure: @escaping @Sendable (String) -> InteropServerError,
    until isReady: @escaping @Sendable (State) -> Bool
  ) async throws {
    let id = state.withLock { state in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let ready = state.withLock { state in
        if isReady(state) { return true }
        state.waiters[id] = Waiter(isReady: isReady, continuation: continuation)
        return false
      }
      if ready { return continuation.resume() }
      let (seconds, attoseconds) = timeout.components
      let deadline = DispatchTime.now() + Double(seconds) + Double(attoseconds) / 1e18
      DispatchQueue.global().asyncAfter(deadline: deadline) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.continuation.resume(throwing: failure("no \(what) after \(timeout)"))
      }
    }
  }

  /// Applies `change`, then resumes (outside the lock) the waiters it made ready.
  private static func update(_ state: PosixMutex<State>, _ change: (inout State) -> Void) {
    let ready = state.withLock { state -> [Waiter] in
      change(&state)
      let ids = state.waiters.filter { $0.value.isReady(state) }.map(\.key)
      return ids.compactMap { state.waiters.removeValue(forKey: $0) }
    }
    for waiter in ready { waiter.continuation.resume() }
  }
}

/// The server could not be started or did not do what a test waited for.
struct InteropServerError: Error, CustomStringConvertible {
  var what: String
  var stdout: String
  var stderr: String

  var description: String { "\(what)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)" }
}

/// Runs `body` with a started ``InteropServerProcess`` and stops it afterwards (SIGTERM),
/// whether `body` returns or throws; returns what `body` returned and how the server ended.
func withInteropServer<T>(
  isolation: isolated (any Actor)? = #isolation,
  _ body: (InteropServerProcess) async throws -> T
) async throws -> (result: T, exit: InteropServerProcess.Exit) {
  let server = try await InteropServerProcess.start()
  do {
    let result = try await body(server)
    return (result, await server.stop())
  } catch {
    await server.stop()
    throw error
  }
}
