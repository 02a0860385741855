import Foundation
import PeerSupport

extension ChildProcess {
  /// The sockets it holds now (its /proc/PID/fd entries that are sockets).
  var socketCount: Int {
    let folder = "/proc/\(pid)/fd"
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return fds.filter { fd in
      let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)")
      return target?.hasPrefix("socket:") == true
    }.count
  }
}
