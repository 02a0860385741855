import Foundation

/// One `EVENT <kind> <path or -> key=value ... [headers=<json>]` line of a peer server.
///
/// The servers of `Tests/Python` document their kinds and keys at the top of each script
/// (interop_server.py: `started`, `cancelled`, `rst_stream`, `message`, ...).
public struct PeerEvent: Sendable, Equatable, CustomStringConvertible {
  /// The whole line as printed.
  public var line: String
  /// What happened, e.g. `cancelled`, `rst_stream`, `message`.
  public var kind: String
  /// The call's `:path`, or nil for connection events (printed as `-`).
  public var path: String?
  /// The `key=value` fields.
  public var fields: [String: String]
  /// The `headers=` list of (name, value) pairs, in wire order, when the line has one.
  public var headers: [[String]]?

  /// Parses `line`; nil when it is not an EVENT line.
  public init?(_ line: String) {
    var body = Substring(line)
    var headers: [[String]]?
    if let range = line.range(of: " headers=") {
      body = line[..<range.lowerBound]
      let json = Data(line[range.upperBound...].utf8)
      headers = try? JSONDecoder().decode([[String]].self, from: json)
    }
    let parts = body.split(separator: " ", omittingEmptySubsequences: true)
    guard parts.count >= 3, parts[0] == "EVENT" else { return nil }
    self.line = line
    self.kind = String(parts[1])
    self.path = parts[2] == "-" ? nil : String(parts[2])
    var fields: [String: String] = [:]
    for part in parts.dropFirst(3) {
      guard let equals = part.firstIndex(of: "=") else { continue }
      fields[String(part[..<equals])] = String(part[part.index(after: equals)...])
    }
    self.fields = fields
    self.headers = headers
  }

  /// The value of header `name` (the first one), when the line has headers.
  public func header(_ name: String) -> String? {
    headers?.first { $0.count == 2 && $0[0] == name }?[1]
  }

  public subscript(field: String) -> String? { fields[field] }

  public var description: String { line }
}
