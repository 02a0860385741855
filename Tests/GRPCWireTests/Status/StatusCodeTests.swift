import GRPCWire
import Testing

/// The 17 codes: numbers, names, HTTP both ways, and grpc-status parsing. Every table here is
/// the spec's table, row for row. (Categories and explanations are FleetConsumer's:
/// FleetConsumerTests' ErrorTaxonomyTests.)
@Suite("Status codes")
struct StatusCodeTests {
  // code, wire number, canonical name, Google Cloud HTTP equivalent
  // (google/rpc/code.proto "HTTP Mapping").
  static let codes: [(StatusCode, Int, String, Int)] = [
    (.ok, 0, "OK", 200),
    (.cancelled, 1, "CANCELLED", 499),
    (.unknown, 2, "UNKNOWN", 500),
    (.invalidArgument, 3, "INVALID_ARGUMENT", 400),
    (.deadlineExceeded, 4, "DEADLINE_EXCEEDED", 504),
    (.notFound, 5, "NOT_FOUND", 404),
    (.alreadyExists, 6, "ALREADY_EXISTS", 409),
    (.permissionDenied, 7, "PERMISSION_DENIED", 403),
    (.resourceExhausted, 8, "RESOURCE_EXHAUSTED", 429),
    (.failedPrecondition, 9, "FAILED_PRECONDITION", 400),
    (.aborted, 10, "ABORTED", 409),
    (.outOfRange, 11, "OUT_OF_RANGE", 400),
    (.unimplemented, 12, "UNIMPLEMENTED", 501),
    (.internalError, 13, "INTERNAL", 500),
    (.unavailable, 14, "UNAVAILABLE", 503),
    (.dataLoss, 15, "DATA_LOSS", 500),
    (.unauthenticated, 16, "UNAUTHENTICATED", 401),
  ]

  @Test("each code has its wire number, canonical name and HTTP equivalent", arguments: codes)
  func codeRow(_ code: StatusCode, _ number: Int, _ name: String, _ http: Int) {
    #expect(code.rawValue == number)
    #expect(StatusCode(rawValue: number) == code)
    #expect(code.name == name)
    #expect(code.description == name)
    #expect(StatusCode(name: name) == code)
    #expect(code.httpEquivalent == http)
  }

  @Test("the table covers all 17 codes, 0 through 16")
  func tableIsComplete() {
    #expect(StatusCode.allCases.count == 17)
    #expect(Set(Self.codes.map(\.0)) == Set(StatusCode.allCases))
    #expect(StatusCode.allCases.map(\.rawValue) == Array(0...16))
  }

  @Test(
    "names that are not canonical are rejected",
    arguments: ["", "ok", "Internal", "INTERNAL_ERROR", "CANCELED", " OK", "UNAVAILABLE "])
  func badNames(_ name: String) {
    #expect(StatusCode(name: name) == nil)
  }

  // value, expected code, expected original number (nil row: not a number at all)
  static let grpcStatusValues: [(String, StatusCode?, Int?)] = [
    ("0", .ok, 0),
    ("3", .invalidArgument, 3),
    ("13", .internalError, 13),
    ("16", .unauthenticated, 16),
    ("007", .permissionDenied, 7),
    ("17", .unknown, 17),
    ("-1", .unknown, -1),
    ("1000", .unknown, 1000),
    ("99999999999999999999999", .unknown, Int.max),
    ("-99999999999999999999999", .unknown, Int.min),
    ("abc", nil, nil),
    (" 3", nil, nil),
    ("3 ", nil, nil),
    ("", nil, nil),
    ("-", nil, nil),
    ("+3", nil, nil),
    ("3.0", nil, nil),
    ("0x3", nil, nil),
    ("٣", nil, nil),
  ]

  @Test("grpc-status values parse to a code and the number sent", arguments: grpcStatusValues)
  func parseGRPCStatus(_ value: String, _ code: StatusCode?, _ original: Int?) {
    let parsed = StatusCode.parse(grpcStatus: value)
    #expect(parsed?.code == code)
    #expect(parsed?.original == original)
    // A Substring parses the same as a String.
    #expect(StatusCode.parse(grpcStatus: value[...])?.original == original)
  }

  // gRPC's doc/http-grpc-status-mapping.md, plus rows its "all other codes" covers.
  static let httpStatuses: [(Int, StatusCode)] = [
    (400, .internalError),
    (401, .unauthenticated),
    (403, .permissionDenied),
    (404, .unimplemented),
    (429, .unavailable),
    (431, .internalError),
    (502, .unavailable),
    (503, .unavailable),
    (504, .unavailable),
    (200, .unknown),
    (100, .unknown),
    (301, .unknown),
    (405, .unknown),
    (415, .unknown),
    (500, .unknown),
    (501, .unknown),
    (0, .unknown),
    (-1, .unknown),
  ]

  @Test("a non-gRPC HTTP status maps as gRPC's HTTP-to-gRPC table says", arguments: httpStatuses)
  func httpMapping(_ httpStatus: Int, _ code: StatusCode) {
    #expect(StatusCode(httpStatus: httpStatus) == code)
  }
}
