extension StatusCode {
  /// The code for a response that is not gRPC at all: an HTTP status without `grpc-status`,
  /// typically from a proxy or load balancer.
  ///
  /// gRPC's doc/http-grpc-status-mapping.md: 400 and 431 → INTERNAL, 401 → UNAUTHENTICATED,
  /// 403 → PERMISSION_DENIED, 404 → UNIMPLEMENTED, 429, 502, 503 and 504 → UNAVAILABLE, every
  /// other status → UNKNOWN — including 200, since a real OK carries `grpc-status: 0`. Use it
  /// only when `grpc-status` is absent; when present, it wins. (1xx responses are interim:
  /// the transport skips them and waits for the final header block.)
  public init(httpStatus: Int) {
    switch httpStatus {
    case 400, 431: self = .internalError
    case 401: self = .unauthenticated
    case 403: self = .permissionDenied
    case 404: self = .unimplemented
    case 429, 502, 503, 504: self = .unavailable
    // The mapping's own last row: "All other codes → UNKNOWN".
    default: self = .unknown
    }
  }

  /// The HTTP status Google Cloud APIs use for this code (the "HTTP Mapping" of each value in
  /// `google/rpc/code.proto`): OK 200, INVALID_ARGUMENT, FAILED_PRECONDITION and OUT_OF_RANGE
  /// 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404, ALREADY_EXISTS and ABORTED
  /// 409, RESOURCE_EXHAUSTED 429, CANCELLED 499, UNKNOWN, INTERNAL and DATA_LOSS 500,
  /// UNIMPLEMENTED 501, UNAVAILABLE 503, DEADLINE_EXCEEDED 504.
  ///
  /// For logs and for services that re-expose errors over HTTP. It is not the inverse of
  /// ``init(httpStatus:)``: gRPC says that mapping is neither symmetric nor one-to-one.
  public var httpEquivalent: Int {
    switch self {
    case .ok: 200
    case .invalidArgument, .failedPrecondition, .outOfRange: 400
    case .unauthenticated: 401
    case .permissionDenied: 403
    case .notFound: 404
    case .alreadyExists, .aborted: 409
    case .resourceExhausted: 429
    case .cancelled: 499
    case .unknown, .internalError, .dataLoss: 500
    case .unimplemented: 501
    case .unavailable: 503
    case .deadlineExceeded: 504
    }
  }
}
