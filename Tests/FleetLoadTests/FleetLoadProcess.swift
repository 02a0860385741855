import Foundation
import PeerSupport

/// Runs the `fleet-load` executable built beside the test bundle, as a black box.
enum FleetLoadProcess {
  typealias Result = ToolProcess.Result

  /// Runs `fleet-load <arguments>` to its end (killed after `timeout`).
  static func run(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> Result {
    try await ToolProcess.run("fleet-load", arguments, timeout: timeout)
  }

  struct NoReport: Error, CustomStringConvertible {
    var description: String
  }

  /// The JSON report a `--format json` run printed.
  static func report(_ result: Result) throws -> [String: Any] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)),
      let report = object as? [String: Any]
    else { throw NoReport(description: "no JSON report: \(result)") }
    return report
  }
}
