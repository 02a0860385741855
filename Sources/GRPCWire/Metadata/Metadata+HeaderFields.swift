internal import FleetSync
extension Metadata {
  /// Header names that belong to HTTP/2 or to gRPC itself, so metadata never sends or receives
  /// them: every name starting with `:` (pseudo-headers) or `grpc-`, and the names below.
  ///
  /// PROTOCOL-HTTP2.md reserves `grpc-` for gRPC ("Header names starting with "grpc-" but not
  /// listed here are reserved for future GRPC use"); the transport writes `content-type`, `te`
  /// and `user-agent` itself; RFC 9113 §8.2.2 forbids the connection-specific fields
  /// (`connection`, `keep-alive`, `proxy-connection`, `transfer-encoding`, `upgrade`) in HTTP/2;
  /// `host` would contradict `:authority`, and `content-length` would contradict the framing of
  /// a stream of messages.
  package static let reservedHeaderNames: Set<String> = [
    "content-type", "content-length", "te", "user-agent", "host", "connection", "keep-alive",
    "proxy-connection", "transfer-encoding", "upgrade",
  ]

  /// Whether `name` (lowercase) is a pseudo-header, starts with `grpc-`, or is one of
  /// ``reservedHeaderNames``.
  package static func isReserved(_ name: String) -> Bool {
    let utf8 = name.utf8
    // Decide on the first byte where possible: hashing every key into the set would cost more
    // than the rest of receiving it.
    switch utf8.first {
    case UInt8(ascii: ":"):
      return true
    case UInt8(ascii: "g"):
      return utf8.starts(with: "grpc-".utf8)
    case UInt8(ascii: "c"), UInt8(ascii: "t"), UInt8(ascii: "u"), UInt8(ascii: "h"),
      UInt8(ascii: "k"), UInt8(ascii: "p"):
      return reservedHeaderNames.contains(name)
    // Nothing reserved starts with any other byte (asserted by a test over the set).
    default:
      return false
    }
  }

  /// The HTTP/2 header fields that carry this metadata, in order.
  ///
  /// Names are lowercase; binary values are base64-encoded without padding, as gRPC asks
  /// senders to do. Pairs under reserved names (see ``isReserved(_:)``) are left out. Nothing
  /// is checked here: call ``validate()`` first, or a bad key or value goes out as it is.
  package func headerFields() -> [(name: String, value: String)] {
    var fields: [(name: String, value: String)] = []
    fields.reserveCapacity(count)
    for entry in entries where !Self.isReserved(entry.key) {
      switch entry.value {
      case .string(let text): fields.append((name: entry.key, value: text))
      case .binary(let bytes):
        fields.append((name: entry.key, value: Base64.encodeUnpadded(bytes)))
      }
    }
    return fields
  }

  /// The metadata carried by received header fields (response headers or trailers, or a
  /// server's request headers), in order.
  ///
  /// Pseudo-headers and reserved names are dropped: the transport reads `grpc-status`,
  /// `grpc-message`, `grpc-status-details-bin`, `content-type` and the rest from the fields
  /// itself. `-bin` values are split on `,` (an intermediary may join repeated fields, which
  /// gRPC requires receivers to undo) and each part is base64-decoded with or without padding.
  ///
  /// Never fails: a field gRPC would not let us send back is dropped, so anything received can
  /// be echoed and always passes ``validate()``. That means a name outside gRPC's `0-9 a-z _ -
  /// .`, a string value outside printable ASCII, and a `-bin` part that is not base64 are
  /// dropped — PROTOCOL-HTTP2.md allows throwing such values away.
  package init(receivedHeaders fields: some Sequence<(name: String, value: String)>) {
    self.init()
    for (name, value) in fields {
      let key = Self.normalized(name)
      guard !Self.isReserved(key), Self.keyProblem(key) == nil else { continue }
      if Self.isBinaryKey(key) {
        addReceivedBinary(key, value)
      } else if Self.valueProblem(value) == nil {
        append(normalizedKey: key, .string(value))
      }
    }
  }

  private mutating func addReceivedBinary(_ key: String, _ value: String) {
    let comma = UInt8(ascii: ",")
    // The common case, one value per field, decodes without splitting.
    guard value.utf8.contains(comma) else {
      if let bytes = Base64.decode(value) { append(normalizedKey: key, .binary(bytes)) }
      return
    }
    for part in value.utf8.split(separator: comma, omittingEmptySubsequences: false) {
      // A joined list may read "a, b": the space belongs to the list, not to the value.
      let trimmed = part.drop(while: { $0 == UInt8(ascii: " ") })
      let end = trimmed.lastIndex(where: { $0 != UInt8(ascii: " ") }).map(trimmed.index(after:))
      if let bytes = Base64.decode(Substring(trimmed[..<(end ?? trimmed.startIndex)])) {
        append(normalizedKey: key, .binary(bytes))
      }
    }
  }
}
