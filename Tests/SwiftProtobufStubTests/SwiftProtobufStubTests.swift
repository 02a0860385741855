import Foundation
import GRPCWire
import PeerSupport
import SwiftProtobuf
import Testing

/// Stubs over swift-protobuf's messages (`grpc-wire-gen --messages swift-protobuf`), against
/// grpcio both ways. `Generated/` is grpc.testing's empty, messages and test protos as
/// protoc-gen-swift writes them (`Grpc_Testing_SimpleRequest`, …) with our stubs beside them
/// (`GrpcTesting.TestService.Client`, `.ServiceProtocol`), both from `CodeGen/generate`.
///
/// - Our generated `Client` calls grpcio's interop server (interop_server.py) with every RPC
///   kind, and checks what grpcio answered.
/// - grpcio's interop client (interop_client.py) calls a `ServiceProtocol` implemented here on
///   swift-protobuf's messages: the standard cases of every RPC kind, each checked by grpcio.
@Suite("Stubs over swift-protobuf's messages, against grpcio", .timeLimit(.minutes(3)))
struct SwiftProtobufStubTests {
  static let options = CallOptions(timeout: .seconds(30))

  static func zeros(_ count: Int) -> Grpc_Testing_Payload {
    var payload = Grpc_Testing_Payload()
    payload.body = Data(count: count)
    return payload
  }

  static func outputRequest(sizes: [Int32], payload: Int = 0)
    -> Grpc_Testing_StreamingOutputCallRequest
  {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = sizes.map { size in
      var parameters = Grpc_Testing_ResponseParameters()
      parameters.size = size
      return parameters
    }
    if payload > 0 { request.payload = zeros(payload) }
    return request
  }

  /// Runs `body` with a generated client of grpcio's interop server.
  func withGRPCIOServer(_ body: (GrpcTesting.TestService.Client) async throws -> Void)
    async throws
  {
    try await withPeerServer("interop_server.py") { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      defer { channel.close() }
      try await body(GrpcTesting.TestService.Client(channel: channel))
    }
  }

  // MARK: Our client, grpcio's server

  @Test("unary: an empty call, and a large one whose payload grpcio sized as asked")
  func unaryAgainstGRPCIO() async throws {
    try await withGRPCIOServer { client in
      let empty = try await client.emptyCall(Grpc_Testing_Empty(), options: Self.options)
      #expect(empty.message == Grpc_Testing_Empty())

      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 314_159
      request.payload = Self.zeros(271_828)
      let response = try await client.unaryCall(request, options: Self.options)
      #expect(response.message.payload.body == Data(count: 314_159))
    }
  }

  @Test("unary: a status grpcio was asked to send arrives with its code and message")
  func unaryStatusAgainstGRPCIO() async throws {
    try await withGRPCIOServer { client in
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus.code = 9
      request.responseStatus.message = "swift-protobuf ☺ status"
      let error = try await #require(throws: RPCError.self) {
        _ = try await client.unaryCall(request, options: Self.options)
      }
      #expect(error.code == .failedPrecondition, "\(error)")
      #expect(error.message == "swift-protobuf ☺ status")
    }
  }

  @Test("server streaming: one response per parameter, of the sizes asked")
  func serverStreamingAgainstGRPCIO() async throws {
    try await withGRPCIOServer { client in
      let sizes: [Int32] = [31415, 9, 2653, 58979]
      let got = try await client.streamingOutputCall(
        Self.outputRequest(sizes: sizes), options: Self.options
      ) { responses in
        var got: [Int] = []
        for try await response in responses { got.append(response.payload.body.count) }
        return got
      }
      #expect(got == sizes.map(Int.init))
    }
  }

  @Test("client streaming: grpcio sums the payloads it received")
  func clientStreamingAgainstGRPCIO() async throws {
    try await withGRPCIOServer { client in
      let response = try await client.streamingInputCall(options: Self.options) { requests in
        for size in [27182, 8, 1828, 45904] {
          var request = Grpc_Testing_StreamingInputCallRequest()
          request.payload = Self.zeros(size)
          try await requests.write(request)
        }
      }
      #expect(response.message.aggregatedPayloadSize == 74922)
    }
  }

  @Test("bidirectional: ping-pong, each request answered before the next is sent")
  func bidirectionalAgainstGRPCIO() async throws {
    try await withGRPCIOServer { client in
      let rounds: [(response: Int32, payload: Int)] = [
        (31415, 27182), (9, 8), (2653, 1828), (58979, 45904),
      ]
      let got = try await client.fullDuplexCall(options: Self.options) { requests, responses in
        var iterator = responses.makeAsyncIterator()
        var got: [Int] = []
        for round in rounds {
          try await requests.write(
            Self.outputRequest(sizes: [round.response], payload: round.payload))
          let response = try #require(try await iterator.next())
          got.append(response.payload.body.count)
        }
        requests.finish()
        #expect(try await iterator.next() == nil)
        return got
      }
      #expect(got == rounds.map { Int($0.response) })
    }
  }

  @Test("an RPC grpcio does not serve is UNIMPLEMENTED")
  func unimplementedAgainstGRPCIO() async throws {
    try await withGRPCIOServer { client in
      let error = try await #require(throws: RPCError.self) {
        _ = try await client.unimplementedCall(Grpc_Testing_Empty(), options: Self.options)
      }
      #expect(error.code == .unimplemented, "\(error)")
    }
  }

  // MARK: grpcio's client, our server

  /// One grpcio interop case per RPC kind (and the statuses, the empty stream and an RPC the
  /// implementation leaves out), each checked by grpcio's client.
  static let cases = [
    "empty_unary", "large_unary", "status_code_and_message", "client_streaming",
    "server_streaming", "ping_pong", "empty_stream", "unimplemented_method",
  ]

  @Test("grpcio's client passes the case against our ServiceProtocol", arguments: cases)
  func grpcioClient(_ name: String) async throws {
    let server = GRPCServer()
    server.register(SwiftProtobufTestService())
    let port = try await server.start(host: "127.0.0.1", port: 0)
    let output = try await PythonPeer.run(
      "interop_client.py",
      [
        "--server_host=127.0.0.1", "--server_port=\(port)", "--test_case=\(name)",
        "--use_tls=false",
      ], timeout: .seconds(90))
    await server.shutdown(gracePeriod: .seconds(1))
    output.attach(as: "interop_client-\(name)")
    #expect(
      output.status == 0 && output.stdoutText.contains("PASS \(name)"),
      "grpcio's client failed \(name):\n\(output.transcript)")
  }
}

