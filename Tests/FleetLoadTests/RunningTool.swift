import Foundation
import PeerSupport

#if canImport(Glibc)
  import Glibc
#endif

/// One of the package's executables running in the background (fleet-sim serving, or
/// fleet-load to be interrupted), its output in files; stopped by its PID.
final class RunningTool: @unchecked Sendable {
  // @unchecked Sendable: `process` is only started, signalled and polled, which Foundation's
  // Process allows from any thread; everything else is a constant.
  let process: Process
  private let folder: URL

  struct Failed: Error, CustomStringConvertible {
    var description: String
  }

  /// Starts `<name> <arguments>`.
  init(_ name: String, _ arguments: [String]) throws {
    folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("fleet-load-tests-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    process = Process()
    process.executableURL = ToolProcess.executable(name)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let files = ["out", "err"].map { folder.appendingPathComponent($0) }
    for file in files { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
    process.standardOutput = try FileHandle(forWritingTo: files[0])
    process.standardError = try FileHandle(forWritingTo: files[1])
    try process.run()
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: folder)
  }

  var stdout: String { read("out") }
  var stderr: String { read("err") }
  var pid: Int32 { process.processIdentifier }

  /// The sockets the process holds now (its /proc/PID/fd entries that are sockets).
  var socketCount: Int {
    let folder = "/proc/\(pid)/fd"
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return fds.filter { fd in
      let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)")
      return target?.hasPrefix("socket:") == true
    }.count
  }

  private func read(_ file: String) -> String {
    (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? ""
  }

  /// Polls `condition` every 10 ms until it holds; fails after `timeout` or if the process ended.
  func waitUntil(
    _ what: String, timeout: Duration = .seconds(15), _ condition: () -> Bool
  ) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
      guard process.isRunning else {
        throw Failed(description: "ended before \(what)\n\(stdout)\n\(stderr)")
      }
      guard ContinuousClock.now < deadline else {
        throw Failed(description: "no \(what) within \(timeout)\n\(stdout)\n\(stderr)")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
  }

  /// Sends `signal` and waits for the exit; returns the exit status.
  func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(15)) async throws -> Int32 {
    if process.isRunning { kill(pid, signal) }
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
      guard ContinuousClock.now < deadline else {
        kill(pid, SIGKILL)
        throw Failed(description: "still running \(timeout) after signal \(signal)")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    return process.terminationStatus
  }
}

/// `fleet-sim` serving in the background, stopped by PID when the test is done.
struct SimulatorServer {
  let tool: RunningTool
  /// `127.0.0.1:<port>`, from its first line.
  let target: String
  var port: Int { Int(target.split(separator: ":").last ?? "") ?? 0 }

  static func start(_ arguments: [String] = []) async throws -> SimulatorServer {
    let tool = try RunningTool("fleet-sim", arguments)
    try await tool.waitUntil("a `listening on` line") { tool.stdout.contains("\n") }
    let first = tool.stdout.split(separator: "\n").first.map(String.init) ?? ""
    guard first.hasPrefix("listening on ") else {
      throw RunningTool.Failed(description: "fleet-sim said \(first)")
    }
    return SimulatorServer(tool: tool, target: String(first.dropFirst("listening on ".count)))
  }

  /// Stops it (SIGTERM) and returns its exit status.
  @discardableResult
  func stop() async throws -> Int32 { try await tool.stop() }
}
