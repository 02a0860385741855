import Testing

@testable import GRPCWire

/// The client call's state machine, state by state: each of its three states (awaiting
/// headers, receiving, closed) meets every event it can get, and each test says what the
/// machine answers and which state it is left in.
@Suite("Client call state machine, state by state")
struct ClientCallStateMachineTests {
  // MARK: Events

  static let responseHeaders = [
    HeaderField(name: ":status", value: "200"),
    HeaderField(name: "content-type", value: "application/grpc"),
    HeaderField(name: "grpc-encoding", value: "gzip"),
    HeaderField(name: "x-initial", value: "1"),
  ]
  static let okTrailers = [
    HeaderField(name: "grpc-status", value: "0"), HeaderField(name: "x-trailing", value: "2"),
  ]
  static let trailersOnlyFailure = [
    HeaderField(name: ":status", value: "200"),
    HeaderField(name: "content-type", value: "application/grpc"),
    HeaderField(name: "grpc-status", value: "5"), HeaderField(name: "grpc-message", value: "gone"),
  ]
  static let notGRPC = [
    HeaderField(name: ":status", value: "200"), HeaderField(name: "content-type", value: "text/html"),
  ]
  static let httpError = [HeaderField(name: ":status", value: "503")]

  // MARK: States

  /// A machine in each state, reached through events only.
  enum Start: String, CaseIterable, CustomTestStringConvertible {
    case awaitingHeaders, receiving, closed
    var testDescription: String { rawValue }

    func machine() -> ClientCallStateMachine {
      var machine = ClientCallStateMachine()
      switch self {
      case .awaitingHeaders: break
      case .receiving: _ = machine.receiveHeaders(ClientCallStateMachineTests.responseHeaders, endStream: false)
      case .closed: machine.close()
      }
      return machine
    }
  }

  /// Whether `machine` is closed: it says so, and ignores what comes next.
  func expectClosed(_ machine: inout ClientCallStateMachine, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(machine.isClosed, sourceLocation: sourceLocation)
    guard case .ignore = machine.receiveData() else {
      Issue.record("a closed machine accepted DATA", sourceLocation: sourceLocation)
      return
    }
  }

  /// Records `comment` as a failure (returns nothing, for `return fail(…)` in a guard).
  func fail(_ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record(comment, sourceLocation: sourceLocation)
  }

  func violation(_ answer: ClientCallStateMachine.OnHeaders) -> RPCError? {
    if case .protocolViolation(let error) = answer { return error }
    return nil
  }

  // MARK: Awaiting headers

  @Test("awaiting headers + response headers: the head (metadata, encoding); now receiving")
  func awaitingResponseHeaders() {
    var machine = Start.awaitingHeaders.machine()
    guard case .responseHead(let head) = machine.receiveHeaders(Self.responseHeaders, endStream: false)
    else { return fail("no response head") }
    #expect(head.encoding == .gzip)
    #expect(head.metadata.first("x-initial") == "1")
    #expect(!machine.isClosed)
    guard case .accept(.gzip) = machine.receiveData() else { return fail("DATA refused") }
  }

  @Test("awaiting headers + a block ending the stream: a trailers-only outcome; closed")
  func awaitingTrailersOnly() {
    var machine = Start.awaitingHeaders.machine()
    guard case .finished(.failure(let error)) = machine.receiveHeaders(Self.trailersOnlyFailure, endStream: true)
    else { return fail("no outcome") }
    #expect(error.code == .notFound && error.message == "gone", "\(error)")
    expectClosed(&machine)
  }

  @Test("awaiting headers + an HTTP error status: its gRPC mapping as a violation; closed")
  func awaitingHTTPError() {
    var machine = Start.awaitingHeaders.machine()
    let error = violation(machine.receiveHeaders(Self.httpError, endStream: false))
    #expect(error?.code == .unavailable, "\(String(describing: error))")
    expectClosed(&machine)
  }

