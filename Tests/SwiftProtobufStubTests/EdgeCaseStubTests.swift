import Foundation
import GRPCWire
import SwiftProtobuf
import Testing

/// Generated stubs over protoc-gen-swift's messages for names the two generators must agree on
/// (`Protos/acme/edge_cases/v1/edge_cases.proto`): a `swift_prefix` (`EdgeOrder`), a nested
/// `Type` (`EdgeOrder.TypeMessage`), a top-level `TypeMessage` (`EdgeTypeMessage`), well-known
/// types in and out, an RPC named `Default` (`` `default` ``). That this file compiles is half
/// the proof; each RPC kind then goes through our client and our server, values compared.
@Suite(
  "Stubs over swift-protobuf's messages: names protoc-gen-swift rewrites", .timeLimit(.minutes(1)))
struct EdgeCaseStubTests {
  struct Orders: AcmeEdgeCasesV1.Orders.ServiceProtocol {
    func `default`(_ request: EdgeOrder.TypeMessage, context: ServerContext) async throws
      -> Google_Protobuf_Empty
    {
      guard request.name == "express" else {
        throw RPCError(code: .invalidArgument, message: "unexpected type \(request.name)")
      }
      return Google_Protobuf_Empty()
    }

    /// One order per second of the timestamp, each with that many lines.
    func watch(
      _ request: Google_Protobuf_Timestamp, responses: ResponseWriter<EdgeOrder>,
      context: ServerContext
    ) async throws {
      for count in 1...Int32(request.seconds) {
        var order = EdgeOrder()
        order.type.name = "watch"
        order.lines = Array(1...count)
        try await responses.write(order)
      }
    }

    func upload(_ requests: RequestStream<EdgeTypeMessage>, context: ServerContext) async throws
      -> EdgeOrder.TypeMessage
    {
      var total: Int32 = 0
      for try await request in requests { total += request.count }
      var type = EdgeOrder.TypeMessage()
      type.name = "total \(total)"
      return type
    }

    func chat(
      _ requests: RequestStream<EdgeOrder>, responses: ResponseWriter<EdgeTypeMessage>,
      context: ServerContext
    ) async throws {
      for try await order in requests {
        var answer = EdgeTypeMessage()
        answer.count = Int32(order.lines.count)
        try await responses.write(answer)
      }
    }
  }

  @Test("every RPC kind round-trips through the generated client and server")
  func roundTrips() async throws {
    let server = GRPCServer()
    server.register(Orders())
    let port = try await server.start(host: "127.0.0.1", port: 0)
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let client = AcmeEdgeCasesV1.Orders.Client(channel: channel)
    let options = CallOptions(timeout: .seconds(10))

    var express = EdgeOrder.TypeMessage()
    express.name = "express"
    let empty = try await client.default(express, options: options)
    #expect(empty.message == Google_Protobuf_Empty())
    var other = EdgeOrder.TypeMessage()
    other.name = "other"
    let error = try await #require(throws: RPCError.self) {
      _ = try await client.default(other, options: options)
    }
    #expect(error.code == .invalidArgument && error.message == "unexpected type other")

    var three = Google_Protobuf_Timestamp()
    three.seconds = 3
    let watched = try await client.watch(three, options: options) { orders in
      var lines: [[Int32]] = []
      for try await order in orders {
        #expect(order.type.name == "watch")
        lines.append(order.lines)
      }
      return lines
    }
    #expect(watched == [[1], [1, 2], [1, 2, 3]])

    let total = try await client.upload(options: options) { requests in
      for count: Int32 in [2, 3, 5] {
        var message = EdgeTypeMessage()
        message.count = count
        try await requests.write(message)
      }
    }
    #expect(total.message.name == "total 10")

    let counts = try await client.chat(options: options) { requests, responses in
      var iterator = responses.makeAsyncIterator()
      var counts: [Int32] = []
      for lines: [Int32] in [[], [7], [7, 8, 9]] {
        var order = EdgeOrder()
        order.lines = lines
        try await requests.write(order)
        counts.append(try #require(try await iterator.next()).count)
      }
      requests.finish()
      #expect(try await iterator.next() == nil)
      return counts
    }
    #expect(counts == [0, 1, 3])

    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
