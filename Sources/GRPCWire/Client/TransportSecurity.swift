/// How a channel protects its connections.
public enum TransportSecurity: Sendable {
  /// Plain TCP. Bearer tokens are only sent to loopback addresses unless
  /// ``ChannelOptions/allowInsecureCredentials`` is set.
  case plaintext
  /// TLS 1.2 or later with ALPN `h2`, the server's certificate chain and host name verified.
  case tls(TLSConfiguration)
}

/// TLS settings of a channel.
public struct TLSConfiguration: Sendable {
  /// Where trusted CA certificates come from.
  public enum TrustRoots: Sendable {
    /// The system's trust store (Debian: /etc/ssl/certs, from ca-certificates).
    case system
    /// The PEM certificates in this file, and no others.
    case pemFile(String)
  }

  public var trustRoots: TrustRoots
  /// The name the server's certificate must carry, and the SNI sent, when it is not the
  /// channel's host (like the interop flag `--server_host_override`).
  public var serverHostnameOverride: String?
  /// A client certificate chain (PEM file) for mutual TLS, with its private key.
  public var clientCertificateChainFile: String?
  public var clientPrivateKeyFile: String?

  public init(
    trustRoots: TrustRoots = .system, serverHostnameOverride: String? = nil,
    clientCertificateChainFile: String? = nil, clientPrivateKeyFile: String? = nil
  ) {
    self.trustRoots = trustRoots
    self.serverHostnameOverride = serverHostnameOverride
    self.clientCertificateChainFile = clientCertificateChainFile
    self.clientPrivateKeyFile = clientPrivateKeyFile
  }
}
