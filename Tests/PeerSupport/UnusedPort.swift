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
