import Testing

@testable import GRPCWire

/// The CONNECT exchange as a value: the request's bytes, and each way a proxy can answer.
@Suite("CONNECT exchange")
struct ConnectExchangeTests {
  static func exchange(_ url: String = "http://proxy:3128", host: String = "target", port: Int = 443)
    throws -> ConnectExchange
  {
    ConnectExchange(proxy: try HTTPProxy(url), host: host, port: port, userAgent: "test/1")
  }

  /// Feeds `text` byte by byte; the verdict and how many bytes were taken.
  static func feed(_ exchange: inout ConnectExchange, _ text: String) -> (ConnectExchange.OnByte, Int) {
    var taken = 0
    for byte in text.utf8 {
      taken += 1
      let verdict = exchange.received(byte)
      if verdict != .needMore { return (verdict, taken) }
    }
    return (.needMore, taken)
  }

  @Test("the request: CONNECT authority, Host, User-Agent, Proxy-Authorization only with a user")
  func request() throws {
    #expect(
      String(decoding: try Self.exchange().request, as: UTF8.self)
        == "CONNECT target:443 HTTP/1.1\r\nHost: target:443\r\nUser-Agent: test/1\r\n\r\n")
    #expect(
      String(decoding: try Self.exchange("http://u:p@proxy:1", host: "::1", port: 8443).request, as: UTF8.self)
        == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\nUser-Agent: test/1\r\n"
        + "Proxy-Authorization: Basic dTpw\r\n\r\n")
  }

  @Test("a 200 opens the tunnel at the blank line: the bytes after it are not taken")
  func established() throws {
    var exchange = try Self.exchange()
    let answer = "HTTP/1.1 200 Connection established\r\nProxy-Agent: x\r\n\r\n"
    let (verdict, taken) = Self.feed(&exchange, answer + "TARGET BYTES")
    #expect(verdict == .established)
    #expect(taken == answer.utf8.count)
  }

  @Test("any 2xx opens it, and a bare-LF answer too")
  func otherSuccess() throws {
    var first = try Self.exchange()
    #expect(Self.feed(&first, "HTTP/1.0 204 OK\r\n\r\n").0 == .established)
    var second = try Self.exchange()
    #expect(Self.feed(&second, "HTTP/1.1 200 OK\n\n").0 == .established)
  }

  @Test(
    "a refusal is UNAVAILABLE naming the proxy (no password), the target and the status",
    arguments: [
      ("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", "407 Proxy Authentication Required"),
      ("HTTP/1.0 403 Access violation\r\n\r\n", "403 Access violation"),
      ("HTTP/1.1 502 Bad Gateway\r\nX: y\r\n\r\n", "502 Bad Gateway"),
      ("HTTP/1.1 500\r\n\r\n", "500"),
    ])
  func refused(_ answer: String, _ status: String) throws {
    var exchange = try Self.exchange("http://alice:s3cret@proxy:3128")
    guard case .failed(let error) = Self.feed(&exchange, answer).0 else {
      Issue.record("not refused")
      return
    }
    #expect(error.code == .unavailable)
    #expect(
      error.message
        == "the proxy http://alice:***@proxy:3128 did not open a tunnel to target:443: it "
        + "refused CONNECT target:443: \(status)")
  }

  @Test("an answer that is not HTTP, or never ends, fails without waiting for more")
  func hostile() throws {
    var garbage = try Self.exchange()
    guard case .failed(let notHTTP) = Self.feed(&garbage, "SSH-2.0-OpenSSH\r\n\r\n").0 else {
      Issue.record("accepted")
      return
    }
    #expect(notHTTP.message.hasSuffix("it answered CONNECT with something other than HTTP: 'SSH-2.0-OpenSSH'"))
    var endless = try Self.exchange()
    let (verdict, taken) = Self.feed(
      &endless, "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Pad: 0123456789\r\n", count: 2_000))
    guard case .failed(let tooLong) = verdict else {
      Issue.record("accepted")
      return
    }
    #expect(taken == ConnectExchange.maxResponseBytes + 1)
    #expect(tooLong.message.hasSuffix("its answer to CONNECT passed 16384 bytes without ending"))
  }

  @Test("a proxy that closes says so: before answering, or in the middle")
  func closed() throws {
    let silent = try Self.exchange()
    #expect(silent.closed().message.hasSuffix("it closed the connection without answering CONNECT"))
    var halfway = try Self.exchange()
    _ = Self.feed(&halfway, "HTTP/1.1 200")
    #expect(halfway.closed().message.hasSuffix("it closed the connection in the middle of its answer to CONNECT"))
    #expect(halfway.closed("reset by peer").code == .unavailable)
  }
}
