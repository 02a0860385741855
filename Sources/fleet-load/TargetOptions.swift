import ArgumentParser
import Foundation
import GRPCWire

/// Where the load goes: a server's `HOST:PORT` (TLS unless `--plaintext`), or the embedded
/// simulator (plaintext loopback). The TLS flags mirror `fleet-follow`'s `--plaintext`, with
/// ghz's names for the rest.
struct TargetOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The server (TLS unless --plaintext); leave it out to load the simulator started in "
        + "this process.",
      valueName: "host:port"))
  var target: String?

  @Flag(
    help: ArgumentHelp(
      "Connect to --target without TLS; the authorization metadata then travels unencrypted."))
  var plaintext = false

  @Option(
    help: ArgumentHelp(
      "Trust only the CA certificates in this PEM file (default: the system's).",
      valueName: "file"))
  var cacert: String?

  @Option(help: ArgumentHelp("A client certificate chain (PEM) for mutual TLS.", valueName: "file"))
  var cert: String?

  @Option(help: ArgumentHelp("The private key (PEM) of --cert.", valueName: "file"))
  var key: String?

  @Option(
    name: .customLong("server-name"),
    help: ArgumentHelp(
      "The name the server's certificate must carry, and the SNI and :authority sent, when it "
        + "is not the --target host.",
      valueName: "name"))
  var serverName: String?

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

  /// Whether the connection uses TLS: `--target` without `--plaintext`.
  var usesTLS: Bool { target != nil && !plaintext }

  /// The transport for `--target` (plaintext for the embedded simulator).
  var transportSecurity: TransportSecurity {
    guard usesTLS else { return .plaintext }
    return .tls(
      TLSConfiguration(
        trustRoots: cacert.map { .pemFile($0) } ?? .system, serverHostnameOverride: serverName,
        clientCertificateChainFile: cert, clientPrivateKeyFile: key))
  }

  func validate() throws {
    let tlsFlags = [
      ("--cacert", cacert), ("--cert", cert), ("--key", key), ("--server-name", serverName),
    ].filter { $0.1 != nil }.map(\.0)
    guard let target else {
      guard !plaintext, tlsFlags.isEmpty else {
        throw ValidationError(
          "--plaintext, --cacert, --cert, --key and --server-name need --target: the embedded "
            + "simulator is always plaintext loopback")
      }
      return
    }
    guard Self.split(target) != nil else {
      throw ValidationError("--target must be HOST:PORT (or [IPv6]:PORT), not \"\(target)\"")
    }
    if plaintext, !tlsFlags.isEmpty {
      throw ValidationError(
        "\(tlsFlags.joined(separator: ", ")) cannot go with --plaintext: they configure TLS")
    }
    guard (cert == nil) == (key == nil) else {
      throw ValidationError("--cert and --key go together")
    }
    for (flag, path) in [("--cacert", cacert), ("--cert", cert), ("--key", key)] {
      if let path, !FileManager.default.isReadableFile(atPath: path) {
        throw ValidationError("\(flag) \(path): no such readable file")
      }
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
