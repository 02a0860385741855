#if canImport(Glibc)
  import Glibc
#endif

/// This process's CPU time and peak resident memory, from `getrusage(RUSAGE_SELF)` (as
/// fleet-load measures itself).
struct ProcessUsage: Sendable {
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

  private static func seconds(_ time: timeval) -> Double {
    Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000
  }
}
