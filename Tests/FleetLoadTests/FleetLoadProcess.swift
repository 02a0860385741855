import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs the `fleet-load` executable built beside the test bundle, as a black box.
enum FleetLoadProcess {
  struct Result: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String {
      "exit status \(status)\n--- stdout ---\n\(stdout)--- stderr ---\n\(stderr)"
    }
  }

  struct Missing: Error, CustomStringConvertible {
    var path: String
    var description: String { "no fleet-load at \(path); `swift build` builds it" }
  }

  struct TimedOut: Error, CustomStringConvertible {
    var arguments: [String]
    var description: String { "fleet-load \(arguments) still ran after its time limit" }
  }

  static var executable: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("fleet-load")
  }

  /// Runs `fleet-load <arguments>` to its end (killed after `timeout`).
  static func run(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> Result {
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw Missing(path: executable.path)
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("fleet-load-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let stdoutURL = directory.appendingPathComponent("stdout")
    let stderrURL = directory.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
    let stdout = try FileHandle(forWritingTo: stdoutURL)
    let stderr = try FileHandle(forWritingTo: stderrURL)
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let deadline = ContinuousClock.now + timeout
    // Polled, not slept on: the process usually ends within a second.
    while process.isRunning {
      if ContinuousClock.now > deadline {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw TimedOut(arguments: arguments)
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    try stdout.close()
    try stderr.close()
    return Result(
      status: process.terminationStatus,
      stdout: String(decoding: try Data(contentsOf: stdoutURL), as: UTF8.self),
      stderr: String(decoding: try Data(contentsOf: stderrURL), as: UTF8.self))
  }
}
