import Foundation

/// The TCP connections this process holds to a port, read from /proc: the sockets among its
/// file descriptors that /proc/net/tcp (and tcp6) list as ESTABLISHED to that remote port.
///
/// For `--trips`, where TripService opens connections as the server's stream limit requires
/// (up to 8), so the report can say how many it used.
enum OpenConnections {
  static func count(toPort port: Int) -> Int {
    let ours = socketInodes()
    let hexPort = String(format: ":%04X", port)
    var count = 0
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
      for line in ProcessUsage.readProcFile(table).split(separator: "\n").dropFirst() {
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 9, fields[2].hasSuffix(hexPort), fields[3] == "01",
          ours.contains(String(fields[9]))
        else { continue }
        count += 1
      }
    }
    return count
  }

  /// The inodes of this process's sockets (`socket:[inode]` links in /proc/self/fd).
  private static func socketInodes() -> Set<String> {
    let folder = "/proc/self/fd"
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    var inodes = Set<String>()
    for fd in fds {
      guard
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)"),
        target.hasPrefix("socket:[")
      else { continue }
      inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
    }
    return inodes
  }
}
