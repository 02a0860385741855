import PeerSupport

/// Runs the `fleet-load` executable built beside the test bundle, as a black box.
enum FleetLoadProcess {
  typealias Result = ToolProcess.Result

  /// Runs `fleet-load <arguments>` to its end (killed after `timeout`).
  static func run(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> Result {
    try await ToolProcess.run("fleet-load", arguments, timeout: timeout)
  }
}
