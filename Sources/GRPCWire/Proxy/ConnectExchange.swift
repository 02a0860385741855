/// One HTTP CONNECT exchange with a proxy (RFC 9110 §9.3.6), as a value: the request to send,
/// and the proxy's response fed in byte by byte until its header ends.
///
/// Bytes are fed one at a time so that nothing after the response's blank line — the first
/// bytes from the target, which a server may send at once — is read here: they belong to
/// the tunnel. Any 2xx opens the tunnel; anything else, a closed connection, a response that is
/// not HTTP or one whose header passes 16 KiB, fails with UNAVAILABLE naming the proxy
/// (password hidden) and what it said. The request carries `Proxy-Authorization` when the
/// proxy has a user; its value never appears in an error.
struct ConnectExchange {
  /// The most header bytes taken from a proxy before giving up on it.
  static let maxResponseBytes = 16 << 10

  let proxy: HTTPProxy
  /// `host:port` (`[v6]:port`) of the target.
  let authority: String
  /// `CONNECT authority HTTP/1.1` with Host, and Proxy-Authorization when there is a user.
  let request: [UInt8]
  private var response: [UInt8] = []

  enum OnByte: Equatable {
    case needMore
    /// The tunnel is open: what follows is the target's.
    case established
    case failed(RPCError)
  }

  init(proxy: HTTPProxy, host: String, port: Int, userAgent: String) {
    self.proxy = proxy
    authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\nUser-Agent: \(userAgent)\r\n"
    if let authorization = proxy.authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
    request = Array((text + "\r\n").utf8)
  }

  /// Takes the next byte of the proxy's response.
  mutating func received(_ byte: UInt8) -> OnByte {
    response.append(byte)
    if response.count >= 4, response.suffix(4).elementsEqual([13, 10, 13, 10]) {
      return .init(statusLine())
    }
    // Some proxies end header lines with a bare LF.
    if response.count >= 2, response.suffix(2).elementsEqual([10, 10]) { return .init(statusLine()) }
    if response.count > Self.maxResponseBytes {
      return .failed(failure("its answer to CONNECT passed \(Self.maxResponseBytes) bytes without ending"))
    }
    return .needMore
  }

  /// The proxy closed the connection (or it failed, for `reason`) before the tunnel opened.
  func closed(_ reason: String? = nil) -> RPCError {
    failure(
      reason.map { "the connection failed before it answered CONNECT: \($0)" }
        ?? (response.isEmpty
          ? "it closed the connection without answering CONNECT"
          : "it closed the connection in the middle of its answer to CONNECT"))
  }

  /// The status line's verdict: established for 2xx, else why not.
  private func statusLine() -> Result<Void, RPCError> {
    let end = response.firstIndex(where: { $0 == 13 || $0 == 10 }) ?? response.endIndex
    let line = String(decoding: response[..<end].prefix(200), as: UTF8.self)
    let parts = line.split(separator: " ", maxSplits: 2)
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]),
      (100...599).contains(code)
    else {
      return .failure(failure("it answered CONNECT with something other than HTTP: '\(printable(line))'"))
    }
    guard (200...299).contains(code) else {
      let reason = parts.count > 2 ? " \(printable(String(parts[2])))" : ""
      return .failure(failure("it refused CONNECT \(authority): \(code)\(reason)"))
    }
    return .success(())
  }

  private func failure(_ what: String) -> RPCError {
    RPCError(code: .unavailable, message: "the proxy \(proxy) did not open a tunnel to \(authority): \(what)")
  }

  /// `text` with control characters replaced, for a message.
  private func printable(_ text: String) -> String {
    String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
  }
}

extension ConnectExchange.OnByte {
  fileprivate init(_ verdict: Result<Void, RPCError>) {
    switch verdict {
    case .success: self = .established
    case .failure(let error): self = .failed(error)
    }
  }
}
