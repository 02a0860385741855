import FleetConsumer
import Foundation
import Testing

/// A server's own answer keeps its backoff even when the channel gets new connections while
/// the model waits: connectivity-aware retry (issue 34) moves up only retries after network
/// failures.
@Suite("A server's RetryInfo against connectivity-aware retry", .timeLimit(.minutes(1)))
struct ServerRetryInfoTests {
  @Test("a server answering UNAVAILABLE with RetryInfo 5 s is not polled again before 5 s")
  func unavailableWithRetryInfo() async throws {
    // Every connection is sent GOAWAY after about a second, and a second model polls twice a
    // second on the same channel: new connections become ready throughout the 5 s.
    let engine = try await FakeFleetEngine.start(maxConnectionAge: .seconds(1))
    defer { Task { await engine.stop() } }
    let told = FakeScript.tripName("retry-info")
    let other = FakeScript.tripName("busy")
    try engine.add([
      told: [
        .trip(["tripStatus": "NEW"]), .error("UNAVAILABLE", "overloaded", retryDelayMs: 5000),
        .trip(["tripStatus": "COMPLETE"]),
      ],
      other: [.trip(["tripStatus": "NEW"])],
    ])
    let service = try FleetTest.service(engine, pollInterval: .milliseconds(500))
    defer { service.shutdown() }
    let busy = try service.tripModel(forTripName: other)
    let busySubscriber = RecordingSubscriber()
    busy.register(busySubscriber)
    let model = try service.tripModel(forTripName: told)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)

    let events = try await subscriber.wait("COMPLETE", timeout: .seconds(30)) {
      $0.contains(.stateChanged(.inactive))
    }
    let error = try #require(events.compactMap(\.error).first)
    #expect(error.code == .unavailable)
    #expect(error.isFromServer)
    #expect(error.retryDelay == .seconds(5))

    let requests = try await engine.waitForRequests(3, for: told)
    #expect(requests.count == 3, "\(requests)")
    #expect(requests[1].answer == "UNAVAILABLE")
    let failed = try #require(requests[1].arrivedMs)
    let retried = try #require(requests[2].arrivedMs)
    print("[retry info] polled again \(retried - failed) ms after the UNAVAILABLE")
    #expect(retried - failed >= 5000)
    // The wait was not free of ready connections: it is the server's answer that held it.
    let connected = engine.connectionTimes.filter { $0 > failed && $0 < retried }
    #expect(!connected.isEmpty, "no connection was made while the model waited")
  }
}
