import GRPCWire
import PeerSupport
import ProtoRuntime
import Testing

/// `grpc-status-details-bin` decoded into typed Google error details, with bytes built by the
/// generated google.rpc types; and malformed details that must never crash or change the code.
@Suite("RPCError details")
struct RPCErrorDetailsTests {
  static func rpcStatus(code: StatusCode, _ details: [GoogleProtobuf.AnyMessage]) -> [UInt8] {
    var status = GoogleRPC.Status()
    status.code = Int32(code.rawValue)
    status.message = "invalid trip name"
    status.details = details
    return status.serializedBytes()
  }

  static var errorInfo: GoogleRPC.ErrorInfo {
    var info = GoogleRPC.ErrorInfo()
    info.reason = "INVALID_TRIP_NAME"
    info.domain = "fleetengine.googleapis.com"
    info.metadata = ["tripName": "trips/t1"]
    return info
  }

  static var retryInfo: GoogleRPC.RetryInfo {
    var info = GoogleRPC.RetryInfo()
    info.retryDelay = GoogleProtobuf.Duration(.milliseconds(1_500))
    return info
  }

  static var badRequest: GoogleRPC.BadRequest {
    var request = GoogleRPC.BadRequest()
    for (field, description) in [("name", "must be providers/{p}/trips/{t}"), ("view", "unknown")] {
      var violation = GoogleRPC.BadRequest.FieldViolation()
      violation.field = field
      violation.description = description
      request.fieldViolations.append(violation)
    }
    return request
  }

  static var unknownAny: GoogleProtobuf.AnyMessage {
    var any = GoogleProtobuf.AnyMessage()
    any.typeURL = "type.googleapis.com/example.fleet.v1.Mystery"
    any.value = [0x08, 0x2A]
    return any
  }