/// grpc.testing.TestService on swift-protobuf's messages, as much of it as the cases above
/// call; `unimplementedCall` is left to the generated default (UNIMPLEMENTED).
struct SwiftProtobufTestService: GrpcTesting.TestService.ServiceProtocol {
  func emptyCall(_ request: Grpc_Testing_Empty, context: ServerContext) async throws
    -> Grpc_Testing_Empty
  {
    Grpc_Testing_Empty()
  }

  func unaryCall(_ request: Grpc_Testing_SimpleRequest, context: ServerContext) async throws
    -> Grpc_Testing_SimpleResponse
  {
    try Self.failIfAsked(request.hasResponseStatus ? request.responseStatus : nil)
    var response = Grpc_Testing_SimpleResponse()
    response.payload = SwiftProtobufStubTests.zeros(Int(request.responseSize))
    return response
  }

  func streamingOutputCall(
    _ request: Grpc_Testing_StreamingOutputCallRequest,
    responses: ResponseWriter<Grpc_Testing_StreamingOutputCallResponse>, context: ServerContext
  ) async throws {
    try await Self.answer(request, responses)
  }

  func streamingInputCall(
    _ requests: RequestStream<Grpc_Testing_StreamingInputCallRequest>, context: ServerContext
  ) async throws -> Grpc_Testing_StreamingInputCallResponse {
    var response = Grpc_Testing_StreamingInputCallResponse()
    for try await request in requests {
      response.aggregatedPayloadSize += Int32(request.payload.body.count)
    }
    return response
  }

  func fullDuplexCall(
    _ requests: RequestStream<Grpc_Testing_StreamingOutputCallRequest>,
    responses: ResponseWriter<Grpc_Testing_StreamingOutputCallResponse>, context: ServerContext
  ) async throws {
    for try await request in requests {
      try Self.failIfAsked(request.hasResponseStatus ? request.responseStatus : nil)
      try await Self.answer(request, responses)
    }
  }

  /// One response per parameter, with a payload of zeros of its size.
  static func answer(
    _ request: Grpc_Testing_StreamingOutputCallRequest,
    _ responses: ResponseWriter<Grpc_Testing_StreamingOutputCallResponse>
  ) async throws {
    for parameters in request.responseParameters {
      var response = Grpc_Testing_StreamingOutputCallResponse()
      response.payload = SwiftProtobufStubTests.zeros(Int(parameters.size))
      try await responses.write(response)
    }
  }

  /// The interop cases' `response_status`: the call ends with that status.
  static func failIfAsked(_ status: Grpc_Testing_EchoStatus?) throws {
    guard let status, status.code != 0 else { return }
    guard let code = StatusCode(rawValue: Int(status.code)) else {
      throw RPCError(code: .invalidArgument, message: "no such status code \(status.code)")
    }
    throw RPCError(code: code, message: status.message)
  }
}
