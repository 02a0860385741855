import GRPCWire
import Testing

@testable import FleetConsumer

/// A lane prepares one `GetTrip` call per token and lets every model polling with that token
/// share it (``FollowLane/preparedPoll(token:_:)``).
@Suite("A lane's prepared poll")
struct PreparedPollTests {
  private func lane() -> FollowLane {
    FollowLane(
      name: "prepared-poll-test", endpoint: TripService.Endpoint(host: "127.0.0.1", port: 1),
      options: ChannelOptions(), deliver: { $0() })
  }

  @Test("the same token reuses the prepared call; another token prepares its own")
  func perToken() throws {
    let lane = lane()
    var made: [String] = []
    func prepared(_ token: String) throws -> PreparedCall {
      try lane.preparedPoll(token: AccessToken(token)) { () throws(RPCError) in
        made.append(token)
        var metadata = Metadata()
        metadata.add("authorization", "Bearer \(token)")
        return try lane.channel.prepare(
          path: "/maps.fleetengine.v1.TripService/GetTrip",
          options: CallOptions(metadata: metadata))
      }
    }
    for _ in 0..<3 { _ = try prepared("server-token") }
    #expect(made == ["server-token"], "one server token for every trip is prepared once")
    _ = try prepared("trip-token-1")
    _ = try prepared("trip-token-2")
    _ = try prepared("trip-token-2")
    #expect(made == ["server-token", "trip-token-1", "trip-token-2"])
  }

  @Test("a failed preparation is not kept: the next model with that token tries again")
  func failureNotKept() {
    let lane = lane()
    var attempts = 0
    for _ in 0..<2 {
      #expect(throws: RPCError.self) {
        _ = try lane.preparedPoll(token: AccessToken("t")) { () throws(RPCError) in
          attempts += 1
          throw RPCError(code: .invalidArgument, message: "bad metadata")
        }
      }
    }
    #expect(attempts == 2)
  }
}
