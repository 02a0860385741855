import GRPCWire
import Testing

@testable import FleetConsumer

/// A lane prepares one call per method and token and lets every model following with that
/// token share it (``FollowLane/prepared(_:token:_:)``).
@Suite("A lane's prepared calls")
struct PreparedPollTests {
  private func lane() -> FollowLane {
    FollowLane(
      name: "prepared-poll-test", endpoint: TripService.Endpoint(host: "127.0.0.1", port: 1),
      options: ChannelOptions(), pollInterval: .seconds(1), deliver: { $0() })
  }

  @Test("the same token reuses the prepared call; another token prepares its own")
  func perToken() throws {
    let lane = lane()
    var made: [String] = []
    func prepared(_ token: String, path: String = "/maps.fleetengine.v1.TripService/GetTrip")
      throws -> PreparedCall
    {
      try lane.prepared(path, token: AccessToken(token)) { () throws(RPCError) in
        made.append("\(path.split(separator: "/").last!) \(token)")
        var metadata = Metadata()
        metadata.add("authorization", "Bearer \(token)")
        return try lane.channel.prepare(path: path, options: CallOptions(metadata: metadata))
      }
    }
    for _ in 0..<3 { _ = try prepared("server-token") }
    #expect(made == ["GetTrip server-token"], "one server token for every trip is prepared once")
    _ = try prepared("trip-token-1")
    _ = try prepared("trip-token-2")
    _ = try prepared("trip-token-2")
    #expect(made == ["GetTrip server-token", "GetTrip trip-token-1", "GetTrip trip-token-2"])
    // Another method has its own: the feed's stream next to the polls.
    let watch = "/fleetconsumer.v1.TripFeed/WatchTrip"
    _ = try prepared("trip-token-2", path: watch)
    _ = try prepared("trip-token-2", path: watch)
    _ = try prepared("trip-token-2")
    #expect(made.count == 4 && made.last == "WatchTrip trip-token-2")
  }

  @Test("a failed preparation is not kept: the next model with that token tries again")
  func failureNotKept() {
    let lane = lane()
    var attempts = 0
    for _ in 0..<2 {
      #expect(throws: RPCError.self) {
        _ = try lane.prepared("/p/M", token: AccessToken("t")) { () throws(RPCError) in
          attempts += 1
          throw RPCError(code: .invalidArgument, message: "bad metadata")
        }
      }
    }
    #expect(attempts == 2)
  }
}
