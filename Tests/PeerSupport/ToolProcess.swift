import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs one of this package's executables (built beside the test bundle) as a black box, to
/// its end, and returns what it printed.
public enum ToolProcess {
  /// How the program ended and what it printed.
  public struct Result: CustomStringConvertible, Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// Standard output's lines.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Each stdout line parsed as a JSON object (fails the decode if one is not).
    public func objects() throws -> [[String: Any]] {
      try lines.map { line in
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw NotAnObject(line: line) }
        return object
      }
    }

    public var description: String {
      "exit status \(status)\n--- stdout ---\n\(stdout)--- stderr ---\n\(stderr)"
    }
  }

  public struct NotAnObject: Error, CustomStringConvertible {
    public var line: String
    public var description: String { "not a JSON object: \(line)" }
  }

  public struct Missing: Error, CustomStringConvertible {
    public var path: String
    public var description: String { "no executable at \(path); `swift build` builds it" }
  }

  public struct TimedOut: Error, CustomStringConvertible {
    public var command: [String]
    public var description: String { "\(command) still ran after its time limit" }
  }

  /// The executable `name` beside the running test bundle.
  public static func executable(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent(name)
  }

  /// Runs `<name> <arguments>` with no standard input and waits for it to end; it is killed
  /// and ``TimedOut`` thrown after `timeout`. Output goes through files, so a chatty program
  /// can never block on a full pipe.
  public static func run(
    _ name: String, _ arguments: [String], timeout: Duration = .seconds(30)
  ) async throws -> Result {
    let executable = executable(name)
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw Missing(path: executable.path)
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(name)-\(UUID().uuidString)")
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
    // Polled, not slept on: these programs usually end within a second.
    while process.isRunning {
      if ContinuousClock.now > deadline {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw TimedOut(command: [name] + arguments)
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
