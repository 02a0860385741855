/// One of the 17 gRPC status codes; the raw value is the number sent in `grpc-status`.
///
/// `description` is the canonical name (`"UNAVAILABLE"`), as in gRPC's doc/statuscodes.md
/// and `google.rpc.Code`. Every code also has a ``category`` (who recovers), an
/// ``explanation`` a person can act on, and the HTTP status Google Cloud maps it to
/// (``httpEquivalent``).
public enum StatusCode: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// Not an error: the call succeeded.
  case ok = 0
  /// The call was cancelled, usually by the caller.
  case cancelled = 1
  /// An error with no better code, or a `grpc-status` number gRPC does not define.
  case unknown = 2
  /// The request is invalid whatever the state of the server, e.g. a malformed resource name.
  case invalidArgument = 3
  /// The deadline passed before the call completed.
  case deadlineExceeded = 4
  /// The requested entity does not exist.
  case notFound = 5
  /// The entity the call tried to create already exists.
  case alreadyExists = 6
  /// The caller may not do this.
  case permissionDenied = 7
  /// A quota or rate limit was hit, or the peer ran out of a resource.
  case resourceExhausted = 8
  /// The system is not in the state the call needs.
  case failedPrecondition = 9
  /// The operation was aborted, typically by a concurrency conflict or a server problem.
  case aborted = 10
  /// The call went past the valid range.
  case outOfRange = 11
  /// The method is not implemented by the server.
  case unimplemented = 12
  /// An invariant broke, in the server or in this client; the name on the wire is `INTERNAL`.
  case internalError = 13
  /// The service cannot be reached now; retrying later may succeed.
  case unavailable = 14
  /// Unrecoverable data loss or corruption.
  case dataLoss = 15
  /// The request has no valid credentials.
  case unauthenticated = 16

  /// The canonical upper-case name, e.g. `"INVALID_ARGUMENT"`.
  public var name: String {
    switch self {
    case .ok: "OK"
    case .cancelled: "CANCELLED"
    case .unknown: "UNKNOWN"
    case .invalidArgument: "INVALID_ARGUMENT"
    case .deadlineExceeded: "DEADLINE_EXCEEDED"
    case .notFound: "NOT_FOUND"
    case .alreadyExists: "ALREADY_EXISTS"
    case .permissionDenied: "PERMISSION_DENIED"
    case .resourceExhausted: "RESOURCE_EXHAUSTED"
    case .failedPrecondition: "FAILED_PRECONDITION"
    case .aborted: "ABORTED"
    case .outOfRange: "OUT_OF_RANGE"
    case .unimplemented: "UNIMPLEMENTED"
    case .internalError: "INTERNAL"
    case .unavailable: "UNAVAILABLE"
    case .dataLoss: "DATA_LOSS"
    case .unauthenticated: "UNAUTHENTICATED"
    }
  }

  /// The canonical name; see ``name``.
  public var description: String { name }

  // Built once from `name`, so the two can never disagree.
  private static let byName: [String: StatusCode] = Dictionary(
    uniqueKeysWithValues: allCases.map { ($0.name, $0) })

  /// The code with canonical name `name` (exactly, e.g. `"NOT_FOUND"`); nil for anything else.
  public init?(name: String) {
    guard let code = Self.byName[name] else { return nil }
    self = code
  }

  /// Parses a `grpc-status` header value: an optional `-` and decimal digits, nothing else.
  ///
  /// Returns nil only when the value is not a decimal number at all (empty, spaces, `+`,
  /// letters); the transport then reports UNKNOWN, as gRPC's doc/statuscodes.md prescribes for
  /// "Error parsing returned status". A number outside 0...16 gives `(.unknown, original: n)`
  /// so the message can still name what the server sent; numbers too large for `Int` give
  /// `Int.max` (or `Int.min`). Leading zeros are accepted.
  package static func parse(grpcStatus: some StringProtocol) -> (code: StatusCode, original: Int)? {
    // One call into the generic view, then a plain loop over bytes: this runs on every call.
    let number =
      grpcStatus.utf8.withContiguousStorageIfAvailable(parseDecimal)
      ?? Array(grpcStatus.utf8).withUnsafeBufferPointer(parseDecimal)
    guard let number else { return nil }
    return (StatusCode(rawValue: number) ?? .unknown, number)
  }

  private static func parseDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    let negative = bytes.first == UInt8(ascii: "-")
    let digits = negative ? UnsafeBufferPointer(rebasing: bytes.dropFirst()) : bytes
    guard !digits.isEmpty else { return nil }
    var magnitude = 0
    var overflowed = false
    for byte in digits {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      overflowed = overflowed || overflow1 || overflow2
      magnitude = sum
    }
    if overflowed { return negative ? Int.min : Int.max }
    return negative ? -magnitude : magnitude
  }
}
