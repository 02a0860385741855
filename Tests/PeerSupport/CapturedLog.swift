import FleetSync
import Logging

/// A swift-log handler that keeps every line, level, message and metadata rendered as text
/// (`notice message key=value …`, keys sorted), for tests that check what was logged; and
/// hands each line to `logged`, for tests that wait for one.
public struct CapturedLog: LogHandler {
  public let lines: PosixMutex<[String]>
  public var metadata: Logger.Metadata = [:]
  public var logLevel: Logger.Level = .trace
  private let logged: (@Sendable (String) -> Void)?

  public init(lines: PosixMutex<[String]>, logged: (@Sendable (String) -> Void)? = nil) {
    self.lines = lines
    self.logged = logged
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    let line = "\(event.level) \(event.message) \(rendered.joined(separator: " "))"
    lines.withLock { $0.append(line) }
    logged?(line)
  }
}
