extension GoogleProtobuf.AnyMessage {
  /// The type-URL prefix Google's APIs use: `type.googleapis.com/google.rpc.ErrorInfo`.
  public static let typeURLPrefix = "type.googleapis.com/"

  /// `message`, encoded and labelled with its type URL.
  public init<M: ProtoMessage>(packing message: M) {
    self.init()
    typeURL = Self.typeURLPrefix + M.protoMessageName
    value = message.serializedBytes()
  }

  /// The full message name after the last `/` of the type URL.
  public var messageName: Substring {
    typeURL.lastIndex(of: "/").map { typeURL[typeURL.index(after: $0)...] } ?? typeURL[...]
  }

  /// Whether this holds an `M`.
  public func holds<M: ProtoMessage>(_ type: M.Type) -> Bool {
    messageName == M.protoMessageName
  }

  /// The message inside when it is an `M`, nil when it is another type; throws when it claims
  /// to be an `M` but its bytes do not decode as one.
  public func unpack<M: ProtoMessage>(as type: M.Type) throws(ProtoDecodingError) -> M? {
    guard holds(type) else { return nil }
    return try M(serializedBytes: value)
  }
}
