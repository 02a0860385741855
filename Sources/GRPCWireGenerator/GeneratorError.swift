/// Why the generator cannot write code for its input: the file, the element and the reason,
/// so that the author of the .proto can act on it.
public struct GeneratorError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The .proto file as protoc names it (`acme/dispatch/v1/dispatch.proto`), or empty when the
  /// problem is not in one file (an unreadable descriptor set, a bad flag).
  public var file: String
  /// What in the file: `service Dispatch`, `rpc Dispatch.Watch`, `message Order`.
  public var element: String
  public var reason: String

  public init(file: String, element: String, reason: String) {
    self.file = file
    self.element = element
    self.reason = reason
  }

  public var description: String {
    [file, element].filter { !$0.isEmpty }.joined(separator: ": ")
      + (file.isEmpty && element.isEmpty ? "" : ": ") + reason
  }
}
