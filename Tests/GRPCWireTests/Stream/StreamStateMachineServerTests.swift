import Testing

@testable import GRPCWire

/// The stream state machine in its server configuration, state by state: each of a server
/// stream's states (awaiting the request's headers, open before and after the response
/// started, answered, closed), reached through events only, meets every event, and each test
/// says what the machine answers and which state it is left in.
@Suite("Stream state machine, server configuration, state by state")
struct StreamStateMachineServerTests {
  typealias Machine = StreamStateMachine

  /// The open state after ``request``: gzip requests, our headers sent or not.
  static func open(headersSent: Bool) -> Machine.State {
    .open(Machine.Open(encoding: .gzip, headersSent: headersSent))
  }

  static let gzipHead = Machine.RequestHead(encoding: .gzip, acceptsGzip: true)

  // MARK: Events

  static let request = [
    HeaderField(name: ":method", value: "POST"),
    HeaderField(name: ":path", value: "/pkg.Service/Method"),
    HeaderField(name: "content-type", value: "application/grpc+proto"),
    HeaderField(name: "grpc-timeout", value: "5S"),
    HeaderField(name: "grpc-encoding", value: "gzip"),
    HeaderField(name: "grpc-accept-encoding", value: "identity, gzip"),
    HeaderField(name: "x-custom", value: "1"),
  ]

  static func request(replacing name: String, with value: String?) -> [HeaderField] {
    var fields = request.filter { $0.name != name }
    if let value { fields.append(HeaderField(name: name, value: value)) }
    return fields
  }

  static func served(_ path: String) -> Bool { path == "/pkg.Service/Method" }

  // MARK: States

  /// A machine in each state, reached through events only.
  enum Start: String, CaseIterable, CustomTestStringConvertible {
    case awaitingHeaders, openNotStarted, openStarted, answered, refused, closed
    var testDescription: String { rawValue }

    func machine() -> Machine {
      var machine = Machine.server()
      if self == .awaitingHeaders { return machine }
      if self == .refused {
        _ = machine.receiveRequestHeaders(request(replacing: ":method", with: "GET"), hasMethod: served)
        return machine
      }
      _ = machine.receiveRequestHeaders(StreamStateMachineServerTests.request, hasMethod: served)
      switch self {
      case .openStarted: _ = machine.responseQueued()
      case .answered: _ = machine.finish(bodyQueued: false)
      case .closed: _ = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel)
      case .awaitingHeaders, .openNotStarted, .refused: break
      }
      return machine
    }

