import Foundation

@testable import GRPCWire

#if canImport(Glibc)
  import Glibc
#endif

/// Hand-made HTTP/2 frames, for tests that play a misbehaving client.
enum RawHTTP2 {
  /// One HTTP/2 frame: 9-byte header, then `payload`.
  static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
    let length = payload.count
    return [
      UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
      UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
    ] + payload
  }

  /// An HPACK header block of literal fields, not indexed (RFC 7541 6.2.2), short strings.
  static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
    var block: [UInt8] = []
    for (name, value) in fields {
      block.append(0x00)
      block.append(UInt8(name.utf8.count))
      block.append(contentsOf: name.utf8)
      block.append(UInt8(value.utf8.count))
      block.append(contentsOf: value.utf8)
    }
    return block
  }

  /// The connection start and a request for `path` on stream 1, its body still open.
  static func opening(path: String) -> [UInt8] {
    let headers = headerBlock([
      (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
      ("content-type", "application/grpc"), ("te", "trailers"),
    ])
    return preface + frame(type: 0x1, flags: 0x4, stream: 1, headers)
  }

  /// The frames in `bytes` (what a server sent), as far as they are complete.
  static func frames(in bytes: [UInt8]) -> [RawFrame] { RawFrame.parse(bytes[...]).frames }

  /// The error code and debug data of the first GOAWAY in `bytes`.
  static func goAway(in bytes: [UInt8]) -> (code: UInt32, debug: String)? {
    guard let goAway = frames(in: bytes).first(where: { $0.type == 0x7 }), goAway.payload.count >= 8
    else { return nil }
    let payload = Array(goAway.payload)
    let code = payload[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
    return (code, String(decoding: payload[8...], as: UTF8.self))
  }

  /// The error code of the first GOAWAY in `bytes`.
  static func goAwayCode(in bytes: [UInt8]) -> UInt32? { goAway(in: bytes)?.code }

  /// The client's side of the handshake: the preface and an empty SETTINGS.
  static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(type: 0x4, stream: 0)

  /// A PING (not an ACK) with 8 bytes of `opaque`.
  static func ping(_ opaque: UInt8) -> [UInt8] { frame(type: 0x6, stream: 0, [UInt8](repeating: opaque, count: 8)) }

}

/// A blocking loopback TCP socket for playing a misbehaving client.
final class RawSocket: Sendable {
  let fd: Int32

  enum Outcome: Equatable {
    /// The server closed the connection after sending something (its SETTINGS).
    case closed
    /// The server closed the connection without sending a byte.
    case closedWithNothing
    /// The timeout passed with the connection open.
    case stillOpen
    /// The frames received satisfied the reader's condition (the connection may be open or
    /// not).
    case satisfied
  }

  init(port: Int) throws {
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw POSIXError(.ECONNREFUSED)
    }
  }

  /// A connected socket already open (one a ``RawListener`` accepted); closed with this.
  init(adopting fd: Int32) {
    self.fd = fd
  }

  deinit { close(fd) }

  func send(_ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// Reads (and drops) what arrives until the server closes the connection or `timeout`
  /// passes with the connection still open.
  func readUntilClosed(timeout: Duration) -> Outcome {
    readAllUntilClosed(timeout: timeout).outcome
  }

  /// Reads what arrives until the server closes the connection or `timeout` passes; returns
  /// how it ended and the bytes.
  func readAllUntilClosed(timeout: Duration) -> (outcome: Outcome, bytes: [UInt8]) {
    var received: [UInt8] = []
    let outcome = read(into: &received, timeout: timeout)
    return (outcome, received)
  }

  /// Appends what arrives to `received` until the frames in it satisfy `done` (`.satisfied`),
  /// the server closes the connection, or `timeout` passes (`.stillOpen`).
  func read(
    into received: inout [UInt8], timeout: Duration,
    until done: (([RawFrame]) -> Bool)? = nil
  ) -> Outcome {
    let deadline = ContinuousClock.now + timeout
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      if let done, done(RawHTTP2.frames(in: received)) { return .satisfied }
      let left = deadline - ContinuousClock.now
      guard left > .zero else { return .stillOpen }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(
        left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
      guard poll(&poller, 1, max(milliseconds, 1)) > 0 else { continue }
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { return received.isEmpty ? .closedWithNothing : .closed }
      received += buffer[..<count]
    }
  }
}

