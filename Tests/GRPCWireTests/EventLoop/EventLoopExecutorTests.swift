import Testing

@testable import GRPCWire
import GRPCTestingProtos
import PeerSupport

/// The event loop as a `TaskExecutor`: calls made from a task that prefers the channel's loop
/// run and complete on that loop's thread, and server handlers run on the server's loop.
@Suite("Event loop as task executor", .timeLimit(.minutes(1)))
struct EventLoopExecutorTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall answers whether its handler ran on the server's loop thread
  /// (response payload: 1 byte, 1 for yes), and whose StreamingOutputCall is the tests' own
  /// (`registerStreamingOutput`).
  func makeServer() -> GRPCServer {
    let server = GRPCServer()
    let loop = server.core.loop
    server.register(unary: Service.unaryCall) { _, _ in
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = [loop.inEventLoop ? 1 : 0]
      response.payload = payload
      return response
    }
    server.registerStreamingOutput()
    return server
  }

  @Test("calls from a task preferring the channel's loop complete on the loop thread")
  func callsOnTheLoop() async throws {
    let server = makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let loop = channel.eventLoop
    let results = try await Task(executorPreference: loop) {
      var onLoop: [Bool] = []
      var handlersOnLoop: [Bool] = []
      for _ in 0..<50 {
        let response = try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
        onLoop.append(loop.inEventLoop)
        handlersOnLoop.append(response.message.payload?.body == [1])
      }
      var request = GRPCTesting.StreamingOutputCallRequest()
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = 64
      request.responseParameters = Array(repeating: parameters, count: 1_000)
      let streamed = try await channel.serverStreaming(Service.streamingOutputCall, request) {
        responses in
        var count = 0
        for try await _ in responses {
          count += 1
          onLoop.append(loop.inEventLoop)
        }
        return count
      }
      return (onLoop, handlersOnLoop, streamed)
    }.value
    #expect(results.0.allSatisfy { $0 }, "the task left the loop thread")
    #expect(results.1.allSatisfy { $0 }, "a server handler ran off the server's loop")
    #expect(results.2 == 1_000)
    // Closing from a task on the loop itself cannot join the loop's thread: it must not
    // deadlock or trap, and later calls fail UNAVAILABLE.
    await Task(executorPreference: loop) {
      channel.close()
      await #expect(throws: RPCError.self) {
        _ = try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
      }
    }.value
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("work and jobs queued from the loop run in order, in the same tick")
  func localQueueOrder() async throws {
    let loop = EventLoop(name: "order-test")
    defer { loop.shutdown() }
    let order = await withCheckedContinuation { (done: CheckedContinuation<[Int], Never>) in
      loop.execute {
        nonisolated(unsafe) var seen: [Int] = []
        for i in 0..<100 {
          loop.execute {
            seen.append(i)
            if i == 99 { done.resume(returning: seen) }
          }
        }
      }
    }
    #expect(order == Array(0..<100))
  }
}
