/// The Swift names `protoc-gen-swift` gives messages, for stubs over swift-protobuf's
/// messages (`--messages swift-protobuf`): swift-protobuf 1.39's `NamingUtils.typePrefix` and
/// `SwiftProtobufNamer.relativeName(message:)`, with no module mappings (the stubs are
/// compiled beside the messages; the well-known types are SwiftProtobuf's own, whose names
/// follow the same rule).
///
/// - A top-level message is its file's prefix plus its name: the `swift_prefix` option when
///   the file sets it (even to ""), else the package with each `.` as `_` and the letter after
///   a `.` or `_` upper-cased, plus `_` (`acme.dispatch_api.v1` → `Acme_DispatchApi_V1_`).
/// - A nested message is its parent's Swift name, `.`, and its own name.
/// - A name Swift or swift-protobuf reserves gets `Message` appended (`Type` →
///   `TypeMessage`), and so does one already ending in `Message` whose stem would
///   (`TypeMessage` → `TypeMessageMessage`), so the two cannot meet.
enum SwiftProtobufNames {
  /// `package` as protoc-gen-swift prefixes its types, or `swiftPrefix` when the file sets it.
  static func typePrefix(package: String, swiftPrefix: String?) -> String {
    if let swiftPrefix { return swiftPrefix }
    guard !package.isEmpty else { return "" }
    var prefix = ""
    var makeUpper = true
    for character in package {
      if character == "_" {
        makeUpper = true
      } else if character == "." {
        makeUpper = true
        prefix.append("_")
      } else {
        // protoc's identifiers are ASCII; a leading digit cannot start a Swift name.
        if prefix.isEmpty && character.isASCII && character.isNumber { prefix.append("_") }
        prefix.append(makeUpper ? Character(character.uppercased()) : character)
        makeUpper = false
      }
    }
    return prefix + "_"
  }

  /// `name` as protoc-gen-swift writes a message's own name (after the prefix, for a
  /// top-level one).
  static func messageName(_ name: String) -> String {
    let disambiguator = "Message"
    if reservedTypeNames.contains(name) || (!name.isEmpty && name.allSatisfy { $0 == "_" }) {
      return name + disambiguator
    }
    if name.hasSuffix(disambiguator) {
      return messageName(String(name.dropLast(disambiguator.count))) + disambiguator
    }
    return name
  }

  /// swift-protobuf's `reservedTypeNames` (NamingUtils.swift), which includes its module's
  /// name (its only forbidden type name without module mappings).
  static let reservedTypeNames: Set<String> = [
    "SwiftProtobuf", "Extensions", "protoMessageName", "decodeMessage", "traverse",
    "isInitialized", "unknownFields", "debugDescription", "description", "dynamicType",
    "hashValue", "Type", "Protocol", "Swift", "Equatable", "Hashable", "Sendable",
    // swiftKeywordsUsedInDeclarations
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
    "init", "inout", "internal", "let", "open", "operator", "private", "protocol", "public",
    "static", "struct", "subscript", "typealias", "var",
    // swiftKeywordsUsedInStatements
    "break", "case", "continue", "default", "defer", "do", "else", "fallthrough", "for",
    "guard", "if", "in", "repeat", "return", "switch", "where", "while",
    // swiftKeywordsUsedInExpressionsAndTypes
    "as", "Any", "catch", "false", "is", "nil", "rethrows", "super", "self", "Self", "throw",
    "throws", "true", "try",
    // swiftCommonTypes
    "Bool", "Data", "Double", "Float", "Int", "Int32", "Int64", "String", "UInt", "UInt32",
    "UInt64",
    // swiftSpecialVariables
    "__COLUMN__", "__FILE__", "__FUNCTION__", "__LINE__",
  ]
}
