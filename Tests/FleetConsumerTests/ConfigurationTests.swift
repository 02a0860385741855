import FleetConsumer
import Testing

/// `TripService(configuration:)` refuses what cannot work, with the reason, before any call.
@Suite("TripService configuration checks")
struct ConfigurationTests {
  /// A loopback plaintext configuration with `change` applied to its options.
  private static func configuration(
    _ change: (inout TripService.Options) -> Void
  ) -> TripService.Configuration {
    var options = TripService.Options()
    change(&options)
    return .init(
      endpoint: .init(host: "127.0.0.1", port: 1), transportSecurity: .plaintext,
      providerID: "fleet-test", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
      options: options)
  }

  /// The message `TripService(configuration:)` throws, or nil when it accepts.
  private static func refusal(_ change: (inout TripService.Options) -> Void) -> String? {
    do {
      _ = try TripService(configuration: configuration(change))
      return nil
    } catch {
      return error.message
    }
  }

  @Test("fewer than one connection is refused; one or more are accepted")
  func connectionCount() {
    #expect(
      Self.refusal { $0.maxConnections = 0 } == "the service needs at least 1 connection, not 0")
    #expect(Self.refusal { $0.maxConnections = 1 } == nil)
    #expect(Self.refusal { $0.maxConnections = 16 } == nil)
  }

  @Test("a poll interval under 100 ms and a call timeout that is not positive are refused")
  func timing() {
    let poll = Self.refusal { $0.pollInterval = .milliseconds(99) }
    #expect(poll?.contains("at least 100 ms") == true, "\(poll ?? "accepted")")
    let timeout = Self.refusal { $0.callTimeout = .zero }
    #expect(timeout?.contains("must be positive") == true, "\(timeout ?? "accepted")")
  }

  @Test("keepalive is on by default (20 s, 10 s); an interval or timeout ≤ 0 is refused")
  func keepalive() throws {
    #expect(TripService.Options().keepalive == .standard)
    #expect(TripService.Keepalive.standard.interval == .seconds(20))
    #expect(TripService.Keepalive.standard.timeout == .seconds(10))
    #expect(throws: TripService.ConfigurationError.self) {
      try TripService.Keepalive(interval: .zero, timeout: .seconds(1))
    }
    #expect(throws: TripService.ConfigurationError.self) {
      try TripService.Keepalive(interval: .seconds(1), timeout: .milliseconds(-1))
    }
    let short = try TripService.Keepalive(interval: .seconds(1), timeout: .milliseconds(500))
    #expect(Self.refusal { $0.keepalive = short } == nil)
    #expect(Self.refusal { $0.keepalive = nil } == nil)
  }
}
