import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A loopback port that nothing listens on (bound, then released), for tests that need a
/// refused connection or a port to start a server on later.
public func unusedPort() throws -> Int {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  _ = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
  }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// Starts a server that cannot be given port 0 (tinyproxy, squid) on an unused port, trying
/// again on another when `start` throws: a process may take the port between ``unusedPort()``
/// and the server's bind. `start` stops what it started before it throws; the last error is
/// thrown after `attempts` tries.
public func startOnUnusedPort<T>(
  attempts: Int = 3, isolation: isolated (any Actor)? = #isolation,
  _ start: (Int) async throws -> T
) async throws -> T {
  var lastError: (any Error)?
  for _ in 0..<attempts {
    do {
      return try await start(try unusedPort())
    } catch {
      lastError = error
    }
  }
  throw lastError!
}

/// Whether a socket of this machine listens on 127.0.0.1:`port` (or on every IPv4 address),
/// read from /proc/net/tcp without connecting to it: for a server that says it accepts
/// connections before its `listen` has taken effect (squid), where a probing connection
/// would show up in the server's own logs.
public func isListening(onLoopbackPort port: Int) -> Bool {
  guard let table = ProcFile.read("/proc/net/tcp") else { return false }
  // Each row: `sl local_address rem_address st ...`, the address as hex `ADDR:PORT` with the
  // IPv4 address in host byte order (0100007F is 127.0.0.1), st 0A meaning LISTEN.
  let hex = String(port, radix: 16, uppercase: true)
  let wanted = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  return table.split(separator: "\n").dropFirst().contains { row in
    let fields = row.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.count > 3 else { return false }
    let local = fields[1].split(separator: ":")
    return local.count == 2 && local[1] == wanted && fields[3] == "0A"
      && (local[0] == "0100007F" || local[0] == "00000000")
  }
}
