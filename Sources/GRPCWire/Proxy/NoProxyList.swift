/// The hosts a proxy from the environment is not used for: `no_proxy`'s comma-separated
/// entries.
///
/// An entry is `*` (every host), a host name (`example.com` matches it and its subdomains;
/// `.example.com` and `*.example.com` the same), an IP address, or a CIDR range
/// (`10.0.0.0/8`, `fd00::/8`), each optionally with `:port` (`[::1]:443` for IPv6) to match
/// that port only. Names match names and addresses match addresses: nothing is resolved. As
/// in gRPC's C-core, a loopback target is not exempt unless an entry names it.
struct NoProxyList: Sendable, Hashable {
  enum Entry: Sendable, Hashable {
    case all
    /// A name, lower-case, without a leading `.` or `*.`.
    case name(String, port: Int?)
    /// The first `prefixLength` bits of `address` (4 or 16 bytes).
    case range(address: [UInt8], prefixLength: Int, port: Int?)
  }

  let entries: [Entry]

  /// Parses `text`; entries that are none of the above are left out (as other gRPC
  /// implementations do: one typo must not send everything through the proxy).
  init(_ text: String) {
    entries = text.split(separator: ",").compactMap { Self.entry(String($0.trimmingASCIIWhitespace())) }
  }

  /// Whether `host` (a name, or an IP address with or without brackets) at `port` is exempt.
  func matches(host: String, port: Int) -> Bool {
    var host = host.lowercased()
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host.hasSuffix(".") { host.removeLast() }
    let address = Self.addressBytes(host)
    return entries.contains { entry in
      switch entry {
      case .all:
        return true
      case .name(let name, let entryPort):
        guard address == nil, entryPort == nil || entryPort == port else { return false }
        return host == name || host.hasSuffix("." + name)
      case .range(let network, let prefixLength, let entryPort):
        guard let address, address.count == network.count, entryPort == nil || entryPort == port
        else { return false }
        return Self.prefix(of: address, prefixLength) == Self.prefix(of: network, prefixLength)
      }
    }
  }

  private static func entry(_ text: String) -> Entry? {
    guard !text.isEmpty else { return nil }
    if text == "*" { return .all }
    var body = Substring(text.lowercased())
    var port: Int?
    if body.hasPrefix("[") {
      // [v6] or [v6]:port (or [v6/len]).
      guard let close = body.firstIndex(of: "]") else { return nil }
      let after = body[body.index(after: close)...]
      if after.hasPrefix(":") {
        guard let value = Int(after.dropFirst()), (1...65_535).contains(value) else { return nil }
        port = value
      } else if !after.isEmpty {
        return nil
      }
      body = body[body.index(after: body.startIndex)..<close]
    } else if body.filter({ $0 == ":" }).count == 1, let colon = body.firstIndex(of: ":") {
      // name:port or v4:port (one colon: not an IPv6 address).
      guard let value = Int(body[body.index(after: colon)...]), (1...65_535).contains(value)
      else { return nil }
      port = value
      body = body[..<colon]
    }
    if let slash = body.firstIndex(of: "/") {
      guard let address = addressBytes(String(body[..<slash])),
        let length = Int(body[body.index(after: slash)...]), (0...address.count * 8).contains(length)
      else { return nil }
      return .range(address: address, prefixLength: length, port: port)
    }
    if let address = addressBytes(String(body)) {
      return .range(address: address, prefixLength: address.count * 8, port: port)
    }
    while body.hasPrefix("*") || body.hasPrefix(".") { body = body.dropFirst() }
    if body.hasSuffix(".") { body = body.dropLast() }
    guard !body.isEmpty else { return nil }
    return .name(String(body), port: port)
  }

  /// The 4 or 16 bytes of an IPv4 or IPv6 address; nil for anything else.
  static func addressBytes(_ host: String) -> [UInt8]? {
    guard let address = SocketAddress(numericHost: host, port: 0) else { return nil }
    return address.addressBytes
  }

  private static func prefix(of bytes: [UInt8], _ length: Int) -> [UInt8] {
    var result = Array(bytes.prefix((length + 7) / 8))
    if length % 8 != 0, !result.isEmpty {
      result[result.count - 1] &= UInt8(truncatingIfNeeded: 0xFF << (8 - length % 8))
    }
    return result
  }
}
