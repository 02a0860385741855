import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A server script of `Tests/Python` (interop_server.py, raw_h2_server.py) running on
/// 127.0.0.1 with a port the OS picked, for one test.
///
/// `start` runs the script with the venv's interpreter (``PythonPeer/interpreter()``) and
/// returns once it printed `LISTENING <port>`; the lines it prints after that (its EVENT
/// lines) are in `lines` and can be awaited with `waitForLine` / `waitForEvent`. `stop` ends
/// it by PID (SIGTERM, then SIGKILL after a grace period) and reaps it; prefer
/// ``withPeerServer(_:arguments:isolation:_:)``, which always stops it. A server dropped
/// without `stop` is killed with SIGKILL.
///
/// Any number may run at once (each test its own): nothing is shared between instances.
/// A server that cannot start throws ``PeerServerError`` (or ``PythonPeerError`` when there is
/// no interpreter), so the calling test fails rather than skips.
public final class PeerServer: Sendable {
  /// The script's file name in `Tests/Python`.
  public let script: String
  /// The TCP port it listens on, on `127.0.0.1` unless `--host` said otherwise.
  public let port: Int
  /// Its process ID (its own process group, too).
  public let pid: pid_t

  private let process: PeerProcess
  /// Index in `process.snapshot.lines` of the first line after LISTENING.
  private let firstLine: Int

  private init(script: String, port: Int, process: PeerProcess, firstLine: Int) {
    self.script = script
    self.port = port
    self.pid = process.pid
    self.process = process
    self.firstLine = firstLine
  }

  deinit {
    process.signal(SIGKILL)
  }

  /// Starts `Tests/Python/<script> <arguments…>` and waits until it listens.
  ///
  /// Throws when there is no interpreter or script, and when the process exits or stays
  /// silent for `startTimeout` before printing `LISTENING <port>` (it is then killed); the
  /// error carries its stderr.
  public static func start(
    _ script: String, arguments: [String] = [], startTimeout: Duration = .seconds(30)
  ) async throws -> PeerServer {
    let python = try PythonPeer.interpreter()
    let scriptURL = PythonPeer.script(script)
    guard FileManager.default.fileExists(atPath: scriptURL.path) else {
      throw PeerServerError.noScript(scriptURL.path)
    }
    var environment = ProcessInfo.processInfo.environment
    environment["PYTHONUNBUFFERED"] = "1"
    let process = try PeerProcess(
      executable: python, arguments: [scriptURL.path] + arguments, environment: environment)

    do {
      let announced = try await process.wait(
        for: "\(script) to print LISTENING <port>", timeout: startTimeout
      ) { state -> Result<(port: Int, index: Int), PeerServerError>? in
        if let index = state.lines.firstIndex(where: { !$0.isEmpty }) {
          let line = state.lines[index]
          let parts = line.split(separator: " ")
          if parts.count == 2, parts[0] == "LISTENING", let port = Int(parts[1]), port > 0 {
            return .success((port, index + 1))
          }
          return .failure(.badListeningLine(script: script, line, stderr: ""))
        }
        if state.stdoutClosed || state.exit != nil {
          return .failure(
            .exitedBeforeListening(
              script: script, state.exit ?? .exited(-1), stdout: state.lines, stderr: ""))
        }
        return nil
      }
      return PeerServer(
        script: script, port: announced.port, process: process, firstLine: announced.index)
    } catch {
      await Self.kill(process)
      guard let error = error as? PeerServerError else { throw error }
      throw Self.completed(error, from: process)
    }
  }

  /// Every line printed after `LISTENING <port>`, so far.
  public var lines: [String] { Array(process.snapshot.lines.dropFirst(firstLine)) }

  /// The EVENT lines printed so far, parsed.
  public var events: [PeerEvent] { lines.compactMap(PeerEvent.init) }

  /// What it has written to stderr so far.
  public var stderr: String { process.stderr }

  /// How it ended, or nil while it runs.
  public var exitStatus: PeerExitStatus? { process.snapshot.exit }

