import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The `fleet-sim` executable built beside the test bundle (the embedded Fleet Engine
/// simulator as a server), run for one test and killed by PID afterwards.
final class SimulatorProcess: Sendable {
  let port: Int
  private let process: Process

  private init(port: Int, process: Process) {
    self.port = port
    self.process = process
  }

  struct Failed: Error, CustomStringConvertible {
    var description: String
  }

  /// Starts `fleet-sim <arguments>` and waits for its `listening on HOST:PORT` line.
  static func start(_ arguments: [String]) async throws -> SimulatorProcess {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("fleet-sim")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw Failed(description: "no fleet-sim at \(executable.path); `swift build` builds it")
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // The first line, read on a thread of its own (a blocking read).
    let line = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
      Thread.detachNewThread {
        var bytes: [UInt8] = []
        let handle = stdout.fileHandleForReading
        while let byte = try? handle.read(upToCount: 1), let first = byte.first, first != 10 {
          bytes.append(first)
        }
        continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
      }
    }
    guard line.hasPrefix("listening on "),
      let port = line.split(separator: ":").last.flatMap({ Int($0) })
    else {
      kill(process.processIdentifier, SIGKILL)
      throw Failed(description: "fleet-sim printed \"\(line)\" instead of listening on HOST:PORT")
    }
    return SimulatorProcess(port: port, process: process)
  }

  /// Kills it (by PID) and reaps it.
  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
