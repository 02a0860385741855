/// How proto names become Swift names: the rules `CodeGen/swiftgen.py` follows for the
/// message layer, so that stubs name the types it declares.
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
}