    var state: Machine.State {
      switch self {
      case .awaitingHeaders: .awaitingHead
      case .openNotStarted: StreamStateMachineServerTests.open(headersSent: false)
      case .openStarted: StreamStateMachineServerTests.open(headersSent: true)
      case .answered, .refused: .answered
      case .closed: .closed
      }
    }
  }

  @Test("each state is reached as its name says", arguments: Start.allCases)
  func reached(_ start: Start) {
    let machine = start.machine()
    #expect(machine.state == start.state)
    #expect(machine.ignoresRequests == (start == .answered || start == .refused || start == .closed))
    #expect(machine.isClosed == (start == .closed))
  }

  // MARK: Awaiting headers

  @Test("awaiting headers: a valid request starts the call with its path and deadline")
  func validRequest() throws {
    var machine = Machine.server()
    let answer = machine.receiveRequestHeaders(Self.request, hasMethod: Self.served)
    #expect(answer == .start(path: "/pkg.Service/Method", head: Self.gzipHead, timeout: .seconds(5)))
    #expect(machine.state == Self.open(headersSent: false))
    #expect(machine.awaitsResponseStart)
    let data = machine.receiveData()
    #expect(data == .accept(.gzip))
  }

  @Test(
    "awaiting headers: each bad request is refused with its status, in gRPC's order",
    arguments: [
      (":method", "GET", StatusCode.unimplemented, 405),
      ("content-type", "text/html", .internalError, 415),
      ("grpc-encoding", "snappy", .unimplemented, 200),
      (":path", "/pkg.Service/Other", .unimplemented, 200),
      ("grpc-timeout", "5 seconds", .internalError, 200),
      ("grpc-timeout", "0S", .deadlineExceeded, 200),
    ])
  func refused(_ name: String, _ value: String, _ code: StatusCode, _ httpStatus: Int) {
    var machine = Machine.server()
    let answer = machine.receiveRequestHeaders(
      Self.request(replacing: name, with: value), hasMethod: Self.served)
    guard case .refuse(let status, let http) = answer else {
      Issue.record("\(name): \(value) was not refused: \(answer)")
      return
    }
    #expect(status.code == code)
    #expect(http == httpStatus)
    #expect(machine.state == .answered)
    let dropped = machine.receiveData()
    #expect(dropped == .drop)
    let finished = machine.finish(bodyQueued: false)
    #expect(finished == .ignore)
  }

  @Test("awaiting headers: a method and an encoding both wrong: the encoding is named first")
  func refusalOrder() {
    var machine = Machine.server()
    var fields = Self.request(replacing: "grpc-encoding", with: "br")
    fields = fields.filter { $0.name != ":path" } + [HeaderField(name: ":path", value: "/x/Y")]
    guard case .refuse(let status, _) = machine.receiveRequestHeaders(fields, hasMethod: Self.served)
    else {
      Issue.record("not refused")
      return
    }
    #expect(status.message.contains("grpc-encoding 'br'"))
  }

  @Test("awaiting headers: no timeout means no deadline; identity is the default encoding")
  func defaults() throws {
    var machine = Machine.server()
    let fields = Self.request.filter { !["grpc-timeout", "grpc-encoding", "grpc-accept-encoding"].contains($0.name) }
    let headers = machine.receiveRequestHeaders(fields, hasMethod: Self.served)
    let identity = Machine.RequestHead(encoding: .identity, acceptsGzip: false)
    #expect(headers == .start(path: "/pkg.Service/Method", head: identity, timeout: nil))
    let data = machine.receiveData()
    #expect(data == .accept(.identity))
  }

  @Test("awaiting headers: response, finish and data are not for it; a close needs no abort")
  func awaitingOtherEvents() {
    var machine = Machine.server()
    let dropped = machine.receiveData()
    #expect(dropped == .drop)
    let queued = machine.responseQueued()
    #expect(queued == .ignore)
    let finished = machine.finish(bodyQueued: true)
    #expect(finished == .ignore)
    #expect(machine.state == .awaitingHead)
    let interrupted = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel)
    #expect(interrupted == nil)
    #expect(machine.state == .closed)
  }

  // MARK: Open

  @Test("open, nothing sent: the first response bytes start the response, later ones resume it")
  func openFirstBytes() {
    var machine = Start.openNotStarted.machine()
    let queued = machine.responseQueued()
    #expect(queued == .startResponse)
    #expect(machine.state == Self.open(headersSent: true))
    #expect(!machine.awaitsResponseStart)
    let queued2 = machine.responseQueued()
    #expect(queued2 == .resumeBody)
  }

  @Test("open, nothing sent: finishing without a body is trailers-only; with one, starts it")
  func openFinish() {
    var bare = Start.openNotStarted.machine()
    let finished = bare.finish(bodyQueued: false)
    #expect(finished == .trailersOnly)
    #expect(bare.state == .answered)
    var withBody = Start.openNotStarted.machine()
    let finished2 = withBody.finish(bodyQueued: true)
    #expect(finished2 == .startResponse)
    #expect(withBody.state == .answered)
  }

  @Test("open, response started: finishing resumes the body to end it with the status")
  func openStartedFinish() {
    var machine = Start.openStarted.machine()
    let finished = machine.finish(bodyQueued: true)
    #expect(finished == .resumeBody)
    #expect(machine.state == .answered)
  }

  @Test(
    "open: request data goes to the handler; headers again are ignored",
    arguments: [Start.openNotStarted, .openStarted])
  func openRequests(_ start: Start) {
    var machine = start.machine()
    let data = machine.receiveData()
    #expect(data == .accept(.gzip))
    let headers = machine.receiveRequestHeaders(Self.request, hasMethod: Self.served)
    #expect(headers == .ignore)
    #expect(machine.state == start.state)
  }

  @Test("open: a close means the client reset the call: its handler must stop",
    arguments: [Start.openNotStarted, .openStarted])
  func openClosed(_ start: Start) {
    var machine = start.machine()
    let interrupted = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel)
    #expect(interrupted?.code == .cancelled)
    #expect(machine.state == .closed)
  }

  // MARK: Answered

  @Test("answered: requests dropped, a second finish ignored, bytes still resume the body; a close needs no abort",
    arguments: [Start.answered, .refused])
  func answered(_ start: Start) {
    var machine = start.machine()
    let dropped = machine.receiveData()
    #expect(dropped == .drop)
    let headers = machine.receiveRequestHeaders(Self.request, hasMethod: Self.served)
    #expect(headers == .ignore)
    let finished = machine.finish(bodyQueued: true)
    #expect(finished == .ignore)
    let queued = machine.responseQueued()
    #expect(queued == .resumeBody)
    #expect(machine.state == .answered)
    let interrupted = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel)
    #expect(interrupted == nil)
    #expect(machine.state == .closed)
  }

  // MARK: Closed

  @Test("closed: every event is ignored or dropped, and it stays closed")
  func closed() {
    var machine = Start.closed.machine()
    let headers = machine.receiveRequestHeaders(Self.request, hasMethod: Self.served)
    #expect(headers == .ignore)
    let dropped = machine.receiveData()
    #expect(dropped == .drop)
    let queued = machine.responseQueued()
    #expect(queued == .ignore)
    let finished = machine.finish(bodyQueued: false)
    #expect(finished == .ignore)
    let interrupted = machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel)
    #expect(interrupted == nil)
    #expect(machine.state == .closed)
  }
}
