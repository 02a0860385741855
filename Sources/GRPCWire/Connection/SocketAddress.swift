internal import CGRPCSystem
internal import Glibc

/// An IPv4 or IPv6 address and port, as the kernel wants it for connect(2).
struct SocketAddress: Sendable, CustomStringConvertible {
  private var storage = sockaddr_storage()
  private(set) var length: socklen_t = 0

  var family: Int32 { Int32(storage.ss_family) }

  /// Parses a numeric IPv4 or IPv6 address (no name lookup); nil for anything else.
  init?(numericHost host: String, port: Int) {
    var v4 = sockaddr_in()
    var v6 = sockaddr_in6()
    let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    if inet_pton(AF_INET, bare, &v4.sin_addr) == 1 {
      v4.sin_family = sa_family_t(AF_INET)
      v4.sin_port = in_port_t(UInt16(port).bigEndian)
      self.init(v4)
    } else if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
      v6.sin6_family = sa_family_t(AF_INET6)
      v6.sin6_port = in_port_t(UInt16(port).bigEndian)
      self.init(v6)
    } else {
      return nil
    }
  }

  init(_ address: sockaddr_in) {
    withUnsafeMutableBytes(of: &storage) { dst in
      withUnsafeBytes(of: address) { dst.copyMemory(from: $0) }
    }
    length = socklen_t(MemoryLayout<sockaddr_in>.size)
  }

  init(_ address: sockaddr_in6) {
    withUnsafeMutableBytes(of: &storage) { dst in
      withUnsafeBytes(of: address) { dst.copyMemory(from: $0) }
    }
    length = socklen_t(MemoryLayout<sockaddr_in6>.size)
  }

  /// The address's 4 (IPv4) or 16 (IPv6) bytes, in network order.
  var addressBytes: [UInt8] {
    withUnsafeBytes(of: storage) { raw in
      switch family {
      case AF_INET:
        let a = raw.load(fromByteOffset: 0, as: sockaddr_in.self)
        return withUnsafeBytes(of: a.sin_addr) { Array($0) }
      case AF_INET6:
        let a = raw.load(fromByteOffset: 0, as: sockaddr_in6.self)
        return withUnsafeBytes(of: a.sin6_addr) { Array($0) }
      default:
        return []
      }
    }
  }

  /// Whether this is a loopback address (127.0.0.0/8 or ::1).
  var isLoopback: Bool {
    withUnsafeBytes(of: storage) { raw in
      switch family {
      case AF_INET:
        let a = raw.load(fromByteOffset: 0, as: sockaddr_in.self)
        return UInt32(bigEndian: a.sin_addr.s_addr) >> 24 == 127
      case AF_INET6:
        let a = raw.load(fromByteOffset: 0, as: sockaddr_in6.self)
        return withUnsafeBytes(of: a.sin6_addr) { b in
          b.prefix(15).allSatisfy { $0 == 0 } && b[15] == 1
        }
      default:
        return false
      }
    }
  }

  var description: String {
    withUnsafeBytes(of: storage) { raw in
      var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
      switch family {
      case AF_INET:
        var a = raw.load(fromByteOffset: 0, as: sockaddr_in.self)
        inet_ntop(AF_INET, &a.sin_addr, &text, socklen_t(text.count))
        return "\(Self.string(text)):\(UInt16(bigEndian: a.sin_port))"
      case AF_INET6:
        var a = raw.load(fromByteOffset: 0, as: sockaddr_in6.self)
        inet_ntop(AF_INET6, &a.sin6_addr, &text, socklen_t(text.count))
        return "[\(Self.string(text))]:\(UInt16(bigEndian: a.sin6_port))"
      default:
        return "address of family \(family)"
      }
    }
  }

  private static func string(_ nulTerminated: [CChar]) -> String {
    String(decoding: nulTerminated.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    withUnsafeBytes(of: storage) { raw in
      body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
    }
  }

  /// Resolves `host` with getaddrinfo (blocking: call it off the loop). Numeric hosts are
  /// parsed without a lookup.
  static func resolve(host: String, port: Int) -> Result<[SocketAddress], RPCError> {
    if let numeric = SocketAddress(numericHost: host, port: port) { return .success([numeric]) }
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var result: UnsafeMutablePointer<addrinfo>? = nil
    let status = getaddrinfo(host, String(port), &hints, &result)
    guard status == 0 else {
      let reason = String(cString: gai_strerror(status))
      return .failure(
        RPCError(code: .unavailable, message: "cannot resolve '\(host)': \(reason)"))
    }
    defer { freeaddrinfo(result) }
    var addresses: [SocketAddress] = []
    var cursor = result
    while let info = cursor {
      if let address = info.pointee.ai_addr {
        switch info.pointee.ai_family {
        case AF_INET:
          addresses.append(SocketAddress(UnsafeRawPointer(address).load(as: sockaddr_in.self)))
        case AF_INET6:
          addresses.append(SocketAddress(UnsafeRawPointer(address).load(as: sockaddr_in6.self)))
        default:
          break
        }
      }
      cursor = info.pointee.ai_next
    }
    guard !addresses.isEmpty else {
      return .failure(RPCError(code: .unavailable, message: "'\(host)' has no IPv4 or IPv6 address"))
    }
    return .success(addresses)
  }
}

/// errno as text, for messages a person reads.
func errnoDescription(_ code: Int32) -> String {
  String(cString: strerror(code))
}
