import FleetConsumer

/// One JSON object written as one line, keys in the order they were added.
///
/// `fleet-follow --json` promises exact lines, so they are written by hand rather than by an
/// encoder that may reorder keys or escape differently.
struct JSONLine {
  private var text = "{"

  init() {}

  mutating func add(_ key: String, _ value: String) {
    append(key)
    text += Self.quoted(value)
  }

  mutating func add(_ key: String, _ value: Int) {
    append(key)
    text += String(value)
  }

  mutating func add(_ key: String, _ value: Int64) {
    append(key)
    text += String(value)
  }

  mutating func add(_ key: String, _ value: Double) {
    append(key)
    // Swift prints the shortest round-tripping form ("52.52", "1e-05"), which is valid JSON.
    text += value.isFinite ? String(value) : "null"
  }

  mutating func add(_ key: String, _ values: [String]) {
    append(key)
    text += "[" + values.map(Self.quoted).joined(separator: ",") + "]"
  }

  /// The finished object.
  var line: String { text + "}" }

  private mutating func append(_ key: String) {
    // utf8.count is O(1) on a native string; count walks every character.
    if text.utf8.count > 1 { text += "," }
    text += Self.quoted(key) + ":"
  }

  /// `value` as a JSON string: quotes, backslashes and control characters escaped, the rest
  /// as UTF-8.
  static func quoted(_ value: String) -> String {
    JSONText.quoted(value)
  }
}
