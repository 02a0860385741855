import FleetConsumer
import Foundation
import PeerSupport

/// A follower of one trip in a scenario test, watched the same way whatever it is:
/// `fleet-follow` as a process (its JSON lines), or a model with a recording subscriber (its
/// events).
enum ScenarioFollower: Sendable {
  case tool(String, streams: Bool, ChildProcess)
  case model(String, streams: Bool, TripModel, RecordingSubscriber)

  /// A failure a follower reported: when, where in its output, and what it said.
  struct Failure: Sendable, CustomStringConvertible {
    var status: String
    var category: String
    var message: String
    var mark: Int
    var at: ContinuousClock.Instant

    var description: String { "\(status) (\(category)): \(message)" }
  }

  /// A model of `service` following trip `trip`, with a subscriber that records its events.
  static func model(
    _ name: String, streams: Bool, _ service: TripService, trip: String
  ) throws -> ScenarioFollower {
    let model = try service.tripModel(forTripName: trip)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    return .model(name, streams: streams, model, subscriber)
  }

  var name: String {
    switch self {
    case .tool(let name, _, _), .model(let name, _, _, _): name
    }
  }

  /// Whether it follows through the feed.
  var streams: Bool {
    switch self {
    case .tool(_, let streams, _), .model(_, let streams, _, _): streams
    }
  }

  /// How much it has reported so far: lines printed, or events received.
  var mark: Int {
    switch self {
    case .tool(_, _, let tool): tool.lines.count
    case .model(_, _, _, let subscriber): subscriber.events.count
    }
  }

  /// Waits until it has reported the vehicle driving to the pickup.
  func waitUntilMoving(until deadline: ContinuousClock.Instant) async throws {
    switch self {
    case .tool(_, _, let tool):
      _ = try await tool.waitForLine(
        timeout: ContinuousClock.now.duration(to: deadline), "ENROUTE_TO_PICKUP"
      ) {
        $0.contains(#""status":"ENROUTE_TO_PICKUP""#)
      }
    case .model(let name, _, _, let subscriber):
      try await subscriber.wait(
        "\(name): ENROUTE_TO_PICKUP", timeout: ContinuousClock.now.duration(to: deadline)
      ) {
        $0.contains(.tripStatus(.enrouteToPickup))
      }
    }
  }

  /// Waits until `deadline` for the first failure reported at `mark` or later.
  func waitForFailure(from mark: Int, until deadline: ContinuousClock.Instant) async throws
    -> Failure
  {
    switch self {
    case .tool(_, _, let tool):
      let line = try await tool.waitForLine(
        from: mark, timeout: ContinuousClock.now.duration(to: deadline), "an error line"
      ) { $0.contains(#""event":"error""#) }
      let at = ContinuousClock.now
      let object =
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
      return Failure(
        status: object["status"] as? String ?? "?", category: object["category"] as? String ?? "?",
        message: object["message"] as? String ?? "?",
        mark: tool.lines[mark...].firstIndex(of: line) ?? mark, at: at)
    case .model(let name, _, _, let subscriber):
      let events = try await subscriber.wait(
        "\(name): a failure", timeout: ContinuousClock.now.duration(to: deadline)
      ) { $0.dropFirst(mark).contains { $0.error != nil } }
      let at = ContinuousClock.now
      let index = events.indices.dropFirst(mark).first { events[$0].error != nil }!
      let error = events[index].error!
      let category =
        switch error.category {
        case .serverOrNetwork: "serverOrNetwork"
        case .client: "client"
        case .other: "other"
        }
      return Failure(
        status: error.code.name, category: category, message: error.message, mark: index, at: at)
    }
  }

  /// Waits until `deadline` for a trip update reported at `mark` or later; returns when it
  /// came.
  func waitForUpdate(from mark: Int, until deadline: ContinuousClock.Instant) async throws
    -> ContinuousClock.Instant
  {
    switch self {
    case .tool(_, _, let tool):
      _ = try await tool.waitForLine(
        from: mark, timeout: ContinuousClock.now.duration(to: deadline), "a trip line"
      ) {
        $0.contains(#""event":"trip""#)
      }
    case .model(let name, _, _, let subscriber):
      try await subscriber.wait(
        "\(name): an update", timeout: ContinuousClock.now.duration(to: deadline)
      ) {
        $0.dropFirst(mark).contains(where: \.isTripUpdate)
      }
    }
    return .now
  }

  /// The failures it reported from mark `from` up to mark `to`, as `STATUS: message`.
  func failures(from: Int, to: Int) -> [String] {
    switch self {
    case .tool(_, _, let tool):
      tool.lines.prefix(to).dropFirst(from).compactMap { line in
        guard line.contains(#""event":"error""#),
          let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { return nil }
        return "\(object["status"] ?? "?"): \(object["message"] ?? "?")"
      }
    case .model(_, _, _, let subscriber):
      subscriber.events.prefix(to).dropFirst(from).compactMap(\.error).map {
        "\($0.code.name): \($0.message)"
      }
    }
  }

  /// The trip updates it reported from mark `from` up to mark `to`.
  func updates(from: Int, to: Int) -> Int {
    switch self {
    case .tool(_, _, let tool):
      tool.lines.prefix(to).dropFirst(from).filter { $0.contains(#""event":"trip""#) }.count
    case .model(_, _, _, let subscriber):
      subscriber.events.prefix(to).dropFirst(from).filter(\.isTripUpdate).count
    }
  }
}

extension TripModelEvent {
  fileprivate var isTripUpdate: Bool {
    if case .tripUpdated = self { return true }
    return false
  }
}
