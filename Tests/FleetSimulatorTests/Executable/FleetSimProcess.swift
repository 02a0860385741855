import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The `fleet-sim` executable built beside the test bundle, run as a black box.
///
/// Output goes to files, not pipes, so a chatty process never blocks; `start` waits until the
/// first line has arrived.
final class FleetSimProcess: @unchecked Sendable {
  // @unchecked Sendable: `process` is only started, signalled and polled, which Foundation's
  // Process allows from any thread; the URLs are constants.
  let process: Process
  let stdoutURL: URL
  let stderrURL: URL
  private let directory: URL

  struct Failed: Error, CustomStringConvertible {
    var description: String
  }

  static var executable: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("fleet-sim")
  }

  /// util-linux's prlimit, which sets a limit and then execs the command: same PID.
  static let prlimit = URL(fileURLWithPath: "/usr/bin/prlimit")

  private init(arguments: [String], fileLimit: Int? = nil) throws {
    guard FileManager.default.isExecutableFile(atPath: Self.executable.path) else {
      throw Failed(description: "no fleet-sim at \(Self.executable.path); `swift build` builds it")
    }
    if fileLimit != nil, !FileManager.default.isExecutableFile(atPath: Self.prlimit.path) {
      throw Failed(description: "no \(Self.prlimit.path) (util-linux) to lower the fd limit")
    }
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("fleet-sim-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    stdoutURL = directory.appendingPathComponent("stdout")
    stderrURL = directory.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
    process = Process()
    if let fileLimit {
      process.executableURL = Self.prlimit
      process.arguments =
        ["--nofile=\(fileLimit):\(fileLimit)", "--", Self.executable.path] + arguments
    } else {
      process.executableURL = Self.executable
      process.arguments = arguments
    }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
    process.standardError = try FileHandle(forWritingTo: stderrURL)
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: directory)
  }

  /// Starts `fleet-sim <arguments>` and waits for its first line of output (or its exit).
  ///
  /// `fileLimit`: run it with RLIMIT_NOFILE (soft and hard) lowered to this many descriptors.
  static func start(
    _ arguments: [String], fileLimit: Int? = nil, timeout: Duration = .seconds(15)
  ) async throws -> FleetSimProcess {
    let sim = try FleetSimProcess(arguments: arguments, fileLimit: fileLimit)
    try sim.process.run()
    let deadline = ContinuousClock.now + timeout
    while sim.lines.isEmpty && sim.process.isRunning {
      guard ContinuousClock.now < deadline else {
        kill(sim.process.processIdentifier, SIGKILL)
        throw Failed(description: "fleet-sim printed nothing in \(timeout); stderr: \(sim.stderr)")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    return sim
  }

  /// Runs `fleet-sim <arguments>` to its end (it must end by itself).
  static func run(_ arguments: [String], timeout: Duration = .seconds(15)) async throws
    -> (status: Int32, stdout: String, stderr: String)
  {
    let sim = try FleetSimProcess(arguments: arguments)
    try sim.process.run()
    let status = try await sim.waitForExit(timeout: timeout)
    return (status, sim.stdout, sim.stderr)
  }

  /// Its process ID (prlimit execs fleet-sim, so with a `fileLimit` too).
  var pid: pid_t { process.processIdentifier }

  var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
  var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

  /// The complete lines printed so far.
  var lines: [String] {
    let text = stdout
    guard let end = text.lastIndex(of: "\n") else { return [] }
    return text[..<end].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }

  /// The port of the first line, `listening on 127.0.0.1:PORT`.
  var port: Int? {
    lines.first.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
  }

  /// Sends `signal` and waits for the exit status.
  func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async throws -> Int32 {
    kill(process.processIdentifier, signal)
    return try await waitForExit(timeout: timeout)
  }

  /// Waits for the exit status (after a signal someone else sent); SIGKILL after `timeout`.
  func waitForExit(timeout: Duration) async throws -> Int32 {
    let deadline = ContinuousClock.now + timeout
    // Polled, not waited on: waitUntilExit would block a cooperative thread.
    while process.isRunning {
      guard ContinuousClock.now < deadline else {
        kill(process.processIdentifier, SIGKILL)
        throw Failed(description: "fleet-sim still ran after \(timeout); stderr: \(stderr)")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    return process.terminationStatus
  }
}
