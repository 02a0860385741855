import GRPCWire

/// This process's command line as the report shows it: credential values of `-m` metadata
/// replaced by `REDACTED`, and the password of a `--proxy` URL by `***`, so a report can be
/// shared or logged without the token or the password in it.
enum CommandLineRedaction {
  /// Metadata keys whose values are secrets: `authorization` and its proxy twin, cookies, and
  /// any key naming a token, key, secret or password.
  static func isCredential(_ key: String) -> Bool {
    let key = key.lowercased()
    if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(key) { return true }
    return ["token", "secret", "password", "api-key", "apikey", "credential"].contains { key.contains($0) }
  }

  /// `arguments` with every credential value of `-m`/`--metadata` replaced (`-m KEY=V`,
  /// `--metadata KEY=V`, `--metadata=KEY=V`) and the password of `--proxy URL` (or
  /// `--proxy=URL`) hidden.
  static func redacted(_ arguments: [String]) -> [String] {
    var result: [String] = []
    var valueFollows = false
    var proxyFollows = false
    for argument in arguments {
      if proxyFollows {
        result.append(HTTPProxy.redacted(argument))
        proxyFollows = false
      } else if argument == "--proxy" {
        result.append(argument)
        proxyFollows = true
      } else if argument.hasPrefix("--proxy=") {
        result.append("--proxy=" + HTTPProxy.redacted(String(argument.dropFirst("--proxy=".count))))
      } else if valueFollows {
        result.append(redactPair(argument))
        valueFollows = false
      } else if argument == "-m" || argument == "--metadata" {
        result.append(argument)
        valueFollows = true
      } else if argument.hasPrefix("--metadata=") {
        result.append("--metadata=" + redactPair(String(argument.dropFirst("--metadata=".count))))
      } else {
        result.append(argument)
      }
    }
    return result
  }

  private static func redactPair(_ pair: String) -> String {
    guard let equals = pair.firstIndex(of: "="), isCredential(String(pair[..<equals])) else {
      return pair
    }
    return pair[...equals] + "REDACTED"
  }
}
