import Foundation

/// Why a child process could not be started or did not do what a test waited for.
///
/// The test that asked fails with it: the peers are the proof of wire compatibility and the
/// executables the product, so their absence is never a reason to skip.
public enum ChildProcessError: Error, CustomStringConvertible {
  /// There is no such executable or script at this path; `hint` says how to make one.
  case notFound(String, hint: String)
  /// A system call needed to start the process failed (`errno` or a posix_spawn result).
  case spawnFailed(String, Int32)
  /// The process (named first) ended before it announced its port.
  case exitedBeforeListening(String, ChildProcess.Exit, stdout: [String], stderr: String)
  /// The first stdout line of the process (named first) was this line, not the `expected`
  /// announcement of its port.
  case badListeningLine(String, String, expected: String, stderr: String)
  /// A wait timed out; `stdout` is every line printed so far.
  case timedOut(waitingFor: String, after: Duration, stdout: [String], stderr: String)
  /// The process closed its stdout (exited) before the awaited line came.
  case exited(waitingFor: String, ChildProcess.Exit?, stdout: [String], stderr: String)

  public var description: String {
    switch self {
    case .notFound(let path, let hint):
      return "nothing to run at \(path); \(hint)"
    case .spawnFailed(let what, let code):
      return "could not start a child process: \(what): \(String(cString: strerror(code)))"
    case .exitedBeforeListening(let name, let status, let stdout, let stderr):
      return "\(name) ended (\(status)) before it said where it listens"
        + Self.transcript(stdout, stderr)
    case .badListeningLine(let name, let line, let expected, let stderr):
      return "\(name) printed \"\(line)\" where \(expected) was expected"
        + Self.transcript([], stderr)
    case .timedOut(let what, let after, let stdout, let stderr):
      return "timed out after \(after) waiting for \(what)" + Self.transcript(stdout, stderr)
    case .exited(let what, let status, let stdout, let stderr):
      return "it ended (\(status.map(\.description) ?? "stdout closed")) while waiting for "
        + "\(what)" + Self.transcript(stdout, stderr)
    }
  }

  private static func transcript(_ stdout: [String], _ stderr: String) -> String {
    var text = ""
    if !stdout.isEmpty {
      let shown = stdout.suffix(40)
      text += "\n--- stdout (last \(shown.count) of \(stdout.count) lines) ---\n"
      text += shown.joined(separator: "\n")
    }
    text += "\n--- stderr ---\n" + (stderr.isEmpty ? "(empty)" : String(stderr.suffix(8000)))
    return text
  }
}
