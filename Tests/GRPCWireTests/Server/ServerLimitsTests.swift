import Foundation
import Testing

@testable import GRPCWire
import GRPCTestingProtos
import PeerSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `ServerOptions` limits a client cannot talk its way around: the largest response, the
/// handshake deadline, the most connections.
@Suite("Server limits", .timeLimit(.minutes(1)))
struct ServerLimitsTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall answers `response_size` bytes without checking them first,
  /// so only the server's own send limit stands in the way.
  static func makeServer(_ options: ServerOptions) -> GRPCServer {
    let server = GRPCServer(options: options)
    server.registerUnaryPayload(fill: 1)
    server.register(unary: Service.emptyCall) { _, _ in GRPCTesting.Empty() }
    return server
  }

  static func request(size: Int32) -> GRPCTesting.SimpleRequest {
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = size
    return request
  }

  @Test("a response above maxSendMessageSize fails with RESOURCE_EXHAUSTED; one at the limit goes out")
  func sendLimit() async throws {
    var options = ServerOptions()
    options.maxSendMessageSize = 64 << 10
    let server = Self.makeServer(options)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(Service.unaryCall, Self.request(size: 64 << 10))
    }
    #expect(error.code == .resourceExhausted, "\(error)")
    // SimpleResponse.payload and Payload.body each add a tag and a 3-byte length: 8 bytes.
    let fits = try await channel.unary(Service.unaryCall, Self.request(size: (64 << 10) - 8)).message
    #expect(fits.payload?.body.count == (64 << 10) - 8)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a gzip request that inflates past maxReceiveMessageSize fails with RESOURCE_EXHAUSTED, as an uncompressed one does")
  func inflatedRequestLimit() async throws {
    var options = ServerOptions()
    options.maxReceiveMessageSize = 64 << 10
    let server = Self.makeServer(options)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    var request = Self.request(size: 0)
    var payload = GRPCTesting.Payload()
    payload.body = [UInt8](repeating: 0, count: 128 << 10)  // a few hundred bytes gzipped
    request.payload = payload
    for compression in [CallOptions.Compression.gzip, nil] {
      let error = try await #require(throws: RPCError.self) {
        _ = try await channel.unary(Service.unaryCall, request, options: CallOptions(compression: compression))
      }
      #expect(error.code == .resourceExhausted, "\(String(describing: compression)): \(error)")
    }
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a connection that sends nothing is closed once the handshake timeout passes")
  func silentConnectionClosed() async throws {
    var options = ServerOptions()
    options.handshakeTimeout = .milliseconds(300)
    let server = Self.makeServer(options)
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    let start = ContinuousClock.now
    let outcome = socket.readUntilClosed(timeout: .seconds(5))
    let waited = ContinuousClock.now - start
    #expect(outcome == .closed, "the silent connection was not closed within 5 s")
    #expect(waited >= .milliseconds(250), "closed after \(waited), before the timeout")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a connection trickling its preface a byte at a time is closed at the handshake timeout")
  func tricklingConnectionClosed() async throws {
    var options = ServerOptions()
    options.handshakeTimeout = .milliseconds(500)
    let server = Self.makeServer(options)
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    var closed = false
    for byte in preface {
      if socket.readUntilClosed(timeout: .milliseconds(100)) != .stillOpen {
        closed = true
        break
      }
      socket.send([byte])
    }
    if !closed { closed = socket.readUntilClosed(timeout: .seconds(5)) != .stillOpen }
    #expect(closed, "the trickling connection was not closed")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a client that completed the handshake is not closed by the handshake timeout")
  func handshakenConnectionKept() async throws {
    var options = ServerOptions()
    options.handshakeTimeout = .milliseconds(200)
    let server = Self.makeServer(options)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    try await Task.sleep(for: .milliseconds(500))  // past the timeout: the point of the test
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    let opened = await channel.connectionsOpened()
    #expect(opened == 1, "the connection was replaced: the handshake timeout closed it")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("beyond maxConnections a new connection is closed at once; the open ones are served")
  func connectionCap() async throws {
    var options = ServerOptions()
    options.maxConnections = 2
    let server = Self.makeServer(options)
    let port = try await server.start()
    let first = GRPCChannel(host: "127.0.0.1", port: port)
    let second = GRPCChannel(host: "127.0.0.1", port: port)
    defer {
      first.close()
      second.close()
    }
    _ = try await first.unary(Service.emptyCall, GRPCTesting.Empty())
    _ = try await second.unary(Service.emptyCall, GRPCTesting.Empty())
    let third = try RawSocket(port: port)
    #expect(
      third.readUntilClosed(timeout: .seconds(5)) == .closedWithNothing,
      "the third connection was not closed before the server sent anything")
    _ = try await first.unary(Service.emptyCall, GRPCTesting.Empty())
    _ = try await second.unary(Service.emptyCall, GRPCTesting.Empty())
    await server.shutdown(gracePeriod: .seconds(1))
  }
}

/// Connection lifetimes: idle and age limits.
@Suite("Server connection idle and age limits", .timeLimit(.minutes(1)))
struct ServerConnectionAgeTests {
  typealias Service = GRPCTesting.TestService


  /// A server whose StreamingOutputCall sends one response per parameter, `interval_us` apart.
  static func makeServer(_ options: ServerOptions) -> GRPCServer {
    let server = ServerLimitsTests.makeServer(options)
    server.registerStreamingOutput(payloads: false)
    return server
  }

  static func slowStream(responses: Int, every interval: Duration) -> GRPCTesting.StreamingOutputCallRequest {
    var parameters = GRPCTesting.ResponseParameters()
    parameters.intervalUs = Int32(interval.components.attoseconds / 1_000_000_000_000 + interval.components.seconds * 1_000_000)
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: parameters, count: responses)
    return request
  }

  @Test("maxConnectionIdle: a connection without calls is closed; one with a call open is not")
  func idle() async throws {
    var options = ServerOptions()
    options.maxConnectionIdle = .milliseconds(300)
    let server = Self.makeServer(options)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    // 8 responses 100 ms apart: the call outlives the idle limit and is not cut.
    let received = try await channel.serverStreaming(
      Service.streamingOutputCall, Self.slowStream(responses: 8, every: .milliseconds(100))
    ) { responses in
      var count = 0
      for try await _ in responses { count += 1 }
      return count
    }
    #expect(received == 8)
    #expect(await channel.connectionsOpened() == 1)
    // Idle for longer than the limit: the server closes, the next call reconnects.
    let states = channel.connectivityStates
    let left = try await withTimeLimit("the idle connection to close", .seconds(5)) {
      for await state in states where state != .ready { return state }
      return ConnectivityState.ready
    }
    #expect(left != .ready, "the idle connection stayed open")
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    #expect(await channel.connectionsOpened() == 2)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("maxConnectionAge with a grace: GOAWAY at the age, open calls cut after the grace, new calls on a new connection")
  func age() async throws {
    var options = ServerOptions()
    options.maxConnectionAge = .milliseconds(300)
    options.maxConnectionAgeGrace = .milliseconds(300)
    let server = Self.makeServer(options)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let start = ContinuousClock.now
    // 50 responses 100 ms apart would take 5 s: the grace ends it after about 600 ms.
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.serverStreaming(
        Service.streamingOutputCall, Self.slowStream(responses: 50, every: .milliseconds(100))
      ) { responses in
        for try await _ in responses {}
      }
    }
    let lasted = ContinuousClock.now - start
    #expect(error.code == .unavailable, "\(error)")
    #expect(lasted >= .milliseconds(500) && lasted < .seconds(3), "the call lasted \(lasted)")
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    #expect(await channel.connectionsOpened() == 2)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a call waiting for a stream on a full channel opens a new connection once the old one goes away")
  func waitingCallAfterGoAway() async throws {
    // Two streams fill the one connection the channel may have; the server's age limit then
    // sends GOAWAY, and its long grace keeps both streams running for seconds. A connection
    // going away takes no new calls and no longer counts against maxConnections: the call
    // waiting for a stream opens a new connection at once instead of waiting for the
    // streams to end.
    var options = ServerOptions()
    options.maxConcurrentStreams = 2
    options.maxConnectionAge = .milliseconds(300)
    options.maxConnectionAgeGrace = .seconds(30)
    try await Self.withHeldStreams(2, server: options, maxConnections: 1) { channel, streamsEnded in
      _ = try await channel.unary(
        Service.emptyCall, GRPCTesting.Empty(), options: CallOptions(timeout: .seconds(20)))
      #expect(streamsEnded.value == 0, "the waiting call ran only after the streams ended")
      #expect(await channel.connectionsOpened() == 2)
    }
  }

  /// Starts a server with `options` and a channel of at most `maxConnections` to it, holds
  /// `count` streams open (40 responses 250 ms apart: ten seconds) until each has had its
  /// first response, then runs `body` with the channel and the count of streams that ended.
  static func withHeldStreams(
    _ count: Int, server options: ServerOptions, maxConnections: Int,
    _ body: (GRPCChannel, Observed<Int>) async throws -> Void
  ) async throws {
    let server = makeServer(options)
    let port = try await server.start()
    var channelOptions = ChannelOptions()
    channelOptions.maxConnections = maxConnections
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: channelOptions)
    defer { channel.close() }
    let firstResponses = Observed(0)
    let streamsEnded = Observed(0)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<count {
        group.addTask {
          _ = try await channel.serverStreaming(
            Service.streamingOutputCall, slowStream(responses: 40, every: .milliseconds(250))
          ) { responses in
            var first = true
            for try await _ in responses where first {
              first = false
              firstResponses.update { $0 += 1 }
            }
          }
          streamsEnded.update { $0 += 1 }
        }
      }
      try await firstResponses.wait(
        for: "a response on each held stream", timeout: .seconds(20)
      ) { $0 >= count }
      try await body(channel, streamsEnded)
      group.cancelAll()
    }
    await server.shutdown(gracePeriod: .milliseconds(100))
  }
}