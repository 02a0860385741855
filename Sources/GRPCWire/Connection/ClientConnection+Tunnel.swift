/// Through an HTTP CONNECT proxy: once TCP (and, to an `https://` proxy, TLS) to the proxy is
/// up, the CONNECT request goes out and the proxy's answer is read up to its blank line; then
/// TLS to the target (or HTTP/2 in the clear) runs through the tunnel as it would over a direct
/// connection — inside the TLS to an `https://` proxy — all within the connect timeout. Keepalive, reconnects and backoff need nothing more: to them the tunnel is
/// the connection.
extension ClientConnection {
  /// Sends what is left of the CONNECT request, then reads the answer, as far as the socket
  /// allows; called again when it is readable or writable.
  func continueTunnel() {
    guard case .tunnelling = machine.state, let session, let transport = session.transport,
      let current = tunnel
    else { return }
    var (exchange, sent) = current
    defer { if tunnel != nil { tunnel = (exchange, sent) } }
    // TLS to an https:// proxy first (plain TCP is done at once; a finished handshake returns
    // at once too).
    switch transport.handshake() {
    case .done: break
    case .wantRead: return setInterest(.read)
    case .wantWrite: return setInterest(.write)
    case .failed(let error):
      logger.warning("TLS to the proxy failed", metadata: ["grpc.error": "\(error.message)"])
      return close(with: error)
    }
    while sent < exchange.request.count {
      let result = exchange.request[sent...].withUnsafeBytes { transport.write($0) }
      switch result {
      case .bytes(let count): sent += count
      case .wouldBlock(let wantWrite): return setInterest(wantWrite ? .write : .read)
      case .closed: return close(with: exchange.closed())
      case .failed(let reason): return close(with: exchange.closed(reason))
      }
    }
    // One byte at a time: what follows the answer's blank line is the target's and must stay
    // in the socket for the next reader (TLS, or nghttp2 with the server's SETTINGS).
    var byte: UInt8 = 0
    while true {
      let result = withUnsafeMutableBytes(of: &byte) { transport.read(into: $0) }
      switch result {
      case .bytes:
        switch exchange.received(byte) {
        case .needMore:
          continue
        case .established:
          tunnel = nil
          logger.debug("the proxy opened a tunnel", metadata: ["grpc.proxy": "\(exchange.proxy)"])
          return proceed(machine.tunnelEstablished(tls: tls != nil), on: session)
        case .failed(let error):
          logger.warning("the proxy refused the tunnel", metadata: ["grpc.error": "\(error.message)"])
          return close(with: error)
        }
      case .wouldBlock(let wantWrite):
        return setInterest(wantWrite ? .write : .read)
      case .closed:
        return close(with: exchange.closed())
      case .failed(let reason):
        return close(with: exchange.closed(reason))
      }
    }
  }
}
