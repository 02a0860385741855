import Testing

@testable import GRPCWire
import GRPCTestingProtos

/// Server keepalive (PINGs to a silent client) and ping policing (a client PINGing too often).
@Suite("Server keepalive and ping policing", .timeLimit(.minutes(1)))
struct ServerKeepaliveTests {
  static func makeServer(_ configure: (inout ServerOptions) -> Void) -> GRPCServer {
    var options = ServerOptions()
    configure(&options)
    let server = GRPCServer(options: options)
    server.register(unary: GRPCTesting.TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    return server
  }

  @Test("PINGs closer than minPingInterval, past maxPingStrikes: GOAWAY ENHANCE_YOUR_CALM with too_many_pings, then close")
  func pingFlood() async throws {
    let server = Self.makeServer {
      $0.minPingInterval = .seconds(5)
      $0.maxPingStrikes = 2
    }
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    socket.send(RawHTTP2.preface + (1...4).flatMap { RawHTTP2.ping(UInt8($0)) })
    let (outcome, received) = socket.readAllUntilClosed(timeout: .seconds(5))
    #expect(outcome != .stillOpen, "the connection stayed open")
    let goAway = try #require(RawHTTP2.goAway(in: received), "no GOAWAY")
    #expect(goAway.code == HTTP2ErrorCode.enhanceYourCalm)
    #expect(goAway.debug == "too_many_pings")
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    _ = try await channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("PINGs spaced by minPingInterval are answered and the connection stays open")
  func spacedPings() async throws {
    let server = Self.makeServer { $0.minPingInterval = .milliseconds(50) }
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    socket.send(RawHTTP2.preface)
    var acks = 0
    for opaque in 1...4 {
      socket.send(RawHTTP2.ping(UInt8(opaque)))
      // Pacing the client, not waiting for the server: the gap is what the test is about.
      let (outcome, received) = socket.readAllUntilClosed(timeout: .milliseconds(100))
      #expect(outcome == .stillOpen)
      acks += RawHTTP2.frames(in: received).filter { $0.type == 0x6 && $0.flags & 0x1 != 0 }.count
    }
    #expect(acks == 4, "\(acks) PING ACKs for 4 PINGs")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a client that stops answering gets a keepalive PING and is closed after the timeout")
  func silentClientClosed() async throws {
    let server = Self.makeServer {
      $0.keepaliveInterval = .milliseconds(200)
      $0.keepaliveTimeout = .milliseconds(200)
    }
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    socket.send(RawHTTP2.preface)
    let (outcome, received) = socket.readAllUntilClosed(timeout: .seconds(5))
    #expect(outcome != .stillOpen, "the silent client was not closed")
    let pings = RawHTTP2.frames(in: received).filter { $0.type == 0x6 && $0.flags & 0x1 == 0 }
    #expect(!pings.isEmpty, "the server closed without a keepalive PING first")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a client that answers PINGs keeps its connection across many keepalive intervals")
  func answeringClientKept() async throws {
    let server = Self.makeServer {
      $0.keepaliveInterval = .milliseconds(100)
      $0.keepaliveTimeout = .milliseconds(300)
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    _ = try await channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
    try await Task.sleep(for: .milliseconds(800))  // several intervals: the point of the test
    _ = try await channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
    let opened = await channel.connectionsOpened()
    #expect(opened == 1, "the connection was replaced")
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
