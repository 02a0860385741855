import Foundation
import GRPCTestingProtos
import GRPCTestingServices
import GRPCWire

extension FuzzTarget {
  /// Our server role (``GRPCServer`` serving grpc.testing.TestService, glitch limiter on) fed
  /// a client's byte stream after a valid preface and SETTINGS.
  static let sessionServer = session(
    "session-server",
    "GRPCServer fed a client's bytes after preface+SETTINGS: closes on EOF, never hangs",
    midCall: false, seeds: serverSessionSeeds(midCall:), run: fuzzServerSession(_:midCall:))

  /// The same, from the middle of a call: a FullDuplexCall on stream 1 has had a response.
  static let sessionServerMidCall = session(
    "session-server",
    "GRPCServer fed a client's bytes during a FullDuplexCall: closes on EOF, never hangs",
    midCall: true, seeds: serverSessionSeeds(midCall:), run: fuzzServerSession(_:midCall:))
}

/// The server every input talks to, started on first use and never stopped: a real one, on
/// its own event loop, with the default options (limits and glitch limiter included).
private let fuzzServerPort: Int = {
  let server = GRPCServer(options: ServerOptions())
  TestServiceHandlers.register(on: server, unaryOnLoop: true)
  let port = Handoff<Int>()
  let running = Handoff<GRPCServer>()
  running.value = server
  Task {
    port.value = try? await running.value!.start(host: "127.0.0.1", port: 0)
    port.ready.signal()
  }
  port.ready.wait()
  guard let value = port.value else { fail("fleet-fuzz: the server did not start") }
  keptServer = running
  return value
}()

nonisolated(unsafe) private var keptServer: Handoff<GRPCServer>?

/// Inputs come from 127.1.0.0/16, a different address each time round: the server's glitch
/// buckets are per client address, and one address would soon have none left.
nonisolated(unsafe) private var inputCount: UInt32 = 0

private let fullDuplexPath = "/grpc.testing.TestService/FullDuplexCall"

/// One StreamingOutputCallRequest asking for one response of 10 bytes.
private let streamingRequest: [UInt8] = {
  var parameters = GRPCTesting.ResponseParameters()
  parameters.size = 10
  var request = GRPCTesting.StreamingOutputCallRequest()
  request.responseParameters = [parameters]
  return request.serializedBytes()
}()

/// A request's header block: POST and http from HPACK's static table, the rest literal.
func requestHeaderBlock(path: String, _ extra: [(String, String)] = []) -> [UInt8] {
  var block: [UInt8] = [0x83, 0x86]
  block += literalField(":path", path)
  block += literalField(":authority", "localhost")
  block += literalField("content-type", "application/grpc")
  block += literalField("te", "trailers")
  for (name, value) in extra { block += literalField(name, value) }
  return block
}

private func fuzzServerSession(_ input: UnsafeRawBufferPointer, midCall: Bool) {
  let port = fuzzServerPort
  inputCount &+= 1
  let source = 0x7F01_0000 | (inputCount & 0xFFFF)
  guard var socket = SessionSocket.connect(port: port, from: source) else {
    invariant(false, "cannot connect to the server: \(String(cString: strerror(errno)))")
    return
  }
  defer { socket.close() }
  let deadline = ContinuousClock.now + sessionStepTimeout
  var opening = clientPreface + frame(.settings)
  if midCall {
    opening += frame(.headers, flags: endHeaders, stream: 1, requestHeaderBlock(path: fullDuplexPath))
    opening += frame(.data, stream: 1, grpcMessage(streamingRequest))
  }
  invariant(socket.write(opening, by: deadline), "the server did not take the opening")
  if midCall {
    let answered = socket.read(
      until: { containsFrame($0.received, .data, stream: 1) }, by: deadline)
    invariant(answered && !socket.sawEOF, "no response to the FullDuplexCall's first request")
  }
  feed(input, to: &socket, peer: "the server")
}

// MARK: Seeds

/// What clients send after the preface and SETTINGS: calls of each kind, and the frames the
/// glitch limiter counts.
private func serverSessionSeeds(midCall: Bool) -> [(name: String, bytes: [UInt8])] {
  let ack = frame(.settings, flags: 0x1)
  let empty = grpcMessage([])
  func call(_ stream: UInt32, _ path: String, _ messages: [[UInt8]], _ extra: [(String, String)] = [])
    -> [UInt8]
  {
    var bytes = frame(.headers, flags: endHeaders, stream: stream, requestHeaderBlock(path: path, extra))
    for (index, message) in messages.enumerated() {
      bytes += frame(.data, flags: index == messages.count - 1 ? endStream : 0, stream: stream, message)
    }
    return bytes
  }
  let service = "/grpc.testing.TestService/"
  var unaryRequest = GRPCTesting.SimpleRequest()
  unaryRequest.responseSize = 100
  let unary = grpcMessage(unaryRequest.serializedBytes())
  let next: UInt32 = midCall ? 3 : 1
  var seeds: [(String, [UInt8])] = [
    ("empty-call", ack + call(next, service + "EmptyCall", [empty])),
    ("unary-call", ack + call(next, service + "UnaryCall", [unary])),
    ("unary-call-timeout", ack + call(next, service + "UnaryCall", [unary], [("grpc-timeout", "1S")])),
    ("bad-timeout", ack + call(next, service + "UnaryCall", [unary], [("grpc-timeout", "1X")])),
    ("streaming-output", ack + call(next, service + "StreamingOutputCall", [grpcMessage(streamingRequest)])),
    ("streaming-input", ack + call(next, service + "StreamingInputCall", [empty, empty, empty])),
    ("unknown-method", ack + call(next, "/no.Such/Method", [empty])),
    ("rst-after-headers", ack + call(next, service + "EmptyCall", [])
      + frame(.rstStream, stream: next, [0, 0, 0, 8])),
    ("zero-window-update", ack + frame(.windowUpdate, stream: 0, [0, 0, 0, 0])),
    ("ping", ack + frame(.ping, [1, 2, 3, 4, 5, 6, 7, 8])),
    ("priority", ack + [0, 0, 5, 2, 0, 0, 0, 0, UInt8(next), 0, 0, 0, 0, 16]),
    ("unknown-frame", ack + [0, 0, 3, 0xEE, 0, 0, 0, 0, 0, 1, 2, 3]),
    ("goaway", ack + frame(.goAway, [0, 0, 0, 0, 0, 0, 0, 0])),
  ]
  if midCall {
    seeds += [
      ("next-request", frame(.data, stream: 1, grpcMessage(streamingRequest))),
      ("half-close", frame(.data, flags: endStream, stream: 1)),
      ("cancel", frame(.rstStream, stream: 1, [0, 0, 0, 8])),
      ("window-update", frame(.windowUpdate, stream: 1, [0, 1, 0, 0])),
      ("zero-window-update-on-call", frame(.windowUpdate, stream: 1, [0, 0, 0, 0])),
      ("empty-data", frame(.data, stream: 1)),
      ("data-after-end", frame(.data, flags: endStream, stream: 1) + frame(.data, stream: 1, empty)),
    ]
  }
  return seeds.map { (name: $0.0, bytes: $0.1) }
}
