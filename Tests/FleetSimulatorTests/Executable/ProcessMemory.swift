import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The resident memory of another process on this machine, from `/proc/<pid>/status`.
struct ProcessMemory: Sendable, CustomStringConvertible {
  /// `VmRSS`: resident now, in MiB.
  var residentMiB: Double
  /// `VmHWM`: the most it has been resident at any moment since it started, in MiB. The
  /// kernel keeps this high-water mark, so a peak between two looks is not missed.
  var peakResidentMiB: Double

  /// The memory of `pid`; nil when it has exited (or is a zombie, which has no `VmRSS`).
  static func of(_ pid: pid_t) -> ProcessMemory? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    else { return nil }
    var kibibytes: [String: Double] = [:]
    for line in status.split(separator: "\n") {
      // "VmRSS:	   26112 kB"
      let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
      guard parts.count == 3, parts[2] == "kB", let value = Double(parts[1]) else { continue }
      kibibytes[String(parts[0].dropLast())] = value
    }
    guard let resident = kibibytes["VmRSS"], let peak = kibibytes["VmHWM"] else { return nil }
    return ProcessMemory(residentMiB: resident / 1024, peakResidentMiB: peak / 1024)
  }

  var description: String {
    "RSS \(Int(residentMiB.rounded())) MiB now, \(Int(peakResidentMiB.rounded())) MiB at peak"
  }
}
