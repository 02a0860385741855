import GRPCWire
import SwiftProtobuf
import Testing

/// Stubs over a message protoc-gen-swift names `Result` (`Protos/acme/edge_cases/v1/
/// bare_names.proto`, an empty swift_prefix): the streaming client methods are generic over
/// what their body returns, and that parameter must not be named like the message, or it hides
/// the message inside their signatures and the generated file does not compile. This file
/// compiling is half the proof; both streaming kinds then go through our client and server.
@Suite("Stubs over a message named Result", .timeLimit(.minutes(1)))
struct BareNameStubTests {
  struct Results: AcmeEdgeCasesV1.Results.ServiceProtocol {
    /// One message for each number from 1 to the request's value.
    func count(_ request: Result, responses: ResponseWriter<Result>, context: ServerContext)
      async throws
    {
      guard request.value > 0 else { return }
      for value in 1...request.value {
        var message = Result()
        message.value = value
        try await responses.write(message)
      }
    }

    /// Each request's value, doubled.
    func echo(
      _ requests: RequestStream<Result>, responses: ResponseWriter<Result>, context: ServerContext
    ) async throws {
      for try await request in requests {
        var message = Result()
        message.value = request.value * 2
        try await responses.write(message)
      }
    }
  }

  @Test("server and bidirectional streaming of a message named Result round-trip")
  func roundTrips() async throws {
    let server = GRPCServer()
    server.register(Results())
    let port = try await server.start(host: "127.0.0.1", port: 0)
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let client = AcmeEdgeCasesV1.Results.Client(channel: channel)
    let options = CallOptions(timeout: .seconds(10))

    var three = Result()
    three.value = 3
    // The body returns [Int32], not the message: the generic parameter is its own type.
    let counted: [Int32] = try await client.count(three, options: options) { responses in
      var values: [Int32] = []
      for try await response in responses { values.append(response.value) }
      return values
    }
    #expect(counted == [1, 2, 3])

    let doubled: [Int32] = try await client.echo(options: options) { requests, responses in
      for value: Int32 in [4, 5] {
        var message = Result()
        message.value = value
        try await requests.write(message)
      }
      requests.finish()
      var values: [Int32] = []
      for try await response in responses { values.append(response.value) }
      return values
    }
    #expect(doubled == [8, 10])

    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
