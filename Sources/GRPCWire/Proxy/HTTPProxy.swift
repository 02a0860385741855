internal import FleetSync
/// An HTTP CONNECT proxy, from a URL such as `http://user:password@proxy.internal:3128`.
///
/// `http://` (or no scheme) reaches the proxy over plain TCP, `https://` over TLS (the proxy's
/// name as SNI and verified in its certificate, against ``ChannelOptions/proxyTrustRoots``),
/// with the tunnel — and the TLS to the target — inside it. User info becomes
/// `Proxy-Authorization: Basic`. The password is never shown: ``description`` and every error
/// name the proxy as `http://user:***@host:port`.
public struct HTTPProxy: Sendable, Hashable, CustomStringConvertible {
  /// TLS to the proxy itself (`https://`).
  public var usesTLS: Bool
  /// The proxy's host name or IP address (no brackets around an IPv6 address).
  public var host: String
  /// The proxy's port: as given, else 80 for `http://`, 443 for `https://`.
  public var port: Int
  /// From the URL's user info, percent-decoded.
  public var username: String?
  public var password: String?

  /// Parses a proxy URL; throws INVALID_ARGUMENT naming what is wrong (never quoting the
  /// password). `field` names where the URL came from (`ChannelOptions.proxy`, `https_proxy`).
  public init(_ url: String, field: String = "ChannelOptions.proxy") throws(RPCError) {
    func invalid(_ why: String) -> RPCError {
      RPCError(
        code: .invalidArgument,
        message: "\(field): '\(Self.redacted(url))' is not a usable proxy URL: \(why)")
    }
    var rest = Substring(url.trimmingASCIIWhitespace())
    guard !rest.isEmpty else { throw invalid("it is empty") }
    if let scheme = rest.range(of: "://") {
      switch rest[..<scheme.lowerBound].lowercased() {
      case "http": usesTLS = false
      case "https": usesTLS = true
      case let other: throw invalid("scheme '\(other)' is not http or https")
      }
      rest = rest[scheme.upperBound...]
    } else {
      usesTLS = false
    }
    // Only an authority, and an optional "/" (some environments write "http://proxy:3128/").
    if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
      guard rest[slash...] == "/" else { throw invalid("a proxy URL has no path, query or fragment") }
      rest = rest[..<slash]
    }
    if let at = rest.lastIndex(of: "@") {
      let userInfo = rest[..<at]
      rest = rest[rest.index(after: at)...]
      let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      guard let user = Self.percentDecoded(parts[0]),
        let pass = parts.count > 1 ? Self.percentDecoded(parts[1]) : ""
      else { throw invalid("the user info has a bad percent-escape") }
      guard !user.isEmpty else { throw invalid("the user name is empty") }
      username = user
      password = parts.count > 1 ? pass : nil
    } else {
      username = nil
      password = nil
    }
    var portText: Substring?
    if rest.hasPrefix("[") {
      guard let close = rest.firstIndex(of: "]") else { throw invalid("an IPv6 address lacks its ']'") }
      host = String(rest[rest.index(after: rest.startIndex)..<close])
      let after = rest[rest.index(after: close)...]
      if !after.isEmpty {
        guard after.hasPrefix(":") else { throw invalid("unexpected text after ']'") }
        portText = after.dropFirst()
      }
      guard SocketAddress(numericHost: host, port: 0) != nil else {
        throw invalid("'\(host)' is not an IPv6 address")
      }
    } else {
      let colon = rest.lastIndex(of: ":")
      host = String(colon.map { rest[..<$0] } ?? rest)
      portText = colon.map { rest[rest.index(after: $0)...] }
      guard !host.contains(":") else { throw invalid("an IPv6 address must be in brackets") }
    }
    guard !host.isEmpty else { throw invalid("it names no host") }
    guard host.allSatisfy({ $0.isLetter || $0.isNumber || "-._:%".contains($0) }) else {
      throw invalid("'\(host)' is not a host name or address")
    }
    if let portText {
      guard let port = Int(portText), (1...65_535).contains(port) else {
        throw invalid("the port '\(portText)' is not within 1...65535")
      }
      self.port = port
    } else {
      port = usesTLS ? 443 : 80
    }
  }

  /// `http://host:port`, with `user:***@` when there are credentials.
  public var description: String {
    let user = username.map { "\($0)\(password == nil ? "" : ":***")@" } ?? ""
    return "\(usesTLS ? "https" : "http")://\(user)\(host.contains(":") ? "[\(host)]" : host):\(port)"
  }

  /// `Proxy-Authorization`'s value: `Basic base64(user:password)`; nil without a user.
  var authorization: String? {
    guard let username else { return nil }
    // RFC 7617: standard Base64 with its padding.
    let encoded = Base64.encodeUnpadded(Array("\(username):\(password ?? "")".utf8))
    return "Basic " + encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
  }

  /// `url` with the password of its user info, if any, replaced by `***`: how a proxy URL may
  /// be shown or logged.
  public static func redacted(_ url: String) -> String {
    guard let at = url.lastIndex(of: "@") else { return url }
    let start = url.range(of: "://").map(\.upperBound) ?? url.startIndex
    guard start < at else { return url }
    let userInfo = url[start..<at]
    guard let colon = userInfo.firstIndex(of: ":") else { return url }
    return String(url[..<colon]) + ":***" + String(url[at...])
  }

  /// `%XX` escapes decoded; nil for a malformed escape or bytes that are not UTF-8.
  static func percentDecoded(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next().flatMap(GRPCMessageEncoding.hexValue),
        let low = iterator.next().flatMap(GRPCMessageEncoding.hexValue)
      else { return nil }
      bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
  }
}

extension StringProtocol {
  /// Without leading and trailing spaces, tabs and line breaks.
  func trimmingASCIIWhitespace() -> SubSequence {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
    else { return self[endIndex...] }
    return self[first...last]
  }
}
