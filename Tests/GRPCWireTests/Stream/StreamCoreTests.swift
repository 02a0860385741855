import Testing

@testable import GRPCWire

/// The inbound hand-off both roles' streams share: a chunk of DATA becomes its complete
/// messages, in order, each owing the bytes of it the chunk brought, and the bytes of a
/// message still arriving are set apart for acknowledgement at once; what handed-on
/// messages owe is accounted until their reader takes them.
@Suite("Stream core: inbound hand-off")
struct StreamCoreTests {
  /// A message as a stream carries it: flag, 4-byte length, payload.
  static func framed(_ payload: [UInt8]) -> [UInt8] {
    let length = UInt32(payload.count)
    return [0] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) } + payload
  }

  /// A core of `loop` in the `machine` role whose messages may be at most `maxReceiveSize`
  /// bytes (these tests touch only its inbound accounting, from the test's own thread).
  static func core(
    _ machine: StreamStateMachine, maxReceiveSize: Int, on loop: EventLoop
  ) -> StreamCore {
    StreamCore(
      loop: loop, id: 1, machine: machine, maxReceiveSize: maxReceiveSize,
      outboundLimit: 1 << 20)
  }

  /// `chunk` through `core`, each message as its payload and what it owes.
  static func receive(
    _ core: StreamCore, _ chunk: [UInt8]
  ) throws -> StreamCore.Inbound<(payload: [UInt8], owed: Int)> {
    try chunk.withUnsafeBytes { bytes in
      try core.receive(bytes) { frame, owed in (payload: frame.payload, owed: owed) }
    }
  }

  @Test("one chunk of one whole message: it comes first, owes all its bytes, none partial")
  func oneWholeMessage() throws {
    let loop = EventLoop(name: "StreamCoreTests")
    defer { loop.shutdown() }
    let core = Self.core(.client(), maxReceiveSize: 1 << 20, on: loop)
    let inbound = try Self.receive(core, Self.framed([1, 2, 3]))
    #expect(inbound.first?.payload == [1, 2, 3])
    #expect(inbound.first?.owed == 8)
    #expect(inbound.more.isEmpty)
    #expect(inbound.partialBytes == 0)
    #expect(inbound.owedByMessages == 8)
  }

  @Test("two whole messages and the start of a third: in order, the start set apart")
  func twoMessagesAndAStart() throws {
    let loop = EventLoop(name: "StreamCoreTests")
    defer { loop.shutdown() }
    let core = Self.core(.client(), maxReceiveSize: 1 << 20, on: loop)
    let third = Self.framed(Array(repeating: 9, count: 20))
    let chunk = Self.framed([1]) + Self.framed([2, 2]) + third.prefix(7)
    let inbound = try Self.receive(core, chunk)
    #expect(inbound.first?.payload == [1])
    #expect(inbound.more.map(\.payload) == [[2, 2]])
    #expect(inbound.more.map(\.owed) == [7])
    #expect(inbound.partialBytes == 7)
    #expect(inbound.owedByMessages == 6 + 7)
    #expect(core.deframer.bufferedByteCount == 7)

    // The rest of the third: it owes only the bytes this chunk brought.
    let rest = try Self.receive(core, Array(third.dropFirst(7)))
    #expect(rest.first?.payload == Array(repeating: 9, count: 20))
    #expect(rest.first?.owed == third.count - 7)
    #expect(rest.partialBytes == 0)
    #expect(rest.owedByMessages == third.count - 7)
    #expect(core.deframer.bufferedByteCount == 0)
  }

  @Test("a chunk inside a message completes none: all its bytes are partial")
  func insideAMessage() throws {
    let loop = EventLoop(name: "StreamCoreTests")
    defer { loop.shutdown() }
    let core = Self.core(.client(), maxReceiveSize: 1 << 20, on: loop)
    let message = Self.framed(Array(repeating: 1, count: 50))
    let inbound = try Self.receive(core, Array(message.prefix(30)))
    #expect(inbound.first == nil)
    #expect(inbound.more.isEmpty)
    #expect(inbound.partialBytes == 30)
    #expect(inbound.owedByMessages == 0)
  }

  @Test("a message over the receive limit throws tooLarge")
  func overTheLimit() {
    let loop = EventLoop(name: "StreamCoreTests")
    defer { loop.shutdown() }
    let core = Self.core(.client(), maxReceiveSize: 4, on: loop)
    #expect(throws: MessageDeframer.Failure.tooLarge(announced: 5, limit: 4)) {
      try Self.receive(core, Self.framed([1, 2, 3, 4, 5]))
    }
  }

  @Test("what handed-on messages owe is owed until acknowledged; the rest is released once")
  func owedBytes() throws {
    let loop = EventLoop(name: "StreamCoreTests")
    defer { loop.shutdown() }
    let core = Self.core(.client(), maxReceiveSize: 1 << 20, on: loop)
    let inbound = try Self.receive(core, Self.framed([1]) + Self.framed([2, 2]))
    core.owe(inbound.owedByMessages)
    #expect(core.owedBytes == 13)
    // The reader took the first message: its 6 bytes are acknowledged.
    let first = try #require(inbound.first)
    #expect(core.creditToAcknowledge(first.owed) == 6)
    #expect(core.owedBytes == 7)
    // The stream closes with the second unread: its 7 bytes go back, once.
    #expect(core.takeOwed() == 7)
    #expect(core.owedBytes == 0)
    #expect(core.takeOwed() == 0)
    // Its reader takes it after all: the bytes went back with the close, not again.
    #expect(core.creditToAcknowledge(7) == 0)
  }

  @Test("the inbound side starts over: a new limit, nothing owed; the machine and timer stay")
  func restartInbound() throws {
    let loop = EventLoop(name: "StreamCoreTests")
    defer { loop.shutdown() }
    let core = Self.core(.server(), maxReceiveSize: 4, on: loop)
    let request: [HeaderField] = [
      HeaderField(name: ":method", value: "POST"), HeaderField(name: ":path", value: "/s/m"),
      HeaderField(name: "content-type", value: "application/grpc"),
    ]
    guard case .start = core.machine.receiveRequestHeaders(request, hasMethod: { _ in true })
    else {
      Issue.record("the request headers did not start the call")
      return
    }
    core.bodyDeferred = true
    core.owe(3)
    _ = core.takeOwed()
    core.restartInbound(maxReceiveSize: 1 << 20)
    #expect(core.owedBytes == 0)
    #expect(!core.bodyDeferred)
    #expect(core.creditToAcknowledge(2) == 2, "a new account: credit is acknowledged again")
    // The machine still has the call open: DATA is accepted, and a 5-byte message fits.
    guard case .accept = core.machine.receiveData() else {
      Issue.record("the machine started over too")
      return
    }
    #expect(try Self.receive(core, Self.framed([1, 2, 3, 4, 5])).first?.payload == [1, 2, 3, 4, 5])
  }
}
