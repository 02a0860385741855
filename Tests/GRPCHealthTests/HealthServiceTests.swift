import GRPCServiceProtos
import GRPCTestingProtos
import GRPCWire
import Testing

@testable import GRPCHealth

/// The status store of ``HealthService``, and `Check` and `Watch` through our own client.
@Suite("HealthService", .timeLimit(.minutes(1)))
struct HealthServiceTests {
  typealias Health = GRPCHealthV1.Health
  typealias Wire = GRPCHealthV1.HealthCheckResponse.ServingStatus

  // MARK: The store

  @Test("\"\" (the whole server) starts SERVING; other services have no status")
  func initialStatuses() {
    let health = HealthService()
    #expect(health.status() == .serving)
    #expect(health.status(of: "maps.fleetengine.v1.TripService") == nil)
  }

  @Test("setStatus and clearStatus change what status(of:) reports")
  func setAndClear() {
    let health = HealthService()
    health.setStatus(.notServing, for: "a.Service")
    #expect(health.status(of: "a.Service") == .notServing)
    health.setStatus(.unknown, for: "a.Service")
    #expect(health.status(of: "a.Service") == .unknown)
    health.clearStatus(for: "a.Service")
    #expect(health.status(of: "a.Service") == nil)
  }

  @Test("updates: the status now (SERVICE_UNKNOWN without one), then each change, not repeats")
  func updatesSendEachChange() async {
    let health = HealthService()
    var updates = health.updates(of: "a.Service").makeAsyncIterator()
    #expect(await updates.next() == .serviceUnknown)
    health.setStatus(.serving, for: "a.Service")
    #expect(await updates.next() == .serving)
    health.setStatus(.serving, for: "a.Service")  // no change: nothing is sent
    health.setStatus(.notServing, for: "a.Service")
    #expect(await updates.next() == .notServing)
    health.clearStatus(for: "a.Service")
    #expect(await updates.next() == .serviceUnknown)
  }

  @Test("a watcher that reads late gets the newest status, not every one it missed")
  func slowWatcherGetsNewest() async {
    let health = HealthService()
    var updates = health.updates(of: "").makeAsyncIterator()
    health.setStatus(.notServing)
    health.setStatus(.unknown)
    health.setStatus(.notServing)
    #expect(await updates.next() == .notServing)
  }

  @Test("enterNotServing: every known service NOT_SERVING, watchers told, later changes ignored")
  func enterNotServing() async {
    let health = HealthService()
    health.setStatus(.serving, for: "a.Service")
    var updates = health.updates(of: "").makeAsyncIterator()
    #expect(await updates.next() == .serving)
    health.enterNotServing()
    #expect(await updates.next() == .notServing)
    #expect(health.status() == .notServing && health.status(of: "a.Service") == .notServing)
    health.setStatus(.serving)
    health.clearStatus(for: "a.Service")
    #expect(health.status() == .notServing && health.status(of: "a.Service") == .notServing)
  }

  @Test("a cancelled watcher is forgotten")
  func cancelledWatcherIsRemoved() async {
    let health = HealthService()
    let updates = health.updates(of: "a.Service")
    #expect(health.watcherCount == 1)
    let reader = Task { for await _ in updates {} }
    reader.cancel()
    await reader.value
    #expect(health.watcherCount == 0)
  }

  // MARK: Over the wire

  /// A server with health and grpc.testing's EmptyCall, every service SERVING.
  func withServer(_ body: (HealthService, GRPCChannel) async throws -> Void) async throws {
    let server = GRPCServer()
    server.register(unary: GRPCTesting.TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    let health = HealthService()
    health.register(on: server)
    health.setStatus(.serving, forServicesOf: server)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    do {
      try await body(health, channel)
    } catch {
      await server.shutdown(gracePeriod: .zero)
      throw error
    }
    await server.shutdown(gracePeriod: .zero)
  }

  func request(_ service: String) -> GRPCHealthV1.HealthCheckRequest {
    var request = GRPCHealthV1.HealthCheckRequest()
    request.service = service
    return request
  }

  @Test("Check: SERVING for \"\" and every registered service, NOT_FOUND for another")
  func check() async throws {
    try await withServer { health, channel in
      for service in ["", "grpc.testing.TestService", "grpc.health.v1.Health"] {
        let answer = try await channel.unary(Health.check, request(service)).message
        #expect(answer.status == .serving, "\(service)")
      }
      let error = try await #require(throws: RPCError.self) {
        _ = try await channel.unary(Health.check, request("no.such.Service"))
      }
      #expect(error.code == .notFound && error.message.contains("no.such.Service"), "\(error)")
      health.enterNotServing()
      #expect(try await channel.unary(Health.check, request("")).message.status == .notServing)
    }
  }

  @Test("Watch of an unknown service: SERVICE_UNKNOWN, the stream stays open, then each change")
  func watchUnknownThenChanges() async throws {
    try await withServer { health, channel in
      let seen = try await channel.serverStreaming(Health.watch, request("fleet.Later")) {
        responses in
        var seen: [Wire] = []
        for try await response in responses {
          seen.append(response.status)
          switch seen.count {
          case 1: health.setStatus(.serving, for: "fleet.Later")
          case 2: health.setStatus(.notServing, for: "fleet.Later")
          default: return seen
          }
        }
        return seen
      }
      #expect(seen == [.serviceUnknown, .serving, .notServing])
    }
  }
}
