import Logging
import ServiceLifecycle
import Testing

@testable import GRPCWire
import GRPCTestingProtos

/// The server and the channel as services of a swift-service-lifecycle `ServiceGroup`.
@Suite("ServiceLifecycle", .timeLimit(.minutes(1)))
struct ServiceGroupTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall takes 300 ms.
  func slowServer() async throws -> (GRPCServer, Int) {
    let server = GRPCServer()
    server.register(unary: Service.unaryCall) { _, _ in
      try await Task.sleep(for: .milliseconds(300))
      return GRPCTesting.SimpleResponse()
    }
    server.register(unary: Service.emptyCall) { _, _ in GRPCTesting.Empty() }
    return (server, try await server.start())
  }

  @Test("Graceful shutdown of the group: the call in flight finishes OK, then both services end")
  func gracefulShutdown() async throws {
    let (server, port) = try await slowServer()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let group = ServiceGroup(services: [server, channel], logger: Logger.disabled)
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
      async let slow = channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
      try await Task.sleep(for: .milliseconds(50))
      await group.triggerGracefulShutdown()
      _ = try await slow
      try await tasks.waitForAll()
    }
    #expect(channel.connectivityState == .shutdown)
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .unavailable)
  }

  @Test("Cancelling the group's task ends the services at once, the call in flight CANCELLED")
  func cancellation() async throws {
    let (server, port) = try await slowServer()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let group = ServiceGroup(services: [server, channel], logger: Logger.disabled)
    let running = Task { try await group.run() }
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    let slow = Task { try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest()) }
    try await Task.sleep(for: .milliseconds(50))
    running.cancel()
    let error = await #expect(throws: RPCError.self) { _ = try await slow.value }
    #expect(error?.code == .cancelled || error?.code == .unavailable, "\(String(describing: error))")
    _ = await running.result
    #expect(channel.connectivityState == .shutdown)
  }

  @Test("A server that was never started refuses to run")
  func notStarted() async throws {
    let error = try await #require(throws: RPCError.self) { try await GRPCServer().run() }
    #expect(error.code == .failedPrecondition)
  }
}
