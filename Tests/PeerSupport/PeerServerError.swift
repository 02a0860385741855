import Foundation

/// How a peer server process ended.
public enum PeerExitStatus: Sendable, Equatable, CustomStringConvertible {
  /// It exited with this status (0 after a clean SIGTERM shutdown).
  case exited(Int32)
  /// A signal it did not handle ended it (SIGKILL = 9 after a `stop` that had to force it).
  case signalled(Int32)

  public var description: String {
    switch self {
    case .exited(let status): "exit status \(status)"
    case .signalled(let signal): "killed by signal \(signal)"
    }
  }
}

/// Why a peer server could not be started or did not do what a test waited for.
///
/// The test that asked fails with it: these servers are the proof of wire compatibility, so
/// their absence is never a reason to skip.
public enum PeerServerError: Error, CustomStringConvertible {
  /// `Tests/Python` has no such script.
  case noScript(String)
  /// A system call needed to start the process failed (`errno` or a posix_spawn result).
  case spawnFailed(String, Int32)
  /// The process ended before it printed `LISTENING <port>`.
  case exitedBeforeListening(script: String, PeerExitStatus, stdout: [String], stderr: String)
  /// Its first stdout line was not `LISTENING <port>`.
  case badListeningLine(script: String, String, stderr: String)
  /// A wait timed out; `stdout` is every line printed so far.
  case timedOut(waitingFor: String, after: Duration, stdout: [String], stderr: String)
  /// The process closed its stdout (exited) before the awaited line came.
  case exited(waitingFor: String, PeerExitStatus?, stdout: [String], stderr: String)

  public var description: String {
    switch self {
    case .noScript(let path):
      return "no Python script at \(path)"
    case .spawnFailed(let what, let code):
      return "could not start a peer server: \(what): \(String(cString: strerror(code)))"
    case .exitedBeforeListening(let script, let status, let stdout, let stderr):
      return "\(script) ended (\(status)) before printing LISTENING <port>"
        + Self.transcript(stdout, stderr)
    case .badListeningLine(let script, let line, let stderr):
      return "\(script) printed \"\(line)\" where LISTENING <port> was expected"
        + Self.transcript([], stderr)
    case .timedOut(let what, let after, let stdout, let stderr):
      return "timed out after \(after) waiting for \(what)" + Self.transcript(stdout, stderr)
    case .exited(let what, let status, let stdout, let stderr):
      return "the peer server ended (\(status.map(\.description) ?? "stdout closed")) while "
        + "waiting for \(what)" + Self.transcript(stdout, stderr)
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
