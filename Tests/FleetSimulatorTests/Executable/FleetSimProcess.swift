import Foundation
import PeerSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The `fleet-sim` executable built beside the test bundle, run as a black box on
/// ``ChildProcess``: its first line, its flags, its exit.
enum FleetSimProcess {
  /// util-linux's prlimit, which sets a limit and then execs the command: same PID.
  static let prlimit = URL(fileURLWithPath: "/usr/bin/prlimit")

  /// Starts `fleet-sim <arguments>` and waits for its first line of output (or its end: then
  /// ``ChildProcess/port`` is nil). It is killed when that takes longer than `timeout`.
  ///
  /// `fileLimit`: run it with RLIMIT_NOFILE (soft and hard) lowered to this many descriptors.
  static func start(
    _ arguments: [String], fileLimit: Int? = nil, timeout: Duration = .seconds(15)
  ) async throws -> ChildProcess {
    let sim: ChildProcess
    if let fileLimit {
      let executable = try ToolProcess.builtExecutable("fleet-sim").path
      guard FileManager.default.isExecutableFile(atPath: prlimit.path) else {
        throw ChildProcessError.notFound(
          prlimit.path, hint: "util-linux's prlimit lowers the fd limit")
      }
      sim = try ChildProcess(
        prlimit, ["--nofile=\(fileLimit):\(fileLimit)", "--", executable] + arguments,
        name: "fleet-sim")
    } else {
      sim = try ToolProcess.start("fleet-sim", arguments)
    }
    do {
      _ = try await sim.waitForLine(timeout: timeout, "its first line") { _ in true }
    } catch ChildProcessError.exited {
      // It ended without a line: the test sees that in `port` and `exitStatus`.
    } catch {
      sim.kill()
      throw error
    }
    return sim
  }

  /// Runs `fleet-sim <arguments>` to its end (it must end by itself).
  static func run(_ arguments: [String], timeout: Duration = .seconds(15)) async throws
    -> ToolProcess.Result
  {
    try await ToolProcess.run("fleet-sim", arguments, timeout: timeout)
  }
}

extension ChildProcess {
  /// fleet-sim's port, from its first line `listening on 127.0.0.1:PORT`.
  var port: Int? {
    lines.first.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
  }
}
