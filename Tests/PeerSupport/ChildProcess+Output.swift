import Foundation
import Testing

extension ChildProcess {
  /// What a finished child left behind (``ChildProcess/output(within:)``).
  public struct Output: Sendable {
    /// How it ended.
    public var exit: Exit
    public var stdout: [UInt8]
    public var stderr: String

    /// The exit status (or the signal number when a signal ended it).
    public var status: Int32 { exit.status }

    /// `stdout` as UTF-8 text.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    /// The exit status and both streams, for a failure message.
    public var transcript: String {
      "exit status \(status)\n--- stdout ---\n\(stdoutText)\n--- stderr ---\n\(stderr)"
    }

    /// Attaches both streams to the current test, named after `name` (kept when `swift test`
    /// runs with `--attachments-path`; failure messages carry `transcript` regardless).
    public func attach(as name: String) {
      Attachment.record(stdout, named: "\(name).stdout.txt")
      Attachment.record(stderr, named: "\(name).stderr.txt")
    }
  }
}