  /// Waits for the first line at index `from` or later of `lines` that satisfies `predicate`.
  ///
  /// Pass `from: server.lines.count` to ignore what was printed before. Throws
  /// ``PeerServerError/timedOut(waitingFor:after:stdout:stderr:)`` after `timeout`,
  /// ``PeerServerError/exited(waitingFor:_:stdout:stderr:)`` when the server's stdout closes
  /// first, and `CancellationError` when the task is cancelled.
  public func waitForLine(
    from: Int = 0, timeout: Duration = .seconds(10), _ what: String = "a matching line",
    where predicate: @escaping @Sendable (String) -> Bool
  ) async throws -> String {
    let first = firstLine + max(0, from)
    do {
      return try await process.wait(for: what, timeout: timeout) { state in
        if first < state.lines.count, let line = state.lines[first...].first(where: predicate) {
          return .success(line)
        }
        if state.stdoutClosed {
          return .failure(.exited(waitingFor: what, state.exit, stdout: state.lines, stderr: ""))
        }
        return nil
      }
    } catch let error as PeerServerError {
      throw Self.completed(error, from: process)
    }
  }

  /// Waits for an EVENT line of `kind` (and `path`, when given) that satisfies `predicate`.
  ///
  /// `from` indexes `lines`, as in ``waitForLine(from:timeout:_:where:)``.
  public func waitForEvent(
    _ kind: String, path: String? = nil, from: Int = 0, timeout: Duration = .seconds(10),
    where predicate: @escaping @Sendable (PeerEvent) -> Bool = { _ in true }
  ) async throws -> PeerEvent {
    let what = "EVENT \(kind) \(path ?? "(any path)")"
    let line = try await waitForLine(from: from, timeout: timeout, what) { line in
      guard let event = PeerEvent(line), event.kind == kind else { return false }
      return (path == nil || event.path == path) && predicate(event)
    }
    return PeerEvent(line)!
  }

  /// Ends the server: SIGTERM, then SIGKILL if it still runs after `grace`; returns once it
  /// has been reaped. Safe to call more than once.
  @discardableResult
  public func stop(grace: Duration = .seconds(5)) async -> PeerExitStatus {
    await Self.stop(process, grace: grace)
  }

  private static func kill(_ process: PeerProcess) async {
    _ = await stop(process, grace: .zero)
  }

  private static func stop(_ process: PeerProcess, grace: Duration) async -> PeerExitStatus {
    process.signal(grace == .zero ? SIGKILL : SIGTERM)
    if let status = try? await exit(of: process, timeout: grace == .zero ? .seconds(30) : grace) {
      return status
    }
    process.signal(SIGKILL)
    // SIGKILL cannot be caught; the kernel ends the process at once.
    return (try? await exit(of: process, timeout: .seconds(30))) ?? .signalled(SIGKILL)
  }

  private static func exit(of process: PeerProcess, timeout: Duration) async throws
    -> PeerExitStatus
  {
    try await process.wait(for: "the process to exit", timeout: timeout) { state in
      state.exit.map { .success($0) }
    }
  }

  /// Errors are made inside the state lock, where stderr is not read and the exit may not
  /// have been seen yet; fill both in.
  private static func completed(_ error: PeerServerError, from process: PeerProcess)
    -> PeerServerError
  {
    let stderr = process.stderr
    let exit = process.snapshot.exit
    switch error {
    case .exitedBeforeListening(let script, let status, let stdout, _):
      return .exitedBeforeListening(script: script, exit ?? status, stdout: stdout, stderr: stderr)
    case .badListeningLine(let script, let line, _):
      return .badListeningLine(script: script, line, stderr: stderr)
    case .exited(let what, let status, let stdout, _):
      return .exited(waitingFor: what, exit ?? status, stdout: stdout, stderr: stderr)
    case .timedOut, .noScript, .spawnFailed:
      return error
    }
  }
}

/// Runs `body` with `Tests/Python/<script>` started as a ``PeerServer``, and stops the server
/// afterwards, whether `body` returns or throws.
public func withPeerServer<T>(
  _ script: String, arguments: [String] = [],
  isolation: isolated (any Actor)? = #isolation,
  _ body: (PeerServer) async throws -> T
) async throws -> T {
  let server = try await PeerServer.start(script, arguments: arguments)
  do {
    let result = try await body(server)
    await server.stop()
    return result
  } catch {
    await server.stop()
    throw error
  }
}
