/// protoc-c's names, read from the `.pb-c.c` files it wrote: each message's C type and
/// descriptor symbol, and each field's struct member and quantifier member (`n_…`, `has_…`,
/// `…_case`). Read rather than re-derived, so protobuf-c's naming rules cannot drift.
public struct ProtocCNames: Sendable {
  struct Message: Sendable {
    /// The descriptor symbol without `__descriptor`: `maps__fleetengine__v1__trip`.
    var lower: String
    /// The C struct: `Maps__Fleetengine__V1__Trip`.
    var cType: String
  }

  struct Field: Sendable {
    var member: String
    var quantifier: String?
    /// protoc-c set `PROTOBUF_C_FIELD_FLAG_PACKED`: protobuf-c writes the repeated scalar as
    /// one length-delimited field.
    var packed = false
  }

  /// By full proto name without the leading dot.
  var messages: [String: Message] = [:]
  /// By C type, then field number.
  var fields: [String: [Int32: Field]] = [:]

  /// Reads the texts of protoc-c's `.pb-c.c` files.
  public init(cSources: [String]) {
    for source in cSources { read(Self.tokens(of: source)) }
  }

  func message(_ full: String) throws(GeneratorError) -> Message {
    guard let message = messages[full] else {
      throw GeneratorError(
        file: "", element: "message \(full)", reason: "protoc-c emitted no descriptor for it")
    }
    return message
  }

  func field(_ cType: String, _ number: Int32) throws(GeneratorError) -> Field {
    guard let field = fields[cType]?[number] else {
      throw GeneratorError(
        file: "", element: "C struct \(cType)", reason: "protoc-c emitted no field \(number)")
    }
    return field
  }

  // MARK: Reading protoc-c's C

  enum Token: Equatable {
    case word(String)  // an identifier or a number
    case string(String)
    case punctuation(UInt8)
  }

  /// Finds, in the token stream:
  /// `const ProtobufCMessageDescriptor X__descriptor = { PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,
  /// "full.name", "Short", "CType"` and each field descriptor `{ "name", NUMBER,
  /// PROTOBUF_C_LABEL_…, PROTOBUF_C_TYPE_…, (0 | offsetof(T, quantifier)), offsetof(T, member)`.
  private mutating func read(_ tokens: [Token]) {
    var i = 0
    func word(_ at: Int) -> String? {
      guard at < tokens.count, case .word(let word) = tokens[at] else { return nil }
      return word
    }
    func string(_ at: Int) -> String? {
      guard at < tokens.count, case .string(let string) = tokens[at] else { return nil }
      return string
    }
    func isPunctuation(_ at: Int, _ character: Character) -> Bool {
      at < tokens.count && tokens[at] == .punctuation(character.asciiValue!)
    }
    /// `offsetof ( T , member )` at `at`: (T, member).
    func offsetof(_ at: Int) -> (String, String)? {
      guard word(at) == "offsetof", isPunctuation(at + 1, "("), let type = word(at + 2),
        isPunctuation(at + 3, ","), let member = word(at + 4), isPunctuation(at + 5, ")")
      else { return nil }
      return (type, member)
    }
    while i < tokens.count {
      if word(i) == "const", word(i + 1) == "ProtobufCMessageDescriptor",
        let symbol = word(i + 2), symbol.hasSuffix("__descriptor"), isPunctuation(i + 3, "="),
        isPunctuation(i + 4, "{"), word(i + 5) == "PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC",
        isPunctuation(i + 6, ","), let full = string(i + 7), isPunctuation(i + 8, ","),
        string(i + 9) != nil, isPunctuation(i + 10, ","), let cType = string(i + 11)
      {
        messages[full] = Message(lower: String(symbol.dropLast("__descriptor".count)), cType: cType)
        i += 12
        continue
      }
      if isPunctuation(i, "{"), string(i + 1) != nil, isPunctuation(i + 2, ","),
        let number = word(i + 3).flatMap({ Int32($0) }), isPunctuation(i + 4, ","),
        word(i + 5)?.hasPrefix("PROTOBUF_C_LABEL_") == true, isPunctuation(i + 6, ","),
        word(i + 7)?.hasPrefix("PROTOBUF_C_TYPE_") == true, isPunctuation(i + 8, ",")
      {
        var at = i + 9
        var quantifier: String?
        if word(at) == "0", isPunctuation(at + 1, ",") {
          at += 2
        } else if let (_, member) = offsetof(at), isPunctuation(at + 6, ",") {
          quantifier = member
          at += 7
        } else {
          i += 1
          continue
        }
        if let (cType, member) = offsetof(at) {
          // The rest of the descriptor, to its `}`: descriptor, default value, flags, reserved.
          var end = at + 6
          var packed = false
          while end < tokens.count, !isPunctuation(end, "}") {
            if word(end) == "PROTOBUF_C_FIELD_FLAG_PACKED" { packed = true }
            end += 1
          }
          fields[cType, default: [:]][number] = Field(
            member: member, quantifier: quantifier, packed: packed)
          i = at + 6
          continue
        }
      }
      i += 1
    }
  }

  /// C tokens, comments and white space dropped.
  static func tokens(of source: String) -> [Token] {
    let bytes = Array(source.utf8)
    var tokens: [Token] = []
    var i = 0
    func isWordByte(_ byte: UInt8) -> Bool {
      (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
        || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }
    while i < bytes.count {
      let byte = bytes[i]
      if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D {
        i += 1
      } else if byte == 0x2F, i + 1 < bytes.count, bytes[i + 1] == 0x2A {  // /* … */
        i += 2
        while i + 1 < bytes.count, !(bytes[i] == 0x2A && bytes[i + 1] == 0x2F) { i += 1 }
        i += 2
      } else if byte == 0x2F, i + 1 < bytes.count, bytes[i + 1] == 0x2F {  // // …
        while i < bytes.count, bytes[i] != 0x0A { i += 1 }
      } else if byte == 0x22 {  // "…"
        var end = i + 1
        while end < bytes.count, bytes[end] != 0x22 {
          end += bytes[end] == 0x5C ? 2 : 1
        }
        tokens.append(
          .string(String(decoding: bytes[(i + 1)..<min(end, bytes.count)], as: UTF8.self)))
        i = end + 1
      } else if isWordByte(byte) {
        var end = i
        while end < bytes.count, isWordByte(bytes[end]) { end += 1 }
        tokens.append(.word(String(decoding: bytes[i..<end], as: UTF8.self)))
        i = end
      } else {
        tokens.append(.punctuation(byte))
        i += 1
      }
    }
    return tokens
  }
}
