import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// This process's CPU time (`getrusage(RUSAGE_SELF)`) and resident memory (/proc/self).
struct ProcessUsage {
  /// User-mode CPU seconds so far, all threads.
  var userSeconds: Double
  /// Kernel-mode CPU seconds so far, all threads.
  var systemSeconds: Double
  /// The largest resident set so far, in bytes: VmHWM. Not `ru_maxrss`, which Linux carries
  /// across exec from the parent, so a tool started by a large process would report that
  /// process's size.
  var peakRSSBytes: Int

  /// The usage now.
  static func now() -> ProcessUsage {
    var usage = rusage()
    _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return ProcessUsage(
      userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime),
      peakRSSBytes: statusKilobytes("VmHWM").map { $0 * 1024 } ?? Int(usage.ru_maxrss) * 1024)
  }

  /// The resident set now, in bytes (VmRSS; 0 where /proc is missing).
  static func currentRSSBytes() -> Int {
    (statusKilobytes("VmRSS") ?? 0) * 1024
  }

  /// A `kB` field of /proc/self/status.
  private static func statusKilobytes(_ field: String) -> Int? {
    for line in readProcFile("/proc/self/status").split(separator: "\n")
    where line.hasPrefix(field + ":") {
      return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
        .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }
    return nil
  }

  /// A /proc file read to its end with read(2): /proc files report a size of 0, so readers
  /// that trust the size can stop early.
  static func readProcFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func seconds(_ time: timeval) -> Double {
    Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000
  }
}
