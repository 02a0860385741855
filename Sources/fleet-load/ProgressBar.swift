import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A one-line progress bar on stderr, redrawn in place; only made when stderr is a terminal.
struct ProgressBar: Sendable {
  let unit: String

  /// A bar when stderr is a terminal, else nil (nothing is drawn).
  static func ifTerminal(unit: String) -> ProgressBar? {
    isatty(STDERR_FILENO) == 1 ? ProgressBar(unit: unit) : nil
  }

  /// Draws `phase`'s progress: towards its unit limit, or through its duration.
  func show(_ label: String, _ phase: LoadPhase) {
    let elapsed = Self.seconds(.now - phase.start)
    let done = phase.completedUnits
    var fraction = 0.0
    if let limit = phase.limit {
      fraction = Double(done) / Double(max(limit, 1))
    } else if let deadline = phase.deadline {
      fraction = elapsed / max(Self.seconds(deadline - phase.start), 1e-9)
    }
    fraction = min(max(fraction, 0), 1)
    let width = 30
    let filled = Int((fraction * Double(width)).rounded(.down))
    let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
    let line =
      "\r\(label) [\(bar)] " + String(format: "%3.0f%%  ", fraction * 100)
      + "\(done) \(unit)  " + String(format: "%.1f s", elapsed)
    FileHandle.standardError.write(Data(line.utf8))
  }

  /// Erases the bar.
  func clear() {
    FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}
