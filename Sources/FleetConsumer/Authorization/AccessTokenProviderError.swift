/// Why a built-in ``AccessTokenProvider`` could not produce a token.
///
/// Messages never contain the token or the provider's standard output, which may hold one.
public struct AccessTokenProviderError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What went wrong, for a person.
  public var message: String

  /// An error saying `message`.
  public init(_ message: String) {
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
