import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A server running for one test on 127.0.0.1 with a port the OS picked, that says where it
/// listens on its first line: a script of `Tests/Python` (interop_server.py, raw_h2_server.py:
/// `LISTENING <port>`) or one of the package's executables (`interop-server` likewise,
/// `fleet-sim`: `listening on HOST:PORT`), run as a ``ChildProcess``.
///
/// `start` returns once the port was announced; the lines printed after that (a script's
/// EVENT lines) are in `lines` and can be awaited with `waitForLine` / `waitForEvent`. `stop`
/// ends it by PID (SIGTERM, then SIGKILL after a grace period) and reaps it; prefer
/// ``withPeerServer(_:arguments:isolation:_:)``, which always stops it. A server dropped
/// without `stop` is killed with SIGKILL.
///
/// Any number may run at once (each test its own): nothing is shared between instances.
/// A server that cannot start throws ``ChildProcessError`` (or ``PythonPeerError`` when there
/// is no interpreter), so the calling test fails rather than skips.
public final class PeerServer: Sendable {
  /// What runs: the script's file name in `Tests/Python`, or the executable's name.
  public let name: String
  /// The TCP port it listens on, on `127.0.0.1` unless `--host` said otherwise.
  public let port: Int
  /// The process, with everything it printed (the announcement too).
  public let process: ChildProcess
  /// Index in `process.lines` of the first line after the announcement.
  private let firstLine: Int

  private init(process: ChildProcess, port: Int, firstLine: Int) {
    self.name = process.name
    self.port = port
    self.process = process
    self.firstLine = firstLine
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
    let scriptURL = try PythonPeer.existingScript(script)
    var environment = ProcessInfo.processInfo.environment
    environment["PYTHONUNBUFFERED"] = "1"
    let process = try ChildProcess(
      python, [scriptURL.path] + arguments, name: script, environment: environment)
    return try await listening(process, .listening, timeout: startTimeout)
  }

  /// Starts the package's executable `<name> <arguments…>` (``ToolProcess/start(_:_:stderr:)``)
  /// and waits until it has printed `announcement`, as ``start(_:arguments:startTimeout:)``.
  public static func start(
    tool name: String, arguments: [String] = [], announcement: PortAnnouncement = .listening,
    startTimeout: Duration = .seconds(30)
  ) async throws -> PeerServer {
    try await listening(
      ToolProcess.start(name, arguments), announcement, timeout: startTimeout)
  }

  /// Starts the package's `fleet-sim <arguments…>` (the simulator as a server) and waits
  /// until it has printed `listening on HOST:PORT`.
  public static func startFleetSim(
    _ arguments: [String] = [], startTimeout: Duration = .seconds(15)
  ) async throws -> PeerServer {
    try await start(
      tool: "fleet-sim", arguments: arguments, announcement: .listeningOn,
      startTimeout: startTimeout)
  }

  private static func listening(
    _ process: ChildProcess, _ announcement: PortAnnouncement, timeout: Duration
  ) async throws -> PeerServer {
    do {
      let (port, next) = try await process.waitForPort(announcement, timeout: timeout)
      return PeerServer(process: process, port: port, firstLine: next)
    } catch {
      await process.stop(grace: .zero)
      throw error
    }
  }

  /// Its process ID (its own process group, too).
  public var pid: pid_t { process.pid }

  /// Every line printed after the announcement, so far.
  public var lines: [String] { Array(process.lines.dropFirst(firstLine)) }

  /// The EVENT lines printed so far, parsed.
  public var events: [PeerEvent] { lines.compactMap(PeerEvent.init) }

  /// What it has written to stderr so far.
  public var stderr: String { process.stderr }

  /// How it ended, or nil while it runs.
  public var exitStatus: ChildProcess.Exit? { process.exitStatus }

  /// Waits for the first line at index `from` or later of `lines` that satisfies `predicate`;
  /// see ``ChildProcess/waitForLine(from:timeout:_:where:)``.
  public func waitForLine(
    from: Int = 0, timeout: Duration = .seconds(10), _ what: String = "a matching line",
    where predicate: @escaping @Sendable (String) -> Bool
  ) async throws -> String {
    try await process.waitForLine(
      from: firstLine + max(0, from), timeout: timeout, what, where: predicate)
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

  /// Waits for `count` EVENT lines of `kind` (and `path`, when given) that satisfy
  /// `predicate`, and returns the first `count` of them.
  public func waitForEvents(
    _ kind: String, count: Int, path: String? = nil, timeout: Duration = .seconds(10),
    where predicate: @escaping @Sendable (PeerEvent) -> Bool = { _ in true }
  ) async throws -> [PeerEvent] {
    let what = "EVENT \(kind) \(path ?? "(any path)")"
    let lines = try await process.waitForLines(count, from: firstLine, timeout: timeout, what) {
      line in
      guard let event = PeerEvent(line), event.kind == kind else { return false }
      return (path == nil || event.path == path) && predicate(event)
    }
    return lines.compactMap(PeerEvent.init)
  }

  /// Sends `signal` by PID unless it has exited; see ``ChildProcess/signal(_:)``.
  @discardableResult
  public func signal(_ signal: Int32) -> Bool { process.signal(signal) }

  /// Kills it (SIGKILL) and returns at once, for a `defer`.
  public func kill() { process.kill() }

  /// Waits for it to end by itself; see ``ChildProcess/waitForExit(timeout:)``.
  public func waitForExit(timeout: Duration = .seconds(10)) async throws -> ChildProcess.Exit {
    try await process.waitForExit(timeout: timeout)
  }

  /// Sends `signal` and waits for it to end by itself; see
  /// ``ChildProcess/terminate(_:timeout:)``.
  @discardableResult
  public func terminate(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async throws
    -> ChildProcess.Exit
  {
    try await process.terminate(signal, timeout: timeout)
  }

  /// Ends the server: `signal` (SIGTERM), then SIGKILL if it still runs after `grace`;
  /// returns once it has been reaped. Safe to call more than once.
  @discardableResult
  public func stop(_ signal: Int32 = SIGTERM, grace: Duration = .seconds(5)) async
    -> ChildProcess.Exit
  {
    await process.stop(signal, grace: grace)
  }
}

/// Runs `body` with `Tests/Python/<script>` started as a ``PeerServer``, and stops the server
/// afterwards, whether `body` returns or throws.
public func withPeerServer<T>(
  _ script: String, arguments: [String] = [],
  isolation: isolated (any Actor)? = #isolation,
  _ body: (PeerServer) async throws -> T
) async throws -> T {
  try await withPeerServer(PeerServer.start(script, arguments: arguments), body)
}

/// Runs `body` with `server`, and stops it afterwards (``PeerServer/stop(_:grace:)`` with
/// `grace`), whether `body` returns or throws; its ``PeerServer/exitStatus`` then says how it
/// ended.
public func withPeerServer<T>(
  _ server: PeerServer, grace: Duration = .seconds(5),
  isolation: isolated (any Actor)? = #isolation,
  _ body: (PeerServer) async throws -> T
) async throws -> T {
  try await afterwards {
    try await body(server)
  } then: {
    await server.stop(grace: grace)
  }
}
