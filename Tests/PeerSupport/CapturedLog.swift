import FleetSync
import Logging

/// A swift-log handler that keeps every line, level, message and metadata rendered as text
/// (`notice message key=value …`, keys sorted), for tests that check what was logged.
public struct CapturedLog: LogHandler {
  public let lines: PosixMutex<[String]>
  public var metadata: Logger.Metadata = [:]
  public var logLevel: Logger.Level = .trace

  public init(lines: PosixMutex<[String]>) {
    self.lines = lines
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    lines.withLock { $0.append("\(event.level) \(event.message) \(rendered.joined(separator: " "))") }
  }
}
