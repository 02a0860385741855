/// One method of a gRPC service defined in our protos: its HTTP/2 path, request and response
/// types and which of the four call kinds it is. Generated for every `rpc`.
public struct ProtoMethod<Request: ProtoMessage, Response: ProtoMessage>: Sendable, Hashable {
  /// The four kinds of gRPC call.
  public enum Kind: Sendable, Hashable {
    case unary, serverStreaming, clientStreaming, bidirectionalStreaming
  }

  /// `/package.Service/Method`, the `:path` of the call.
  public let path: String
  public let kind: Kind

  public init(path: String, kind: Kind) {
    self.path = path
    self.kind = kind
  }
}
