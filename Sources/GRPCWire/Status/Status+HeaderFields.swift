internal import FleetSync
extension Status {
  /// The trailer fields that carry this status, for a server to send: `grpc-status`, then
  /// `grpc-message` (percent-encoded; left out when the message is empty), then
  /// `grpc-status-details-bin` (base64 without padding; left out when there are no details).
  ///
  /// A client reads them back with ``init(grpcStatus:grpcMessage:detailsBytes:)`` after
  /// base64-decoding the details.
  package func headerFields() -> [(name: String, value: String)] {
    var fields: [(name: String, value: String)] = [("grpc-status", String(code.rawValue))]
    if !message.isEmpty {
      fields.append(("grpc-message", GRPCMessageEncoding.percentEncode(message)))
    }
    if let detailsBytes {
      fields.append(("grpc-status-details-bin", Base64.encodeUnpadded(detailsBytes)))
    }
    return fields
  }

  /// The bytes of a `grpc-status-details-bin` value (base64, padded or not); nil when it is not
  /// base64. The transport uses it on received trailers; a nil here becomes
  /// ``RPCError/detailsProblem``.
  package static func detailsBytes(fromHeaderValue value: some StringProtocol) -> [UInt8]? {
    Base64.decode(value)
  }
}
