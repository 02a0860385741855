/// The access-token provider a command-line tool's flags name, as `fleet-follow` and
/// `fleet-share` take them: a fixed token, a command, a URL or a service-account key. At most
/// one should be given (the tools check); with none, the URL provider with an empty URL,
/// whose every fetch fails with a clear error.
public enum AccessTokenFlags {
  /// Throws ``AccessTokenProviderError`` when the service-account key cannot be used.
  public static func provider(
    token: String?, tokenCommand: String?, tokenURL: String?, serviceAccountKey: String?
  ) throws(AccessTokenProviderError) -> any AccessTokenProvider {
    if let token { return FixedAccessTokenProvider(AccessToken(token)) }
    if let tokenCommand { return CommandAccessTokenProvider(command: tokenCommand) }
    if let serviceAccountKey { return try ServiceAccountTokenProvider(keyFile: serviceAccountKey) }
    return HTTPAccessTokenProvider(url: tokenURL ?? "")
  }
}
