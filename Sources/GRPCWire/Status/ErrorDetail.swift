public import ProtoRuntime

/// One structured detail of a failed call: a message from `google/rpc/error_details.proto`,
/// unpacked from the `google.protobuf.Any` it travelled in.
///
/// Types this package does not know stay `.other`, with their type URL and bytes. So does a
/// detail whose type is known but whose bytes do not decode as that type; ``RPCError`` then
/// says so in ``RPCError/detailsProblem``.
public enum ErrorDetail: Sendable, Hashable {
  /// Why the error happened, machine-readably: a reason, its domain and facts.
  case errorInfo(GoogleRPC.ErrorInfo)
  /// How long to wait before retrying.
  case retryInfo(GoogleRPC.RetryInfo)
  /// The server's stack trace and debugging detail; not for end users.
  case debugInfo(GoogleRPC.DebugInfo)
  /// Which quota was exceeded.
  case quotaFailure(GoogleRPC.QuotaFailure)
  /// Which preconditions failed.
  case preconditionFailure(GoogleRPC.PreconditionFailure)
  /// Which request fields are invalid and why.
  case badRequest(GoogleRPC.BadRequest)
  /// The request's ID, for a bug report or a support case.
  case requestInfo(GoogleRPC.RequestInfo)
  /// The resource the error is about.
  case resourceInfo(GoogleRPC.ResourceInfo)
  /// Links to documentation.
  case help(GoogleRPC.Help)
  /// The error message translated for a user.
  case localizedMessage(GoogleRPC.LocalizedMessage)
  /// A detail of another type, or one that did not decode, kept as it arrived.
  case other(GoogleProtobuf.AnyMessage)

  /// The detail inside `any`: the typed case when its type URL names a known message and its
  /// bytes decode, `.other(any)` otherwise. Never fails.
  public init(unpacking any: GoogleProtobuf.AnyMessage) {
    self = (try? Self.unpack(any)) ?? .other(any)
  }

  /// The typed detail inside `any`; nil for a type this enum does not know; throws when the
  /// type is known but the bytes do not decode as it.
  static func unpack(_ any: GoogleProtobuf.AnyMessage) throws(ProtoDecodingError) -> ErrorDetail? {
    guard let decode = decoders[String(any.messageName)] else { return nil }
    return try decode(any.value)
  }

  private typealias Decoder = @Sendable ([UInt8]) throws(ProtoDecodingError) -> ErrorDetail

  // Keyed by full message name; the type URL's prefix (type.googleapis.com/) does not matter.
  private static let decoders: [String: Decoder] = [
    GoogleRPC.ErrorInfo.protoMessageName: { bytes throws(ProtoDecodingError) in
      .errorInfo(try .init(serializedBytes: bytes))
    },
    GoogleRPC.RetryInfo.protoMessageName: { bytes throws(ProtoDecodingError) in
      .retryInfo(try .init(serializedBytes: bytes))
    },
    GoogleRPC.DebugInfo.protoMessageName: { bytes throws(ProtoDecodingError) in
      .debugInfo(try .init(serializedBytes: bytes))
    },
    GoogleRPC.QuotaFailure.protoMessageName: { bytes throws(ProtoDecodingError) in
      .quotaFailure(try .init(serializedBytes: bytes))
    },
    GoogleRPC.PreconditionFailure.protoMessageName: { bytes throws(ProtoDecodingError) in
      .preconditionFailure(try .init(serializedBytes: bytes))
    },
    GoogleRPC.BadRequest.protoMessageName: { bytes throws(ProtoDecodingError) in
      .badRequest(try .init(serializedBytes: bytes))
    },
    GoogleRPC.RequestInfo.protoMessageName: { bytes throws(ProtoDecodingError) in
      .requestInfo(try .init(serializedBytes: bytes))
    },
    GoogleRPC.ResourceInfo.protoMessageName: { bytes throws(ProtoDecodingError) in
      .resourceInfo(try .init(serializedBytes: bytes))
    },
    GoogleRPC.Help.protoMessageName: { bytes throws(ProtoDecodingError) in
      .help(try .init(serializedBytes: bytes))
    },
    GoogleRPC.LocalizedMessage.protoMessageName: { bytes throws(ProtoDecodingError) in
      .localizedMessage(try .init(serializedBytes: bytes))
    },
  ]

  /// The detail packed in an `Any` with Google's type URL, ready to put in a
  /// `google.rpc.Status`; `.other` gives back its `Any` unchanged.
  public var packed: GoogleProtobuf.AnyMessage {
    switch self {
    case .errorInfo(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .retryInfo(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .debugInfo(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .quotaFailure(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .preconditionFailure(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .badRequest(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .requestInfo(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .resourceInfo(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .help(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .localizedMessage(let message): GoogleProtobuf.AnyMessage(packing: message)
    case .other(let any): any
    }
  }
}

extension ErrorDetail: CustomStringConvertible {
  /// A one-line summary for logs, e.g. `ErrorInfo(reason: API_DISABLED, domain: …)`.
  public var description: String {
    switch self {
    case .errorInfo(let info):
      "ErrorInfo(reason: \(info.reason), domain: \(info.domain))"
    case .retryInfo(let info):
      "RetryInfo(retryDelay: \(info.retryDelay.map { "\($0.duration)" } ?? "none"))"
    case .debugInfo(let info):
      "DebugInfo(\(info.detail), \(info.stackEntries.count) stack entries)"
    case .quotaFailure(let failure):
      "QuotaFailure(\(failure.violations.map { "\($0.subject): \($0.description)" }))"
    case .preconditionFailure(let failure):
      "PreconditionFailure(\(failure.violations.map { "\($0.type) \($0.subject)" }))"
    case .badRequest(let request):
      "BadRequest(\(request.fieldViolations.map { "\($0.field): \($0.description)" }))"
    case .requestInfo(let info):
      "RequestInfo(requestID: \(info.requestID))"
    case .resourceInfo(let info):
      "ResourceInfo(\(info.resourceType) \(info.resourceName))"
    case .help(let help):
      "Help(\(help.links.map(\.url)))"
    case .localizedMessage(let message):
      "LocalizedMessage(\(message.locale): \(message.message))"
    case .other(let any):
      "Any(\(any.typeURL), \(any.value.count) bytes)"
    }
  }
}
