/// The outcome of a call as the server reported it: a code (OK included), a message, and the
/// raw `google.rpc.Status` details when the server sent them.
///
/// A failed call reaches the caller as an ``RPCError``, which decodes the details; `Status`
/// is the plain value the transport reads from trailers and a server writes into them.
public struct Status: Sendable, Hashable, CustomStringConvertible {
  /// The status code; `.ok` for success.
  public var code: StatusCode
  /// The decoded `grpc-message` (already percent-decoded); empty when none was sent.
  public var message: String
  /// The raw `grpc-status-details-bin` bytes (already base64-decoded), when the server sent
  /// them: an encoded `google.rpc.Status`. Nil when the header was absent.
  public var detailsBytes: [UInt8]?

  /// A status with the given parts; `detailsBytes` is an encoded `google.rpc.Status`.
  public init(code: StatusCode, message: String = "", detailsBytes: [UInt8]? = nil) {
    self.code = code
    self.message = message
    self.detailsBytes = detailsBytes
  }

  /// Success, with no message.
  public static let ok = Status(code: .ok)

  /// The status carried by received `grpc-status` and `grpc-message` values.
  ///
  /// `grpcMessage` is percent-decoded. A `grpc-status` that is not a number, or a number
  /// outside 0...16, gives UNKNOWN with a message naming what was received (the server's
  /// message, if any, follows it), as gRPC's doc/statuscodes.md prescribes for "Error parsing
  /// returned status". A missing `grpc-status` is the transport's to handle (see
  /// ``StatusCode/init(httpStatus:)``).
  package init(grpcStatus: some StringProtocol, grpcMessage: String?, detailsBytes: [UInt8]? = nil) {
    let message = grpcMessage.map { GRPCMessageEncoding.percentDecode($0) } ?? ""
    self.detailsBytes = detailsBytes
    switch StatusCode.parse(grpcStatus: grpcStatus) {
    case .some((let code, let original)) where code.rawValue == original:
      self.code = code
      self.message = message
    case .some((_, let original)):
      self.code = .unknown
      self.message = Self.joined("grpc-status \(original) is not a gRPC status code", message)
    case .none:
      self.code = .unknown
      // The value came from the peer: escape it and cap it so it cannot flood a log line.
      let shown = String(reflecting: String(grpcStatus.prefix(32)))
      self.message = Self.joined("grpc-status \(shown) is not a number", message)
    }
  }

  /// Whether the code is OK.
  public var isOK: Bool { code == .ok }

  /// `OK`, or the code's name followed by the message, e.g. `NOT_FOUND: no such order`.
  public var description: String {
    message.isEmpty ? code.name : "\(code.name): \(message)"
  }

  private static func joined(_ ours: String, _ theirs: String) -> String {
    theirs.isEmpty ? ours : "\(ours): \(theirs)"
  }
}
