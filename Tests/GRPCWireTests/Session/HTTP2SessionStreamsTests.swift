import Testing

@testable import GRPCWire

/// The session's stream table (`HTTP2Session+Streams`): the stream found last is kept at hand,
/// and must never outlive its place in the table — a removed stream found again through it
/// would be handed events after its close, and kept alive with its session. Ending the session
/// empties the table, which breaks the cycle of each stream holding its session.
@Suite("HTTP2Session: the stream table", .timeLimit(.minutes(1)))
struct HTTP2SessionStreamsTests {
  /// Runs `body` on a fresh loop with a session of it (no socket, no nghttp2 session), which
  /// ends afterwards.
  static func onLoop<T: Sendable>(
    _ body: @escaping @Sendable (EventLoop, HTTP2Session) -> T
  ) async -> T {
    let loop = EventLoop(name: "HTTP2SessionStreamsTests")
    defer { loop.shutdown() }
    return await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
      loop.execute {
        let session = HTTP2Session(loop: loop, fd: -1)
        let result = body(loop, session)
        session.end()
        c.resume(returning: result)
      }
    }
  }

  /// A bare stream `id` of `loop`, in the table of `session`, which it holds.
  static func open(_ id: Int32, on loop: EventLoop, in session: HTTP2Session) -> StreamCore {
    let stream = StreamCore(
      loop: loop, id: id, machine: .server(), maxReceiveSize: 1 << 20,
      outboundLimit: 1 << 20, loopConfined: true)
    stream.session = session
    session.add(stream)
    return stream
  }

  @Test("removing the stream found last clears it: it is not found again, nor kept")
  func removeClearsLastFound() async {
    let seen = await Self.onLoop { loop, session -> [String] in
      weak var removed: StreamCore?
      var seen: [String] = []
      do {
        let first = Self.open(1, on: loop, in: session)
        _ = Self.open(3, on: loop, in: session)
        removed = first
        seen.append("found \(session.stream(1)?.id ?? 0), last \(session.lastFound?.id ?? 0)")
        let gone = session.removeStream(1)
        seen.append("removed \(gone?.id ?? 0), last \(session.lastFound?.id ?? 0)")
        seen.append("found \(session.stream(1)?.id ?? 0)")
      }
      // Removing another stream leaves the one at hand.
      seen.append("found \(session.stream(3)?.id ?? 0)")
      _ = session.removeStream(5)
      seen.append("last \(session.lastFound?.id ?? 0), freed \(removed == nil)")
      return seen
    }
    #expect(
      seen == ["found 1, last 1", "removed 1, last 0", "found 0", "found 3", "last 3, freed true"])
  }

  @Test("ending the session empties the table and what was at hand; its streams are freed")
  func endEmptiesTable() async {
    let seen = await Self.onLoop { loop, session -> [String] in
      weak var first: StreamCore?
      weak var second: StreamCore?
      do {
        first = Self.open(1, on: loop, in: session)
        second = Self.open(3, on: loop, in: session)
      }
      _ = session.stream(3)
      let before = "\(session.streams.count) open, last \(session.lastFound?.id ?? 0)"
      session.end()
      let after = "\(session.streams.count) open, last \(session.lastFound?.id ?? 0)"
      return [before, after, "freed \(first == nil && second == nil)"]
    }
    #expect(seen == ["2 open, last 3", "0 open, last 0", "freed true"])
  }

  @Test("removing every stream returns them as the role's type and empties the table")
  func removeAll() async {
    let seen = await Self.onLoop { loop, session -> [String] in
      _ = Self.open(1, on: loop, in: session)
      _ = Self.open(3, on: loop, in: session)
      _ = session.stream(1)
      let all = session.removeAllStreams(as: StreamCore.self).map(\.id).sorted()
      return ["\(all)", "\(session.streams.count) open, last \(session.lastFound?.id ?? 0)"]
    }
    #expect(seen == ["[1, 3]", "0 open, last 0"])
  }
}
