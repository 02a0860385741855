/// The module file of stubs over swift-protobuf's messages (`--messages swift-protobuf`):
/// the namespaces of the packages whose services the module's stub files extend,
/// `SwiftProtobufMethod` (the descriptor of one RPC, as `ProtoMethod` is for our own
/// messages), `SwiftProtobufCodec` (GRPCWire's serializer and deserializer over
/// `SwiftProtobuf.Message`), and the `GRPCChannel` calls and `GRPCServer` registrations that
/// take a `SwiftProtobufMethod`, so the stubs read as they do over our own messages.
///
/// It imports GRPCWire and SwiftProtobuf only: nothing of ProtoRuntime.
enum SwiftProtobufSupport {
  /// The file's name beside the stubs.
  static let fileName = "SwiftProtobufSupport.grpc.swift"

  /// The imports of every file over swift-protobuf's messages. Without an access level, as
  /// protoc-gen-swift writes `import SwiftProtobuf` by default: Swift rejects a module whose
  /// files import one module with an access level in one file and without in another.
  static let imports = ["import GRPCWire", "import SwiftProtobuf"]

  static func file(namespaces: [String], access: String, header: GeneratedHeader) -> String {
    var out = TextLines()
    out.line(contentsOf: header.swift(from: "the services of the module's .proto files"))
    out.line()
    out.line(contentsOf: imports)
    for namespace in namespaces {
      out.line()
      out.line("/// The services of a proto package, with their `Client` and `ServiceProtocol`.")
      out.line("\(access) enum \(namespace) {}")
    }
    out.line()
    return out.text + template(access) + "\n"
  }

