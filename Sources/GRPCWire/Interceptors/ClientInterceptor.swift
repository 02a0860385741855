/// Code that runs around every call of a channel (``ChannelOptions/interceptors``) or of one
/// call (``CallOptions/interceptors``): logging, metrics, tracing, authentication, policy.
///
/// An interceptor gets the call before it starts and `next`, the rest of the chain. It may
/// change the call (add metadata, shorten the timeout) and pass it on, refuse it by throwing
/// (an ``RPCError`` is what the caller sees; nothing is sent), and observe the outcome: `next`
/// returns a ``ClientCallSummary`` when the call ended as the caller's code saw it end, and
/// throws the caller's error otherwise. The whole call — for a streaming call, the caller's
/// body too — runs inside `next`, so task-local values an interceptor binds around `next`
/// (a tracing span's `ServiceContext`) are seen by everything the call does.
///
/// Channel interceptors run first, in order, then the call's own; the first one listed is the
/// outermost. Interceptors see messages only as counts: a message-level transform belongs in
/// a serializer (``MessageSerializer``), which the call already takes.
public protocol ClientInterceptor: Sendable {
  func intercept(
    _ call: ClientCall,
    next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary
}

/// A call as interceptors see it before it starts.
public struct ClientCall: Sendable {
  /// The method called.
  public let method: MethodDescriptor
  /// The call's kind.
  public let kind: CallKind
  /// `host:port` of the channel.
  public let target: String
  /// The call's options; what interceptors change here (metadata, timeout, compression) is
  /// what the call is made with.
  public var options: CallOptions

  package init(method: MethodDescriptor, kind: CallKind, target: String, options: CallOptions) {
    self.method = method
    self.kind = kind
    self.target = target
    self.options = options
  }
}

/// How a call ended, as its caller saw it: a unary call's response, a streaming call's end.
public struct ClientCallSummary: Sendable {
  /// The call's status: OK with the server's trailers, or what ended the call — a server's
  /// error status, or CANCELLED when the caller stopped reading before the responses ended.
  public var status: Status
  /// The response headers' metadata (empty when none arrived).
  public var initialMetadata: Metadata
  /// The trailers' metadata (empty when none arrived).
  public var trailingMetadata: Metadata
  /// Request messages the caller sent.
  public var requestMessages: Int
  /// Response messages that arrived.
  public var responseMessages: Int

  public init(
    status: Status, initialMetadata: Metadata = Metadata(), trailingMetadata: Metadata = Metadata(),
    requestMessages: Int, responseMessages: Int
  ) {
    self.status = status
    self.initialMetadata = initialMetadata
    self.trailingMetadata = trailingMetadata
    self.requestMessages = requestMessages
    self.responseMessages = responseMessages
  }
}

/// The four kinds of gRPC call.
public enum CallKind: String, Sendable, Hashable {
  case unary
  case serverStreaming
  case clientStreaming
  case bidirectionalStreaming
}

/// A method's fully qualified service name and method name, from a call's `:path`
/// (`/package.Service/Method`).
public struct MethodDescriptor: Sendable, Hashable, CustomStringConvertible {
  /// `package.Service`; empty when the path has no `/` after its first.
  public let service: String
  /// `Method`; the whole path, without its leading `/`, when it cannot be split.
  public let method: String
  /// `/package.Service/Method`.
  public let path: String

  public init(path: String) {
    self.path = path
    let trimmed = path.hasPrefix("/") ? path.dropFirst() : Substring(path)
    if let slash = trimmed.lastIndex(of: "/") {
      service = String(trimmed[..<slash])
      method = String(trimmed[trimmed.index(after: slash)...])
    } else {
      service = ""
      method = String(trimmed)
    }
  }

  public init(service: String, method: String) {
    self.service = service
    self.method = method
    self.path = "/\(service)/\(method)"
  }

  public var description: String { path }
}

/// Runs `interceptors` in order around `call`, `last` innermost.
func intercept(
  _ interceptors: ArraySlice<any ClientInterceptor>, _ call: ClientCall,
  _ last: (ClientCall) async throws -> ClientCallSummary
) async throws -> ClientCallSummary {
  guard let first = interceptors.first else { return try await last(call) }
  return try await first.intercept(call) { call in
    try await intercept(interceptors.dropFirst(), call, last)
  }
}
