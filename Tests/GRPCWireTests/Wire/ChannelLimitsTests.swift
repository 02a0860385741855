import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

typealias TestService = GRPCTesting.TestService

/// What one channel does under load and at its limits, against grpcio's interop server.
@Suite("Channel load and limits against grpcio", .timeLimit(.minutes(5)))
struct ChannelLimitsTests {
  /// grpcio directly on its port, without the relay: these tests move many megabytes and
  /// check no compression flags. (Connection counts come from the relay, so the tests that
  /// count connections start a relayed server of their own.)
  static let directServer = Task {
    try await PeerServer.start("interop_server.py", arguments: ["--direct"])
  }

  /// grpcio allowing `streams` per connection, and a channel of at most `maxConnections` to
  /// it, for `body`.
  private func withStreamLimit(
    _ streams: Int, maxConnections: Int, _ body: (PeerServer, GRPCChannel) async throws -> Void
  ) async throws {
    try await withPeerServer(
      "interop_server.py",
      // grpcio's overload protection (on by default) counts a stream against the limit until
      // its server call object is freed, after the trailers went out: a wave of calls that
      // follows one that just ended is then refused with REFUSED_STREAM, and retried
      // transparently, as often as the Python side is slow to free them. gRPC's own
      // MAX_CONCURRENT_STREAMS tests turn it off; so do these, which count connections.
      arguments: [
        "--no-wire-events", "--grpc-arg", "grpc.max_concurrent_streams=\(streams)",
        "--grpc-arg", "grpc.http.overload_protection=0",
      ]
    ) { server in
      var channelOptions = ChannelOptions()
      channelOptions.maxConnections = maxConnections
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: channelOptions)
      defer { channel.close() }
      try await body(server, channel)
    }
  }

  @Test("1,000 concurrent unary calls all succeed on one connection")
  func thousandConcurrentCalls() async throws {
    try await withPeerServer("interop_server.py", arguments: ["--no-wire-events"]) { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      defer { channel.close() }
      let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
        for i in 0..<1_000 {
          group.addTask {
            var request = GRPCTesting.SimpleRequest()
            request.responseSize = Int32(i % 97)
            let response = try await channel.unary(TestService.unaryCall, request)
            return response.message.payload?.body.count ?? 0
          }
        }
        return try await group.reduce(into: [Int]()) { $0.append($1) }
      }
      #expect(sizes.count == 1_000)
      let expected = (0..<1_000).map { $0 % 97 }.reduce(0, +)
      #expect(sizes.reduce(0, +) == expected)
      let opened = server.events.filter { $0.kind == "connection_opened" }
      #expect(opened.count == 1, "the calls used \(opened.count) connections")
    }
  }

  @Test("calls beyond the server's MAX_CONCURRENT_STREAMS wait their turn instead of failing")
  func maxConcurrentStreams() async throws {
    try await withStreamLimit(8, maxConnections: 1) { server, channel in
      // A first call so the server's SETTINGS (with the limit) have arrived.
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
      var metadata = Metadata()
      metadata.add("x-fleet-test-delay-ms", "50")
      let options = CallOptions(timeout: .seconds(60), metadata: metadata)
      let succeeded = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<64 {
          group.addTask {
            _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty(), options: options)
            return true
          }
        }
        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
      }
      #expect(succeeded == 64)
      #expect(server.events.filter { $0.kind == "connection_opened" }.count == 1)
    }
  }

  @Test("calls beyond MAX_CONCURRENT_STREAMS open more connections, up to maxConnections")
  func poolGrows() async throws {
    try await withStreamLimit(8, maxConnections: 3) { server, channel in
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
      var metadata = Metadata()
      metadata.add("x-fleet-test-delay-ms", "200")
      let options = CallOptions(timeout: .seconds(60), metadata: metadata)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<48 {
          group.addTask {
            _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty(), options: options)
          }
        }
        try await group.waitForAll()
      }
      let opened = server.events.filter { $0.kind == "connection_opened" }.count
      #expect(opened == 3, "48 slow calls against a limit of 8 streams opened \(opened) connections")
    }
  }

  @Test("long-lived streams started before the server's limit is known spread over connections")
  func waitingStreamsSpread() async throws {
    try await withStreamLimit(4, maxConnections: 3) { server, channel in
      // Twelve streams, each with one response now and the next only after 60 s: they stay
      // open together. All are started at once, before any connection is ready: the first
      // connection takes four when the server's SETTINGS come, the pool the other eight.
      // Queued behind the first four instead, they would see nothing for a minute.
      var request = GRPCTesting.StreamingOutputCallRequest()
      var now = GRPCTesting.ResponseParameters()
      now.size = 1
      var later = now
      later.intervalUs = 60_000_000
      request.responseParameters = [now, later]
      let streamRequest = request
      let streams = 12
      let firstResponses = Observed(0)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<streams {
          group.addTask {
            try await channel.serverStreaming(TestService.streamingOutputCall, streamRequest) {
              responses in
              var iterator = responses.makeAsyncIterator()
              _ = try await iterator.next()
              firstResponses.update { $0 += 1 }
              // Open until every stream has had its first response; then each ends (cancelled).
              try await firstResponses.wait(for: "a first response on every stream", timeout: .seconds(20)) {
                $0 == streams
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let opened = server.events.filter { $0.kind == "connection_opened" }.count
      #expect(opened == 3, "12 streams against a limit of 4 opened \(opened) connections")
    }
  }

  /// Unread bytes that show the slow reader below has fallen behind: half its 1 MiB window
  /// (runs peak at 0.78–0.80 MiB unread: the window counts framing and the part in flight),
  /// so that flow control is what stops the server.
  static let behind = 512 << 10

  @Test("a slow reader of 100,000 streamed messages holds at most one stream window of them")
  func slowReaderIsBounded() async throws {
    let server = try await Self.directServer.value
    var options = ChannelOptions()
    options.streamWindow = 1 << 20
    let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
    defer { channel.close() }
    let count = 100_000
    let size = 100
    var request = GRPCTesting.StreamingOutputCallRequest()
    var parameters = GRPCTesting.ResponseParameters()
    parameters.size = Int32(size)
    request.responseParameters = Array(repeating: parameters, count: count)

    let (received, maxBuffered) = try await channel.serverStreaming(
      TestService.streamingOutputCall, request, options: CallOptions(timeout: .seconds(120))
    ) { responses in
      var received = 0
      var maxBuffered = 0
      var iterator = responses.makeAsyncIterator()
      // Slow phase: the sleeps ARE the slow reader; meanwhile the server pushes as fast as
      // the window lets it. It lasts until half the window is buffered unread
      // (a loaded machine's Python server may take many seconds to get there), 60 s at most.
      while maxBuffered <= Self.behind, received < 2_400 {
        guard try await iterator.next() != nil else { break }
        received += 1
        maxBuffered = max(maxBuffered, responses.bufferedByteCount)
        try await Task.sleep(for: .milliseconds(25))
      }
      while let response = try await iterator.next() {
        #expect(response.payload?.body.count == size)
        received += 1
        maxBuffered = max(maxBuffered, responses.bufferedByteCount)
      }
      return (received, maxBuffered)
    }
    #expect(received == count)
    // Each 100-byte payload is a 105-byte message plus 5 bytes of prefix on the wire: the
    // window (1 MiB) bounds what is buffered unread.
    #expect(maxBuffered <= 1 << 20, "buffered \(maxBuffered) bytes unread")
    // And the reader did fall behind, or the test proved nothing.
    #expect(maxBuffered > Self.behind, "only \(maxBuffered) bytes were ever buffered")
    print("slow reader: at most \(maxBuffered) payload bytes buffered unread (window 1 MiB)")
  }

  @Test("a 16 MiB message round-trips when the limit allows it, and is refused when not")
  func sixteenMebibytes() async throws {
    let server = try await Self.directServer.value
    let big = 16 << 20
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = Int32(big)
    var payload = GRPCTesting.Payload()
    payload.body = [UInt8](repeating: 0, count: big)
    request.payload = payload

    let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
    defer { channel.close() }
    let allowed = try await channel.unary(
      TestService.unaryCall, request,
      options: CallOptions(timeout: .seconds(60), maxReceiveMessageSize: 17 << 20))
    #expect(allowed.message.payload?.body.count == big)

    await #expect {
      _ = try await channel.unary(TestService.unaryCall, request, options: CallOptions(timeout: .seconds(60)))
    } throws: { error in
      guard let error = error as? RPCError else { return false }
      return error.code == .resourceExhausted && error.message.contains("\(4 << 20)")
    }
    // The refused call did not break the connection.
    _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
  }

  @Test("a deadline on a server that never answers fires within 50 ms of its time")
  func deadlinePrecision() async throws {
    let server = try await Self.directServer.value
    let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
    defer { channel.close() }
    _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    var hang = Metadata()
    hang.add("x-fleet-test-hang", "1")
    let metadata = hang
    for timeout in [Duration.milliseconds(200), .milliseconds(500)] {
      // Timed on the channel's loop, where the deadline fires and the call's task resumes:
      // not from a thread of the cooperative pool, which other suites may hold for longer
      // than the 50 ms allowed.
      let late = await Task(executorPreference: channel.eventLoop) {
        let start = ContinuousClock.now
        await #expect {
          _ = try await channel.unary(
            TestService.emptyCall, GRPCTesting.Empty(),
            options: CallOptions(timeout: timeout, metadata: metadata))
        } throws: { error in
          (error as? RPCError)?.code == .deadlineExceeded
        }
        return ContinuousClock.now - start - timeout
      }.value
      #expect(late >= .zero && late < .milliseconds(50), "fired \(late) after its \(timeout) deadline")
    }
  }
}