  /// The fixed part, declared with `access`.
  private static func template(_ access: String) -> String {
    """
    /// One method of a gRPC service whose messages protoc-gen-swift generated: its HTTP/2 path,
    /// request and response types and which of the four call kinds it is.
    \(access) struct SwiftProtobufMethod<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>:
      Sendable, Hashable
    {
      /// The four kinds of gRPC call.
      \(access) enum Kind: Sendable, Hashable {
        case unary, serverStreaming, clientStreaming, bidirectionalStreaming
      }

      /// `/package.Service/Method`, the `:path` of the call.
      \(access) let path: String
      \(access) let kind: Kind

      \(access) init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
      }
    }

    /// A swift-protobuf message as GRPCWire sends and receives it: its binary encoding. Decoding
    /// reads the received bytes in place; encoding appends swift-protobuf's encoding (a buffer
    /// of exactly the message's size, the only form its API writes) after the gRPC prefix.
    /// A failure (bytes that are not the message, a proto2 required field unset) fails the call
    /// with INTERNAL.
    \(access) struct SwiftProtobufCodec<Message: SwiftProtobuf.Message>: GRPCWire.MessageSerializer,
      GRPCWire.MessageDeserializer
    {
      \(access) init() {}

      \(access) func serialize(_ message: Message, into buffer: inout [UInt8]) throws {
        let bytes: [UInt8] = try message.serializedBytes()
        buffer.append(contentsOf: bytes)
      }

      \(access) func deserialize(_ message: GRPCWire.ReceivedMessage) throws -> Message {
        try Message(serializedBytes: message.bytes)
      }
    }

    extension GRPCWire.GRPCChannel {
      /// A unary call of `method`.
      nonisolated(nonsending) \(access) func unary<Request, Response>(
        _ method: SwiftProtobufMethod<Request, Response>, _ request: Request,
        options: GRPCWire.CallOptions = GRPCWire.CallOptions()
      ) async throws -> GRPCWire.ClientResponse<Response> {
        try await unary(
          path: method.path, request: request, serializer: SwiftProtobufCodec<Request>(),
          deserializer: SwiftProtobufCodec<Response>(), options: options)
      }

      /// A server-streaming call of `method`.
      \(access) func serverStreaming<Request, Response, Result>(
        _ method: SwiftProtobufMethod<Request, Response>, _ request: Request,
        options: GRPCWire.CallOptions = GRPCWire.CallOptions(),
        _ body: (GRPCWire.ResponseStream<Response>) async throws -> Result
      ) async throws -> Result {
        try await serverStreaming(
          path: method.path, request: request, serializer: SwiftProtobufCodec<Request>(),
          deserializer: SwiftProtobufCodec<Response>(), options: options, body)
      }

      /// A client-streaming call of `method`.
      \(access) func clientStreaming<Request, Response>(
        _ method: SwiftProtobufMethod<Request, Response>,
        options: GRPCWire.CallOptions = GRPCWire.CallOptions(),
        _ body: (GRPCWire.RequestWriter<Request>) async throws -> Void
      ) async throws -> GRPCWire.ClientResponse<Response> {
        try await clientStreaming(
          path: method.path, serializer: SwiftProtobufCodec<Request>(),
          deserializer: SwiftProtobufCodec<Response>(), options: options, body)
      }

      /// A bidirectional call of `method`.
      \(access) func bidirectionalStreaming<Request, Response, Result>(
        _ method: SwiftProtobufMethod<Request, Response>,
        options: GRPCWire.CallOptions = GRPCWire.CallOptions(),
        _ body: (GRPCWire.RequestWriter<Request>, GRPCWire.ResponseStream<Response>) async throws
          -> Result
      ) async throws -> Result {
        try await bidirectionalStreaming(
          path: method.path, serializer: SwiftProtobufCodec<Request>(),
          deserializer: SwiftProtobufCodec<Response>(), options: options, body)
      }
    }

    extension GRPCWire.GRPCServer {
      /// Serves the unary `method` with `handler` (before the server starts).
      \(access) func register<Request, Response>(
        unary method: SwiftProtobufMethod<Request, Response>,
        interceptors: [any GRPCWire.ServerInterceptor] = [],
        _ handler: @escaping @Sendable (Request, GRPCWire.ServerContext) async throws -> Response
      ) {
        register(
          unary: method.path, deserializer: SwiftProtobufCodec<Request>(),
          serializer: SwiftProtobufCodec<Response>(), interceptors: interceptors, handler)
      }

      /// Serves the server-streaming `method` with `handler` (before the server starts).
      \(access) func register<Request, Response>(
        serverStreaming method: SwiftProtobufMethod<Request, Response>,
        interceptors: [any GRPCWire.ServerInterceptor] = [],
        _ handler: @escaping @Sendable (
          Request, GRPCWire.ResponseWriter<Response>, GRPCWire.ServerContext
        ) async throws -> Void
      ) {
        register(
          serverStreaming: method.path, deserializer: SwiftProtobufCodec<Request>(),
          serializer: SwiftProtobufCodec<Response>(), interceptors: interceptors, handler)
      }

      /// Serves the client-streaming `method` with `handler` (before the server starts).
      \(access) func register<Request, Response>(
        clientStreaming method: SwiftProtobufMethod<Request, Response>,
        interceptors: [any GRPCWire.ServerInterceptor] = [],
        _ handler: @escaping @Sendable (GRPCWire.RequestStream<Request>, GRPCWire.ServerContext)
          async throws -> Response
      ) {
        register(
          clientStreaming: method.path, deserializer: SwiftProtobufCodec<Request>(),
          serializer: SwiftProtobufCodec<Response>(), interceptors: interceptors, handler)
      }

      /// Serves the bidirectional `method` with `handler` (before the server starts).
      \(access) func register<Request, Response>(
        bidirectional method: SwiftProtobufMethod<Request, Response>,
        interceptors: [any GRPCWire.ServerInterceptor] = [],
        _ handler: @escaping @Sendable (
          GRPCWire.RequestStream<Request>, GRPCWire.ResponseWriter<Response>, GRPCWire.ServerContext
        ) async throws -> Void
      ) {
        register(
          bidirectional: method.path, deserializer: SwiftProtobufCodec<Request>(),
          serializer: SwiftProtobufCodec<Response>(), interceptors: interceptors, handler)
      }
    }
    """
  }
}
