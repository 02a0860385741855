import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// This process's CPU time, from `getrusage(RUSAGE_SELF)` as fleet-load measures itself, and
/// its peak resident memory, from VmHWM in /proc/self/status.
///
/// Not `ru_maxrss`: Linux carries a forked child's high-water mark across exec, so a client
/// started by a large process (a test runner, a script) would report at least that size.
struct ProcessUsage: Sendable {
  /// User-mode CPU seconds so far, all threads.
  var userSeconds: Double
  /// Kernel-mode CPU seconds so far, all threads.
  var systemSeconds: Double
  /// The largest resident set of this program so far, in bytes.
  var peakRSSBytes: Int

  /// The usage now.
  static func now() -> ProcessUsage {
    var usage = rusage()
    _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return ProcessUsage(
      userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime),
      peakRSSBytes: highWaterRSS() ?? Int(usage.ru_maxrss) * 1024)
  }

  /// VmHWM of /proc/self/status (kibibytes there), or nil where there is none.
  private static func highWaterRSS() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
      return nil
    }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }
    return nil
  }

  private static func seconds(_ time: timeval) -> Double {
    Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000
  }
}