  @Test("ErrorInfo, RetryInfo, BadRequest and an unknown Any decode in order, typed")
  func typedDetails() {
    let bytes = Self.rpcStatus(
      code: .invalidArgument,
      [
        .init(packing: Self.errorInfo), .init(packing: Self.retryInfo),
        .init(packing: Self.badRequest), Self.unknownAny,
      ])
    let error = RPCError(
      status: Status(code: .invalidArgument, message: "invalid trip name", detailsBytes: bytes),
      metadata: ["x-request-id": "r1"])

    #expect(error.code == .invalidArgument)
    #expect(error.detailsProblem == nil)
    #expect(
      error.details == [
        .errorInfo(Self.errorInfo), .retryInfo(Self.retryInfo), .badRequest(Self.badRequest),
        .other(Self.unknownAny),
      ])
    #expect(error.errorInfo?.reason == "INVALID_TRIP_NAME")
    #expect(error.errorInfo?.domain == "fleetengine.googleapis.com")
    #expect(error.errorInfo?.metadata["tripName"] == "trips/t1")
    #expect(error.retryDelay == .milliseconds(1_500))
    #expect(error.badRequest?.fieldViolations.map(\.field) == ["name", "view"])
    #expect(error.quotaFailure == nil)
    #expect(error.debugInfo == nil)
    #expect(error.metadata.first("x-request-id") == "r1")
    // The bytes are kept as they came, to pass the status on unchanged.
    #expect(error.status.detailsBytes == bytes)
    #expect(error.description.contains("ErrorInfo(reason: INVALID_TRIP_NAME"))
  }

  static var everyKnownDetail: [ErrorDetail] {
    var debug = GoogleRPC.DebugInfo()
    debug.stackEntries = ["a.swift:1", "b.swift:2"]
    debug.detail = "nil deref"
    var quota = GoogleRPC.QuotaFailure()
    var quotaViolation = GoogleRPC.QuotaFailure.Violation()
    quotaViolation.subject = "project:fleet"
    quotaViolation.description = "GetTrip per minute"
    quota.violations = [quotaViolation]
    var precondition = GoogleRPC.PreconditionFailure()
    var preconditionViolation = GoogleRPC.PreconditionFailure.Violation()
    preconditionViolation.type = "TOS"
    preconditionViolation.subject = "google.com/cloud"
    precondition.violations = [preconditionViolation]
    var request = GoogleRPC.RequestInfo()
    request.requestID = "req-42"
    var resource = GoogleRPC.ResourceInfo()
    resource.resourceType = "trip"
    resource.resourceName = "providers/p/trips/t"
    var help = GoogleRPC.Help()
    var link = GoogleRPC.Help.Link()
    link.url = "https://developers.google.com/maps/documentation/mobility"
    help.links = [link]
    var localized = GoogleRPC.LocalizedMessage()
    localized.locale = "de-DE"
    localized.message = "Fahrt nicht gefunden"
    return [
      .errorInfo(errorInfo), .retryInfo(retryInfo), .debugInfo(debug), .quotaFailure(quota),
      .preconditionFailure(precondition), .badRequest(badRequest), .requestInfo(request),
      .resourceInfo(resource), .help(help), .localizedMessage(localized), .other(unknownAny),
    ]
  }

  @Test("every detail type survives packing and decoding", arguments: everyKnownDetail)
  func eachDetailType(_ detail: ErrorDetail) {
    let bytes = Self.rpcStatus(code: .notFound, [detail.packed])
    let error = RPCError(status: Status(code: .notFound, detailsBytes: bytes), metadata: [:])
    #expect(error.details == [detail])
    #expect(error.detailsProblem == nil)
    #expect(ErrorDetail(unpacking: detail.packed) == detail)
  }

  @Test("each typed accessor finds its detail")
  func accessors() {
    var error = RPCError(code: .failedPrecondition, message: "")
    error.details = Self.everyKnownDetail
    #expect(error.errorInfo != nil)
    #expect(error.retryInfo != nil)
    #expect(error.debugInfo?.detail == "nil deref")
    #expect(error.quotaFailure?.violations.first?.subject == "project:fleet")
    #expect(error.preconditionFailure?.violations.first?.type == "TOS")
    #expect(error.badRequest != nil)
    #expect(error.requestInfo?.requestID == "req-42")
    #expect(error.resourceInfo?.resourceName == "providers/p/trips/t")
    #expect(error.help?.links.first?.url.hasPrefix("https://") == true)
    #expect(error.localizedMessage?.locale == "de-DE")
    // Details made here are encoded into status for re-sending, and decode back the same.
    let resent = RPCError(status: error.status, metadata: [:])
    #expect(resent.details == error.details)
  }

  @Test("a negative retry delay is reported as zero; no delay as nil")
  func retryDelayEdges() {
    var negative = GoogleRPC.RetryInfo()
    negative.retryDelay = GoogleProtobuf.Duration(.seconds(-3))
    var error = RPCError(code: .unavailable, message: "")
    error.details = [.retryInfo(negative)]
    #expect(error.retryDelay == .zero)
    error.details = [.retryInfo(GoogleRPC.RetryInfo())]
    #expect(error.retryDelay == nil)
  }

  // name, details bytes
  static let malformed: [(String, [UInt8])] = [
    ("one garbage byte", [0xFF]),
    ("a truncated length-delimited field", [0x12, 0x05, 0x01]),
    (
      "a varint that never ends",
      [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    ),
    ("a message that is not UTF-8", [0x12, 0x02, 0xC3, 0x28]),
    ("a details entry that is not an Any", [0x1A, 0x02, 0x08, 0x01]),
    ("text instead of protobuf", Array("not protobuf at all".utf8)),
  ]

  @Test(
    "malformed details never crash, keep the wire code and say what was wrong", arguments: malformed
  )
  func malformedDetails(_ what: String, _ bytes: [UInt8]) {
    let error = RPCError(
      status: Status(code: .permissionDenied, message: "denied", detailsBytes: bytes), metadata: [:]
    )
    #expect(error.code == .permissionDenied, "\(what)")
    #expect(error.message == "denied")
    #expect(error.details.isEmpty)
    #expect(error.detailsProblem?.contains("not a google.rpc.Status") == true, "\(what)")
  }

  @Test("details whose code disagrees with grpc-status are ignored and the wire code kept")
  func disagreeingCode() {
    let bytes = Self.rpcStatus(code: .notFound, [.init(packing: Self.errorInfo)])
    let error = RPCError(
      status: Status(code: .invalidArgument, message: "bad", detailsBytes: bytes), metadata: [:])
    #expect(error.code == .invalidArgument)
    #expect(error.details.isEmpty)
    #expect(error.errorInfo == nil)
    let problem = error.detailsProblem ?? ""
    #expect(problem.contains("NOT_FOUND"))
    #expect(problem.contains("INVALID_ARGUMENT"))
  }

  @Test("a known detail type whose bytes do not decode is kept as .other with a note")
  func undecodableKnownType() {
    var broken = GoogleProtobuf.AnyMessage()
    broken.typeURL = "type.googleapis.com/google.rpc.RetryInfo"
    broken.value = [0x0A, 0x05]
    let bytes = Self.rpcStatus(code: .unavailable, [broken, .init(packing: Self.errorInfo)])
    let error = RPCError(status: Status(code: .unavailable, detailsBytes: bytes), metadata: [:])
    #expect(error.code == .unavailable)
    #expect(error.details == [.other(broken), .errorInfo(Self.errorInfo)])
    #expect(error.retryDelay == nil)
    #expect(error.detailsProblem?.contains("google.rpc.RetryInfo") == true)
  }

  @Test("details that are not base64 are reported, keeping the wire code")
  func badBase64() {
    let error = RPCError(
      grpcStatus: "8", grpcMessage: "quota%20exceeded", grpcStatusDetailsBin: "!!not base64!!",
      metadata: [:])
    #expect(error.code == .resourceExhausted)
    #expect(error.message == "quota exceeded")
    #expect(error.details.isEmpty)
    #expect(error.detailsProblem?.contains("not base64") == true)
  }

  @Test("received trailer values with base64 details decode in one step")
  func fromTrailerValues() {
    let bytes = Self.rpcStatus(code: .resourceExhausted, [.init(packing: Self.retryInfo)])
    let header = Status(code: .resourceExhausted, detailsBytes: bytes).headerFields()
      .first { $0.name == "grpc-status-details-bin" }?.value
    let error = RPCError(
      grpcStatus: "8", grpcMessage: nil, grpcStatusDetailsBin: header, metadata: [:])
    #expect(error.retryDelay == .milliseconds(1_500))
    #expect(error.detailsProblem == nil)
  }

  @Test("thousands of random details byte strings never crash or change the code")
  func randomDetails() {
    var random = FuzzRandom(seed: 0xDE7A_115)
    let valid = Self.rpcStatus(
      code: .aborted, [.init(packing: Self.errorInfo), .init(packing: Self.badRequest)])
    for round in 0..<3_000 {
      var bytes: [UInt8]
      if round.isMultiple(of: 2) {
        bytes = random.bytes(random.next(upTo: 64))
      } else {
        // Corrupt a few bytes of a valid status, which reaches deeper into the decoder.
        bytes = valid
        for _ in 0..<(1 + random.next(upTo: 3)) {
          bytes[random.next(upTo: bytes.count)] = UInt8(truncatingIfNeeded: random.next())
        }
      }
      let error = RPCError(status: Status(code: .aborted, detailsBytes: bytes), metadata: [:])
      #expect(error.code == .aborted)
      // No problem reported means the bytes really were a google.rpc.Status for ABORTED.
      if error.detailsProblem == nil {
        #expect((try? GoogleRPC.Status(serializedBytes: bytes))?.code == 10)
      }
    }
  }
}