  @Test("awaiting headers + a content-type that is not gRPC: UNKNOWN as a violation; closed")
  func awaitingNotGRPC() {
    var machine = Start.awaitingHeaders.machine()
    let error = violation(machine.receiveHeaders(Self.notGRPC, endStream: false))
    #expect(error?.code == .unknown && error?.message.contains("text/html") == true)
    expectClosed(&machine)
  }

  @Test("awaiting headers + DATA: INTERNAL as a violation; closed")
  func awaitingData() {
    var machine = Start.awaitingHeaders.machine()
    guard case .protocolViolation(let error) = machine.receiveData() else {
      return fail("DATA before headers was accepted")
    }
    #expect(error.code == .internalError)
    expectClosed(&machine)
  }

  // MARK: Receiving

  @Test("receiving + DATA: accepted with the head's encoding; still receiving")
  func receivingData() {
    var machine = Start.receiving.machine()
    for _ in 0..<3 {
      guard case .accept(.gzip) = machine.receiveData() else { return fail("DATA refused") }
    }
    #expect(!machine.isClosed)
  }

  @Test("receiving + trailers: the outcome with the trailers' metadata; closed")
  func receivingTrailers() {
    var machine = Start.receiving.machine()
    guard case .finished(.success(let trailers)) = machine.receiveHeaders(Self.okTrailers, endStream: true)
    else { return fail("no OK outcome") }
    #expect(trailers.first("x-trailing") == "2")
    expectClosed(&machine)
  }

  @Test("receiving + a second block that does not end the stream: INTERNAL violation; closed")
  func receivingSecondHeaders() {
    var machine = Start.receiving.machine()
    let error = violation(machine.receiveHeaders(Self.responseHeaders, endStream: false))
    #expect(error?.code == .internalError)
    expectClosed(&machine)
  }

  // MARK: Every open state

  @Test(
    "open + stream closed without trailers (NO_ERROR): INTERNAL; closed",
    arguments: [Start.awaitingHeaders, .receiving])
  func closedWithoutTrailers(_ start: Start) {
    var machine = start.machine()
    let error = machine.streamClosedWithoutTrailers(http2ErrorCode: HTTP2ErrorCode.noError)
    #expect(error?.code == .internalError && error?.message.contains("trailers") == true)
    expectClosed(&machine)
  }

  @Test(
    "open + stream reset: the reset code's status (CANCEL: CANCELLED, REFUSED_STREAM: UNAVAILABLE); closed",
    arguments: [Start.awaitingHeaders, .receiving])
  func reset(_ start: Start) {
    for (code, status) in [
      (HTTP2ErrorCode.cancel, StatusCode.cancelled), (HTTP2ErrorCode.refusedStream, .unavailable),
      (HTTP2ErrorCode.enhanceYourCalm, .resourceExhausted),
    ] {
      var machine = start.machine()
      #expect(machine.streamClosedWithoutTrailers(http2ErrorCode: code)?.code == status)
      expectClosed(&machine)
    }
  }

  @Test("open + a local close: closed", arguments: [Start.awaitingHeaders, .receiving])
  func localClose(_ start: Start) {
    var machine = start.machine()
    machine.close()
    expectClosed(&machine)
  }

  // MARK: Closed

  @Test("closed + any event: ignored, nothing reported, still closed")
  func closedIgnoresEverything() {
    var machine = Start.closed.machine()
    for (fields, endStream) in [
      (Self.responseHeaders, false), (Self.okTrailers, true), (Self.httpError, false),
      (Self.notGRPC, false), (Self.trailersOnlyFailure, true),
    ] {
      guard case .ignore = machine.receiveHeaders(fields, endStream: endStream) else {
        return fail("a closed machine answered a header block")
      }
    }
    #expect(machine.streamClosedWithoutTrailers(http2ErrorCode: HTTP2ErrorCode.noError) == nil)
    #expect(machine.streamClosedWithoutTrailers(http2ErrorCode: HTTP2ErrorCode.cancel) == nil)
    machine.close()
    expectClosed(&machine)
  }
}
