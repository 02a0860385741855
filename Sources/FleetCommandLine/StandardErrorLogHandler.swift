internal import FleetConsumer
internal import FleetSync
internal import Glibc
public import Logging

/// A swift-log handler writing one line per entry to stderr, as text or JSON (``LogFormat``),
/// each line in one write, so lines from several threads never interleave.
///
/// Metadata is written as given: whoever logs must leave secrets out (GRPCWire and
/// FleetConsumer log no metadata values, tokens or keys).
public struct StandardErrorLogHandler: LogHandler {
  public var metadata: Logger.Metadata = [:]
  public var logLevel: Logger.Level = .info
  private let label: String
  private let format: LogFormat

  /// Serialises writes: a line longer than a pipe's atomic size could otherwise interleave.
  private static let output = PosixMutex(())

  public init(label: String, format: LogFormat) {
    self.label = label
    self.format = format
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var merged = metadata
    if let extra = event.metadata { merged.merge(extra) { _, new in new } }
    let line = Self.line(
      time: Self.timestamp(), level: event.level, label: label, message: "\(event.message)",
      metadata: merged, format: format)
    Self.output.withLock { _ in
      var bytes = Array((line + "\n").utf8)
      bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
          let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
          if written > 0 {
            offset += written
          } else if written < 0, errno == EINTR {
            continue
          } else {
            return  // stderr is gone: nothing else can be told
          }
        }
      }
    }
  }

  /// One entry as a line (no newline).
  static func line(
    time: String, level: Logger.Level, label: String, message: String,
    metadata: Logger.Metadata, format: LogFormat
  ) -> String {
    let keys = metadata.keys.sorted()
    switch format {
    case .text:
      let pairs = keys.map { " \($0)=\(metadata[$0]!)" }.joined()
      return "\(time) \(level) \(label): \(message)\(pairs)"
    case .json:
      let fields = keys.map { "\(JSONText.quoted($0)):\(JSONText.quoted("\(metadata[$0]!)"))" }
      return "{\"time\":\(JSONText.quoted(time)),\"level\":\(JSONText.quoted("\(level)")),"
        + "\"logger\":\(JSONText.quoted(label)),\"message\":\(JSONText.quoted(message)),"
        + "\"metadata\":{\(fields.joined(separator: ","))}}"
    }
  }

  /// Now, in UTC, to the millisecond: `2026-01-02T03:04:05.678Z`.
  static func timestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var seconds = now.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int32, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
      + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
      + ".\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
  }
}
