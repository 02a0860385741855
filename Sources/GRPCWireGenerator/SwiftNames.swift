/// How proto names become Swift names, in the message layer and the stubs alike.
public enum SwiftNames {
  /// Words Swift reserves; a name that is one of them is written in backticks.
  public static let keywords: Set<String> = [
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
    "init", "inout", "internal", "let", "open", "operator", "private", "precedencegroup",
    "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
    "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for",
    "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as",
    "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "Type",
    "Protocol", "some", "any",
  ]

  /// Nested type names Swift gives a meaning of its own (`Outer.Type` is a metatype): the
  /// message layer appends `Message` or `Enum` to them.
  public static let typeMembers: Set<String> = ["Type", "Protocol", "Self"]

  /// Proto types whose Swift name is not their proto name.
  public static let typeRenames: [String: String] = ["google.protobuf.Any": "AnyMessage"]

  /// Names Swift reads as something else even after a dot: `m.init` is an initializer,
  /// `m.self` the value itself, `M.Type` and `M.Protocol` metatypes.
  static let reservedAfterDot: Set<String> = ["init", "self", "Type", "Protocol"]

  /// `name` as a member after a dot (`m.name`), in backticks where Swift would read it as
  /// something else.
  public static func member(_ name: String) -> String {
    reservedAfterDot.contains(name) ? "`\(name)`" : name
  }

  /// `name`, in backticks when Swift reserves it.
  public static func identifier(_ name: String) -> String {
    keywords.contains(name) ? "`\(name)`" : name
  }

  /// The default namespace of a proto package: its components in UpperCamelCase, joined
  /// (`acme.dispatch.v1` → `AcmeDispatchV1`, `my_co.api` → `MyCoApi`).
  public static func defaultNamespace(ofPackage package: String) -> String {
    package.split(whereSeparator: { $0 == "." || $0 == "_" }).map(upperFirst).joined()
  }

  /// An RPC's method name in Swift: its proto name with the first letter lower-cased
  /// (`GetOrder` → `getOrder`), as the `ProtoMethod` descriptors are named.
  public static func methodName(_ rpc: String) -> String {
    guard let first = rpc.first else { return rpc }
    return first.lowercased() + rpc.dropFirst()
  }

  static func upperFirst(_ word: Substring) -> String {
    guard let first = word.first else { return "" }
    return first.uppercased() + word.dropFirst()
  }

  /// Whether `name` can be written as a Swift identifier (in backticks where reserved).
  static func isIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return name.unicodeScalars.allSatisfy {
      ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
    }
  }

  /// Words that become acronyms in camelCase: `vehicle_id` → `vehicleID`.
  static let acronyms: [String: String] = ["id": "ID", "url": "URL", "uri": "URI"]

  /// `snake_case` → `lowerCamel` (or `UpperCamel`): a word all in one case is lower-cased
  /// after its first letter, a mixed-case word kept; `id`, `url` and `uri` become acronyms
  /// (except as the first word of a lowerCamel name).
  public static func camel(_ snake: String, upperFirst: Bool) -> String {
    let words = snake.split(separator: "_").map(String.init)
    var out = ""
    for (index, word) in words.enumerated() {
      let lower = word.lowercased()
      let oneCase = isUpper(word) || isLower(word)
      if index == 0 && !upperFirst {
        out += oneCase ? lower : word.prefix(1).lowercased() + word.dropFirst()
      } else if let acronym = acronyms[lower] {
        out += acronym
      } else {
        out +=
          word.prefix(1).uppercased()
          + (isUpper(word) ? word.dropFirst().lowercased() : String(word.dropFirst()))
      }
    }
    return out
  }

  /// An enum value's Swift case: its SCREAMING_SNAKE name in lowerCamel, without the enum's
  /// own name as a prefix (`TripStatus.TRIP_STATUS_NEW` → `new`), unless that leaves nothing
  /// or a leading digit.
  public static func enumCaseName(enum enumName: String, value: String) -> String {
    let prefix = snakeUpper(enumName, splittingAfterDigits: true) + "_"
    var stripped = value.hasPrefix(prefix) ? String(value.dropFirst(prefix.count)) : value
    if stripped.isEmpty || stripped.first!.isNumber && stripped.first!.isASCII {
      stripped = value
    }
    return camel(stripped.lowercased(), upperFirst: false)
  }

  /// `FleetProtosC` → `FLEET_PROTOS_C`: `_` before each capital that follows a lower-case
  /// letter (or a digit, when `splittingAfterDigits`), then upper-cased.
  static func snakeUpper(_ name: String, splittingAfterDigits: Bool) -> String {
    var out = ""
    var previous: Character?
    for character in name {
      if let previous, character.isASCII, character.isUppercase,
        previous.isASCII && (previous.isLowercase || splittingAfterDigits && previous.isNumber)
      {
        out += "_"
      }
      out.append(character)
      previous = character
    }
    return out.uppercased()
  }

  /// Python's `str.isupper()`: some cased character, none lower-case.
  static func isUpper(_ word: String) -> Bool {
    word.contains(where: \.isCased) && !word.contains(where: \.isLowercase)
  }

  /// Python's `str.islower()`: some cased character, none upper-case.
  static func isLower(_ word: String) -> Bool {
    word.contains(where: \.isCased) && !word.contains(where: \.isUppercase)
  }
}
