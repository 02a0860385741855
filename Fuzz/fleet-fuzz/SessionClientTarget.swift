import Foundation
import GRPCTestingProtos
import GRPCWire

extension FuzzTarget {
  /// Our client role (a ``GRPCChannel`` making a StreamingOutputCall) fed a server's byte
  /// stream after a valid SETTINGS.
  static let sessionClient = session(
    "session-client",
    "GRPCChannel's call fed a server's bytes after SETTINGS: ends, closes on EOF",
    midCall: false, seeds: clientSessionSeeds(midCall:), run: fuzzClientSession(_:midCall:))

  /// The same, from the middle of the call: its response headers and first message are in.
  static let sessionClientMidCall = session(
    "session-client",
    "GRPCChannel's call fed a server's bytes after its first response: ends, closes",
    midCall: true, seeds: clientSessionSeeds(midCall:), run: fuzzClientSession(_:midCall:))
}

/// The fake server's socket: each input's channel connects to it once.
private let fuzzListener = SessionListener()
/// One loop for every input's channel (each closed after its input), as a service would
/// share one between channels.
private let fuzzClientLoop = EventLoop(name: "fuzz-client")

private let streamingOutputPath = "/grpc.testing.TestService/StreamingOutputCall"

/// The response headers of a gRPC call: `:status 200` from HPACK's static table.
let responseHeaderBlock: [UInt8] = [0x88] + literalField("content-type", "application/grpc")

/// Trailers with `grpc-status` and, when given, `grpc-message`.
func trailerBlock(_ status: Int, _ message: String? = nil) -> [UInt8] {
  literalField("grpc-status", "\(status)") + (message.map { literalField("grpc-message", $0) } ?? [])
}

private func fuzzClientSession(_ input: UnsafeRawBufferPointer, midCall: Bool) {
  var options = ChannelOptions()
  options.proxy = .none
  let channel = GRPCChannel(
    host: "127.0.0.1", port: fuzzListener.port, options: options, eventLoop: fuzzClientLoop)
  defer { channel.close() }
  let firstMessage = DispatchSemaphore(value: 0)
  let ended = Handoff<String>()
  Task {
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = [GRPCTesting.ResponseParameters()]
    // The call's outcome does not matter, only that it comes: any status, or messages.
    do {
      try await channel.serverStreaming(
        GRPCTesting.TestService.streamingOutputCall, request,
        options: CallOptions(timeout: .seconds(60))
      ) { responses in
        var first = true
        for try await _ in responses where first {
          first = false
          firstMessage.signal()
        }
      }
      ended.value = "OK"
    } catch {
      ended.value = "\(error)"
    }
    ended.ready.signal()
  }
  let deadline = ContinuousClock.now + sessionStepTimeout
  guard var socket = fuzzListener.accept(by: deadline) else {
    invariant(false, "the channel did not connect within \(sessionStepTimeout)")
    return
  }
  defer { socket.close() }
  // The channel sends its request once our SETTINGS arrived; the input goes after it, on
  // an open stream (a HEADERS frame on a stream the client has not opened is a connection
  // error), and mid-call after the whole request (END_STREAM) and our response's start.
  invariant(socket.write(frame(.settings), by: deadline), "the channel did not take our SETTINGS")
  let requested = socket.read(
    until: {
      midCall
        ? containsFrame($0.received, .data, stream: 1, flags: endStream, skipping: clientPreface.count)
        : containsFrame($0.received, .headers, stream: 1, skipping: clientPreface.count)
    }, by: deadline)
  invariant(requested && !socket.sawEOF, "the channel did not send its request")
  if midCall {
    let opening =
      frame(.headers, flags: endHeaders, stream: 1, responseHeaderBlock)
      + frame(.data, stream: 1, grpcMessage([]))
    invariant(socket.write(opening, by: deadline), "the channel did not take the response's start")
    invariant(wait(firstMessage, by: deadline), "the call did not receive its first message")
  }
  feed(input, to: &socket, peer: "the channel")
  // A channel whose connection failed may connect again for the call: such connections are
  // closed as they come, so that the call ends (UNAVAILABLE) and the next input's channel
  // is the one the listener accepts.
  let endBy = ContinuousClock.now + sessionStepTimeout
  while !wait(ended.ready, by: .now + .milliseconds(20)) {
    invariant(.now < endBy, "the call did not end within \(sessionStepTimeout) of the connection's end")
    while let stray = fuzzListener.accept(by: .now) { stray.close() }
  }
  channel.close()
  while let stray = fuzzListener.accept(by: .now) { stray.close() }
}

// MARK: Seeds

/// What servers send after their SETTINGS (or, mid-call, after the response headers and a
/// first message of stream 1): responses whole and broken, and control frames.
private func clientSessionSeeds(midCall: Bool) -> [(name: String, bytes: [UInt8])] {
  let ack = frame(.settings, flags: 0x1)
  let message = grpcMessage([0x12, 0x02, 0x08, 0x01])
  let headers = frame(.headers, flags: endHeaders, stream: 1, responseHeaderBlock)
  func trailers(_ status: Int, _ text: String? = nil) -> [UInt8] {
    frame(.headers, flags: endHeaders | endStream, stream: 1, trailerBlock(status, text))
  }
  let start = midCall ? [] : headers
  var seeds: [(String, [UInt8])] = [
    ("ok", ack + start + frame(.data, stream: 1, message) + trailers(0)),
    ("two-messages-one-frame", ack + start + frame(.data, stream: 1, message + message) + trailers(0)),
    ("unavailable", ack + start + trailers(14, "try%20again")),
    ("trailers-only", ack + frame(.headers, flags: endHeaders | endStream, stream: 1,
      responseHeaderBlock + trailerBlock(5, "not found"))),
    ("split-message", ack + start + frame(.data, stream: 1, Array(message.prefix(3)))
      + frame(.data, stream: 1, Array(message.dropFirst(3))) + trailers(0)),
    ("reset", ack + start + frame(.rstStream, stream: 1, [0, 0, 0, 2])),
    ("goaway", ack + frame(.goAway, [0, 0, 0, 0, 0, 0, 0, 0])),
    ("ping", ack + frame(.ping, [1, 2, 3, 4, 5, 6, 7, 8])),
    ("window-update", ack + frame(.windowUpdate, stream: 1, [0, 1, 0, 0])),
    ("settings", frame(.settings, [0, 3, 0, 0, 0, 1, 0, 4, 0, 1, 0, 0])),
    ("missing-status", ack + start + frame(.headers, flags: endHeaders | endStream, stream: 1, [])),
  ]
  if !midCall {
    seeds.append(("http-503", ack + frame(.headers, flags: endHeaders | endStream, stream: 1,
      [0x00, 7] + Array(":status".utf8) + [3] + Array("503".utf8))))
  }
  return seeds.map { (name: $0.0, bytes: $0.1) }
}
