import ArgumentParser

/// Where the load goes: a server's `HOST:PORT` (plaintext), or the embedded simulator.
struct TargetOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The server, without TLS; leave it out to load the simulator started in this process.",
      valueName: "host:port"))
  var target: String?

  @Option(
    help: ArgumentHelp(
      "The provider of the trips called. On --target the trips are assumed to be those "
        + "`fleet-sim --trips N` makes: give --trips-to-create N.",
      valueName: "id"))
  var provider = "sim-provider"

  /// `--target` split into host and port; nil without a target.
  var hostAndPort: (host: String, port: Int)? {
    guard let target else { return nil }
    return Self.split(target)
  }

  func validate() throws {
    guard let target else { return }
    guard Self.split(target) != nil else {
      throw ValidationError("--target must be HOST:PORT (or [IPv6]:PORT), not \"\(target)\"")
    }
  }

  /// `host:port` or `[v6]:port`, with a port in 1...65535.
  static func split(_ text: String) -> (host: String, port: Int)? {
    guard let colon = text.lastIndex(of: ":"),
      let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port)
    else { return nil }
    var host = String(text[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else { return nil }
    return (host, port)
  }
}
