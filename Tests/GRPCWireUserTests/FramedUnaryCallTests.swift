import FleetSync
import GRPCTestingProtos
import GRPCWire
import Testing

/// ``GRPCChannel/unary(path:framedRequest:deserializer:options:)`` as a user calls it: a
/// request framed once and sent as it is by every call, from a task.
@Suite("Unary calls of a request framed once", .timeLimit(.minutes(1)))
struct FramedUnaryCallTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall answers `response_size` bytes of payload and counts the calls
  /// it was asked (`asked`).
  static func makeServer(_ asked: PosixMutex<Int>) -> GRPCServer {
    let server = GRPCServer()
    server.register(unary: Service.unaryCall) { request, _ in
      asked.withLock { $0 += 1 }
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = [UInt8](repeating: 7, count: Int(request.responseSize))
      response.payload = payload
      return response
    }
    return server
  }

  @Test("one framed request sent by three calls is answered as it says, each time, gzip too")
  func framedOnceAnsweredEachTime() async throws {
    let asked = PosixMutex(0)
    let server = Self.makeServer(asked)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 13))
    for _ in 0..<3 {
      let response = try await channel.unary(
        path: Service.unaryCall.path, framedRequest: framed,
        deserializer: ProtoDeserializer<GRPCTesting.SimpleResponse>(),
        options: CallOptions(timeout: .seconds(5)))
      #expect(response.message.payload?.body == [UInt8](repeating: 7, count: 13))
    }
    // Framed compressed, with the compression named in the options: the server inflates it.
    let compressed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 5), compress: true)
    #expect(compressed[0] == 1)
    let response = try await channel.unary(
      path: Service.unaryCall.path, framedRequest: compressed,
      deserializer: ProtoDeserializer<GRPCTesting.SimpleResponse>(),
      options: CallOptions(timeout: .seconds(5), compression: .gzip))
    #expect(response.message.payload?.body.count == 5)
    #expect(asked.withLock { $0 } == 4)
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a framed request that is not one message fails INTERNAL at its start; nothing is sent")
  func malformedFramedRequest() async throws {
    let asked = PosixMutex(0)
    let server = Self.makeServer(asked)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let good = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 3))
    let compressed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 3), compress: true)
    let bad: [(String, [UInt8])] = [
      ("shorter than the prefix", [0, 0, 0]),
      ("a prefix saying one byte more", [0, 0, 0, 0, UInt8(good.count - 5 + 1)] + good[5...]),
      ("two messages", good + good),
      ("flag 2", [2] + good[1...]),
      ("compressed, no compression in the options", compressed),
    ]
    for (why, framed) in bad {
      let error = await #expect(throws: RPCError.self, "\(why)") {
        _ = try await channel.unary(
          path: Service.unaryCall.path, framedRequest: framed,
          deserializer: ProtoDeserializer<GRPCTesting.SimpleResponse>(),
          options: CallOptions(timeout: .seconds(5)))
      }
      #expect(error?.code == .internalError, "\(why): \(String(describing: error))")
      #expect(error?.message.contains("framed request") == true, "\(why): \(String(describing: error))")
    }
    // The connection still serves a good one, and the server was asked only that.
    let response = try await channel.unary(
      path: Service.unaryCall.path, framedRequest: good,
      deserializer: ProtoDeserializer<GRPCTesting.SimpleResponse>(),
      options: CallOptions(timeout: .seconds(5)))
    #expect(response.message.payload?.body.count == 3)
    #expect(asked.withLock { $0 } == 1)
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
