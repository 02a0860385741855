import GRPCWire
import SwiftProtobuf
import Testing

// The two examples of Docs/OwnServices.md, word for word, with their assertions.

struct SwiftProtobufSerializer<Message: SwiftProtobuf.Message>: MessageSerializer {
  func serialize(_ message: Message, into buffer: inout [UInt8]) throws {
    buffer.append(contentsOf: try message.serializedBytes() as [UInt8])
  }
}

struct SwiftProtobufDeserializer<Message: SwiftProtobuf.Message>: MessageDeserializer {
  func deserialize(_ message: ReceivedMessage) throws -> Message {
    try Message(serializedBytes: message.bytes)
  }
}

/// A service of one's own, over GRPCWire alone: raw bytes, and swift-protobuf messages
/// through the guide's adapter.
@Suite("A service of your own (Docs/OwnServices.md)", .timeLimit(.minutes(1)))
struct OwnServiceTests {
  @Test("raw bytes: a unary method serves and is called with RawBytesSerializer/Deserializer")
  func rawBytes() async throws {
    // Server: `/demo.Echo/Reverse` answers the request's bytes reversed.
    let server = GRPCServer()
    server.register(
      unary: "/demo.Echo/Reverse", deserializer: RawBytesDeserializer(),
      serializer: RawBytesSerializer()
    ) { request, context in
      Array(request.reversed())
    }
    let port = try await server.start(host: "127.0.0.1", port: 0)

    // Client.
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let reply = try await channel.unary(
      path: "/demo.Echo/Reverse", request: Array("stressed".utf8),
      serializer: RawBytesSerializer(), deserializer: RawBytesDeserializer())
    #expect(String(decoding: reply.message, as: UTF8.self) == "desserts")
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("raw bytes: a bidirectional method, every request answered in turn")
  func rawBytesBidirectional() async throws {
    let server = GRPCServer()
    server.register(
      bidirectional: "/demo.Echo/Upper", deserializer: RawBytesDeserializer(),
      serializer: RawBytesSerializer()
    ) { requests, responses, _ in
      for try await request in requests {
        try await responses.write(Array(String(decoding: request, as: UTF8.self).uppercased().utf8))
      }
    }
    let port = try await server.start(host: "127.0.0.1", port: 0)
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let answers = try await channel.bidirectionalStreaming(
      path: "/demo.Echo/Upper", serializer: RawBytesSerializer(),
      deserializer: RawBytesDeserializer()
    ) { requests, responses in
      var answers: [String] = []
      var iterator = responses.makeAsyncIterator()
      for word in ["ada", "grace"] {
        try await requests.write(Array(word.utf8))
        if let answer = try await iterator.next() { answers.append(String(decoding: answer, as: UTF8.self)) }
      }
      return answers
    }
    #expect(answers == ["ADA", "GRACE"])
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("swift-protobuf messages through the adapter, both ways")
  func swiftProtobuf() async throws {
    let server = GRPCServer()
    server.register(
      unary: "/demo.Greeter/Greet",
      deserializer: SwiftProtobufDeserializer<Google_Protobuf_StringValue>(),
      serializer: SwiftProtobufSerializer<Google_Protobuf_StringValue>()
    ) { name, _ in
      Google_Protobuf_StringValue("Hello, \(name.value)")
    }
    let port = try await server.start(host: "127.0.0.1", port: 0)
    let channel = GRPCChannel(host: "127.0.0.1", port: port)

    let greeting = try await channel.unary(
      path: "/demo.Greeter/Greet", request: Google_Protobuf_StringValue("Ada"),
      serializer: SwiftProtobufSerializer<Google_Protobuf_StringValue>(),
      deserializer: SwiftProtobufDeserializer<Google_Protobuf_StringValue>())
    #expect(greeting.message.value == "Hello, Ada")

    // A request that is not a StringValue fails the call: INTERNAL, from the server's adapter.
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(
        path: "/demo.Greeter/Greet", request: [0xFF, 0xFF, 0xFF],
        serializer: RawBytesSerializer(),
        deserializer: SwiftProtobufDeserializer<Google_Protobuf_StringValue>())
    }
    #expect(error.code == .internalError, "\(error)")
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
