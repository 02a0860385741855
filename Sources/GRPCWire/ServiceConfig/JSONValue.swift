/// A JSON document as a value, parsed by hand (RFC 8259) for the service config: a config is
/// small and read once, and a hand parser can say where it broke.
enum JSONValue: Sendable, Hashable {
  case null
  case bool(Bool)
  /// The number's text as written (`1.5`, `-3e2`): the config decides what it may be.
  case number(String)
  case string(String)
  case array([JSONValue])
  /// Members in order; a repeated key is refused by the parser.
  case object([(key: String, value: JSONValue)])

  static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)):
      a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: false
    }
  }

  func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let value): hasher.combine(value)
    case .number(let text), .string(let text): hasher.combine(text)
    case .array(let values): hasher.combine(values)
    case .object(let members):
      for member in members {
        hasher.combine(member.key)
        hasher.combine(member.value)
      }
    }
  }

  /// What kind of value it is, for messages ("a string", "an object").
  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// Parses `text`; throws a message saying where and why it is not JSON.
  static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
    var parser = Parser(bytes: Array(text.utf8))
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.index == parser.bytes.count else { throw parser.error("text after the JSON value") }
    return value
  }

  private struct Parser {
    let bytes: [UInt8]
    var index = 0

    func error(_ what: String) -> JSONSyntaxError {
      JSONSyntaxError(message: "not JSON at byte \(index): \(what)")
    }

    mutating func skipSpace() {
      while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
      guard depth < 64 else { throw error("nested more than 64 deep") }
      guard index < bytes.count else { throw error("the text ends where a value should be") }
      switch bytes[index] {
      case UInt8(ascii: "{"): return try object(depth: depth)
      case UInt8(ascii: "["): return try array(depth: depth)
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"): return try literal("true", .bool(true))
      case UInt8(ascii: "f"): return try literal("false", .bool(false))
      case UInt8(ascii: "n"): return try literal("null", .null)
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
      default: throw error("unexpected '\(Character(Unicode.Scalar(bytes[index])))'")
      }
    }

    mutating func literal(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
      let word = Array(word.utf8)
      guard bytes.count - index >= word.count, Array(bytes[index..<index + word.count]) == word else {
        throw error("unexpected '\(Character(Unicode.Scalar(bytes[index])))'")
      }
      index += word.count
      return value
    }

    mutating func number() throws(JSONSyntaxError) -> JSONValue {
      let start = index
      func digits(_ parser: inout Parser) -> Int {
        let from = parser.index
        while parser.index < parser.bytes.count,
          (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index])
        {
          parser.index += 1
        }
        return parser.index - from
      }
      if bytes[index] == UInt8(ascii: "-") { index += 1 }
      let integer = digits(&self)
      guard integer > 0 else { throw error("a number needs digits") }
      guard integer == 1 || bytes[index - integer] != UInt8(ascii: "0") else {
        throw error("a number must not start with 0")
      }
      if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
        index += 1
        guard digits(&self) > 0 else { throw error("a fraction needs digits") }
      }
      if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
          index += 1
        }
        guard digits(&self) > 0 else { throw error("an exponent needs digits") }
      }
      return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    mutating func string() throws(JSONSyntaxError) -> String {
      index += 1  // the opening quote
      var out: [UInt8] = []
      while true {
        guard index < bytes.count else { throw error("a string is not closed") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""):
          guard let text = String(validating: out, as: UTF8.self) else {
            throw error("a string is not UTF-8")
          }
          return text
        case UInt8(ascii: "\\"):
          guard index < bytes.count else { throw error("a string is not closed") }
          let escape = bytes[index]
          index += 1
          switch escape {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
          case UInt8(ascii: "b"): out.append(0x08)
          case UInt8(ascii: "f"): out.append(0x0C)
          case UInt8(ascii: "n"): out.append(0x0A)
          case UInt8(ascii: "r"): out.append(0x0D)
          case UInt8(ascii: "t"): out.append(0x09)
          case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
              guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
              else { throw error("a lone surrogate in a string") }
              index += 2
              let low = try hex4()
              guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a string") }
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("a lone surrogate in a string") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
          default:
            throw error("a bad escape in a string")
          }
        case 0..<0x20:
          throw error("a control character in a string")
        default:
          out.append(byte)
        }
      }
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
      guard bytes.count - index >= 4 else { throw error("a bad \\u escape") }
      var value: UInt32 = 0
      for _ in 0..<4 {
        guard let digit = GRPCMessageEncoding.hexValue(bytes[index]) else {
          throw error("a bad \\u escape")
        }
        value = value << 4 | UInt32(digit)
        index += 1
      }
      return value
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
      index += 1
      var values: [JSONValue] = []
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(values)
      }
      while true {
        skipSpace()
        values.append(try value(depth: depth + 1))
        skipSpace()
        guard index < bytes.count else { throw error("an array is not closed") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
        index += 1
        return .array(values)
      }
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
      index += 1
      var members: [(key: String, value: JSONValue)] = []
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      }
      while true {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
          throw error("expected a member name in quotes")
        }
        let key = try string()
        guard !members.contains(where: { $0.key == key }) else {
          throw error("the member \"\(key)\" appears twice")
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
        index += 1
        skipSpace()
        members.append((key, try value(depth: depth + 1)))
        skipSpace()
        guard index < bytes.count else { throw error("an object is not closed") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
        index += 1
        return .object(members)
      }
    }
  }
}

/// Why a text is not JSON, and where.
struct JSONSyntaxError: Error {
  let message: String
}
