import FleetSync
import Foundation
import GRPCTestingProtos
import Logging
import PeerSupport
import Testing

@testable import GRPCWire

/// A draining connection, or one of a server shutting down, whose socket is full when its last
/// call has ended and its final GOAWAY is queued: it closes once that GOAWAY is written, not at
/// once with the bytes still queued dropped.
@Suite("Server drain through a full socket", .timeLimit(.minutes(1)))
struct DrainThroughFullSocketTests {
  typealias Service = GRPCTesting.TestService

  /// Far more than the server's socket (its send buffer made small) and the client's receive
  /// buffer hold, and less than one write's worth of frames (1 MiB): the response and its
  /// trailers are all queued in one go, the stream closes, and most of it waits to be written.
  static let responseSize = 600_000

  @Test("a full socket delays the close: the client gets the response, both GOAWAYs, then EOF")
  func finalGoAwayWaitsForTheSocket() async throws {
    let (server, seen) = try await Self.exchange(until: "draining: final GOAWAY") { server in
      server.goAway()
    }
    #expect(seen.lastStreams == [0x7FFF_FFFF, 1], "GOAWAYs before the close, by last stream")
    #expect(seen.logLine.contains("grpc.last_stream=1 grpc.open_calls=0"), "\(seen.logLine)")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a server shutting down through a full socket closes once the response has gone")
  func shutdownWaitsForTheSocket() async throws {
    let shutdown = Observed<Task<Void, Never>?>(nil)
    let (_, seen) = try await Self.exchange(until: "shutting down: final GOAWAY") { server in
      shutdown.update { $0 = Task { await server.shutdown(gracePeriod: .seconds(30)) } }
    }
    // The call was open at the shutdown (a notice first) or already over (none).
    let notices = seen.lastStreams.dropLast()
    #expect(seen.lastStreams.last == 1 && notices.allSatisfy { $0 == 0x7FFF_FFFF })
    #expect(seen.logLine.contains("grpc.open_calls=0"), "\(seen.logLine)")
    // Ended by the close once everything was written, not by the grace period.
    let ended = Observed(false)
    Task {
      await shutdown.value?.value
      ended.update { $0 = true }
    }
    _ = try await ended.wait(for: "the shutdown's end", timeout: .seconds(10)) { $0 }
  }

  /// What the raw client saw of its one call: the response's DATA bytes, its trailers, the
  /// last stream of each GOAWAY, how the read ended, and the server's log line it waited for.
  struct Seen {
    var dataBytes: Int
    var trailers: Bool
    var lastStreams: [UInt32]
    var logLine: String
  }

  /// A raw client opens a call for a response of ``responseSize`` on a server whose socket's
  /// send buffer is 4 KiB, then `end`s the server's serving and reads nothing until the
  /// server logs `line` (its final GOAWAY queued, the call long over). That the socket was
  /// full then is checked: the client had received less than the response. Then it reads to
  /// the end, which must be the response whole, its trailers and EOF.
  static func exchange(until line: String, end: (GRPCServer) -> Void) async throws
    -> (GRPCServer, Seen)
  {
    let logged = Observed<String?>(nil)
    var options = ServerOptions()
    options.logger = Logger(label: "drain") { _ in
      CapturedLog(lines: PosixMutex([])) { text in
        if text.contains(line) { logged.update { $0 = text } }
      }
    }
    let server = GRPCServer(options: options)
    let answered = Observed(false)
    server.registerOnLoop(unary: Service.unaryCall) { request, _ in
      answered.update { $0 = true }
      return Self.response(size: Int(request.responseSize))
    }
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    socket.send(RawHTTP2.preface)
    var received: [UInt8] = []
    // The server's SETTINGS: it has accepted the connection.
    _ = socket.read(into: &received, timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x4 && $0.flags & 0x1 == 0 }
    }
    let serverFD = try #require(Self.acceptedSocket(of: socket, port: port), "server's socket")
    var small: Int32 = 4096
    let size = socklen_t(MemoryLayout<Int32>.size)
    let set = setsockopt(serverFD, SOL_SOCKET, SO_SNDBUF, &small, size)
    try #require(set == 0, "SO_SNDBUF: errno \(errno)")

    var request = GRPCTesting.SimpleRequest()
    request.responseSize = Int32(Self.responseSize)
    // Flow control lets the whole response go at once: 1 MiB windows for the stream and the
    // connection (SETTINGS_INITIAL_WINDOW_SIZE, WINDOW_UPDATE).
    let window: [UInt8] = [0x00, 0x10, 0x00, 0x00]
    socket.send(
      RawHTTP2.frame(type: 0x4, stream: 0, [0x00, 0x04] + window)
        + RawHTTP2.frame(type: 0x8, stream: 0, window)
        + RawHTTP2.opening(path: Service.unaryCall.path).dropFirst(RawHTTP2.preface.count)
        + RawHTTP2.frame(type: 0x0, flags: 0x1, stream: 1, GRPCChannel.frame(request)))
    // The call is taken (a server shutting down takes no new one).
    _ = try await answered.wait(for: "the call's answer", timeout: .seconds(10)) { $0 }
    end(server)
    let logLine = try await logged.wait(for: "'\(line)'", timeout: .seconds(10)) { $0 != nil }
    // The socket is full: what reached the client is less than the response.
    var waiting: Int32 = 0
    _ = ioctl(socket.fd, UInt(FIONREAD), &waiting)
    #expect(Int(waiting) < responseSize, "\(waiting) bytes waiting: the socket was not full")
    let outcome = socket.read(into: &received, timeout: .seconds(10))
    let frames = RawHTTP2.frames(in: received)
    let data = frames.filter { $0.type == 0x0 && $0.stream == 1 }.reduce(0) {
      $0 + $1.payload.count
    }
    let trailers = frames.contains { $0.type == 0x1 && $0.stream == 1 && $0.flags & 0x1 != 0 }
    let lastStreams = frames.filter { $0.type == 0x7 }.map {
      $0.payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
    }
    #expect(outcome == .closed)
    #expect(data == GRPCChannel.frame(Self.response(size: Self.responseSize)).count)
    #expect(trailers, "the trailers of stream 1")
    return (
      server,
      Seen(dataBytes: data, trailers: trailers, lastStreams: lastStreams, logLine: logLine ?? "")
    )
  }

  static func response(size: Int) -> GRPCTesting.SimpleResponse {
    var payload = GRPCTesting.Payload()
    payload.body = [UInt8](repeating: 0x5A, count: size)
    var response = GRPCTesting.SimpleResponse()
    response.payload = payload
    return response
  }

  /// The server's end of `client`'s connection to `port`: this process's socket whose own
  /// port is `port` and whose peer is `client`'s address.
  static func acceptedSocket(of client: RawSocket, port: Int) -> Int32? {
    guard let clientPort = localPort(client.fd),
      let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    else { return nil }
    for entry in entries {
      guard let fd = Int32(entry), fd != client.fd, localPort(fd) == port else { continue }
      var peer = sockaddr_in()
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let named = withUnsafeMutablePointer(to: &peer) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
      }
      if named == 0, Int(UInt16(bigEndian: peer.sin_port)) == clientPort { return fd }
    }
    return nil
  }

  static func localPort(_ fd: Int32) -> Int? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}
