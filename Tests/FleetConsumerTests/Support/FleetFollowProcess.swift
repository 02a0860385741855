import PeerSupport

/// Runs the `fleet-follow` executable built beside the test bundle, as a black box.
enum FleetFollowProcess {
  typealias Result = ToolProcess.Result

  /// Runs `fleet-follow <arguments>` to its end (killed after `timeout`).
  static func run(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> Result {
    try await ToolProcess.run("fleet-follow", arguments, timeout: timeout)
  }
}

extension ToolProcess.Result {
  /// The `event` of every JSON line fleet-follow printed.
  func eventNames() throws -> [String] {
    try objects().map { $0["event"] as? String ?? "?" }
  }
}
