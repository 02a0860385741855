import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// This process's CPU time and peak resident memory, from `getrusage(RUSAGE_SELF)`.
struct ProcessUsage {
  /// User-mode CPU seconds so far, all threads.
  var userSeconds: Double
  /// Kernel-mode CPU seconds so far, all threads.
  var systemSeconds: Double
  /// The largest resident set so far, in bytes (Linux reports kibibytes).
  var peakRSSBytes: Int

  /// The usage now.
  static func now() -> ProcessUsage {
    var usage = rusage()
    _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return ProcessUsage(
      userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime),
      peakRSSBytes: Int(usage.ru_maxrss) * 1024)
  }

  /// The resident set now, in bytes (from /proc/self/statm; 0 where that is missing).
  static func currentRSSBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else {
      return 0
    }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  private static func seconds(_ time: timeval) -> Double {
    Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000
  }
}
