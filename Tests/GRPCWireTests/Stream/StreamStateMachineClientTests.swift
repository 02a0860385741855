import Testing

@testable import GRPCWire

/// The stream state machine in its client configuration, state by state: each state a
/// client's stream can be in (awaiting headers, open for messages, closed) meets every event
/// it can get, and each test says what the machine answers and which state it is left in.
/// The server's `answered` state is unreachable from client events (no event of a client
/// leads there), as the last test shows.
@Suite("Stream state machine, client configuration, state by state")
struct StreamStateMachineClientTests {
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

    func machine() -> StreamStateMachine {
      var machine = StreamStateMachine.client()
      switch self {
      case .awaitingHeaders: break
      case .receiving: _ = machine.receiveResponseHeaders(StreamStateMachineClientTests.responseHeaders, endStream: false)
      case .closed: machine.close()
      }
      return machine
    }
  }

  /// Whether `machine` is closed: it says so, and ignores what comes next.
  func expectClosed(_ machine: inout StreamStateMachine, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(machine.isClosed, sourceLocation: sourceLocation)
    guard case .drop = machine.receiveData() else {
      Issue.record("a closed machine accepted DATA", sourceLocation: sourceLocation)
      return
    }
  }

  /// Records `comment` as a failure (returns nothing, for `return fail(…)` in a guard).
  func fail(_ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record(comment, sourceLocation: sourceLocation)
  }

  func violation(_ answer: StreamStateMachine.OnResponseHeaders) -> RPCError? {
    if case .protocolViolation(let error) = answer { return error }
    return nil
  }

  // MARK: Awaiting headers

  @Test("awaiting headers + response headers: the head (metadata, encoding); now receiving")
  func awaitingResponseHeaders() {
    var machine = Start.awaitingHeaders.machine()
    guard case .responseHead(let head) = machine.receiveResponseHeaders(Self.responseHeaders, endStream: false)
    else { return fail("no response head") }
    #expect(head.encoding == .gzip)
    #expect(head.metadata.first("x-initial") == "1")
    #expect(!machine.isClosed)
    guard case .accept(.gzip) = machine.receiveData() else { return fail("DATA refused") }
  }

  @Test("awaiting headers + a block ending the stream: a trailers-only outcome; closed")
  func awaitingTrailersOnly() {
    var machine = Start.awaitingHeaders.machine()
    guard case .finished(.failure(let error)) = machine.receiveResponseHeaders(Self.trailersOnlyFailure, endStream: true)
    else { return fail("no outcome") }
    #expect(error.code == .notFound && error.message == "gone", "\(error)")
    expectClosed(&machine)
  }

  @Test("awaiting headers + an HTTP error status: its gRPC mapping as a violation; closed")
  func awaitingHTTPError() {
    var machine = Start.awaitingHeaders.machine()
    let error = violation(machine.receiveResponseHeaders(Self.httpError, endStream: false))
    #expect(error?.code == .unavailable, "\(String(describing: error))")
    expectClosed(&machine)
  }

  @Test("awaiting headers + a content-type that is not gRPC: UNKNOWN as a violation; closed")
  func awaitingNotGRPC() {
    var machine = Start.awaitingHeaders.machine()
    let error = violation(machine.receiveResponseHeaders(Self.notGRPC, endStream: false))
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
    guard case .finished(.success(let trailers)) = machine.receiveResponseHeaders(Self.okTrailers, endStream: true)
    else { return fail("no OK outcome") }
    #expect(trailers.first("x-trailing") == "2")
    expectClosed(&machine)
  }

  @Test("receiving + a second block that does not end the stream: INTERNAL violation; closed")
  func receivingSecondHeaders() {
    var machine = Start.receiving.machine()
    let error = violation(machine.receiveResponseHeaders(Self.responseHeaders, endStream: false))
    #expect(error?.code == .internalError)
    expectClosed(&machine)
  }

  // MARK: Every open state

  @Test(
    "open + stream closed without trailers (NO_ERROR): INTERNAL; closed",
    arguments: [Start.awaitingHeaders, .receiving])
  func closedWithoutTrailers(_ start: Start) {
    var machine = start.machine()
    let error = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.noError)
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
      #expect(machine.streamClosed(http2ErrorCode: code)?.code == status)
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
      guard case .ignore = machine.receiveResponseHeaders(fields, endStream: endStream) else {
        return fail("a closed machine answered a header block")
      }
    }
    #expect(machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.noError) == nil)
    #expect(machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel) == nil)
    machine.close()
    expectClosed(&machine)
  }

  @Test("no client event leads to answered: from every state, every event leaves it open or closed")
  func answeredUnreachable() {
    for start in Start.allCases {
      for event in 0..<4 {
        var machine = start.machine()
        switch event {
        case 0: _ = machine.receiveResponseHeaders(Self.responseHeaders, endStream: false)
        case 1: _ = machine.receiveResponseHeaders(Self.okTrailers, endStream: true)
        case 2: _ = machine.receiveData()
        default: _ = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel)
        }
        #expect(machine.state != .answered, "\(start) + event \(event)")
      }
    }
  }
}
