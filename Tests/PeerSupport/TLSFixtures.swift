import Foundation

/// The test certificates of `Tests/Python/tls_fixtures.py` (openssl CLI), made once per test
/// process into a temporary directory that is removed when the process exits.
///
/// ECDSA P-256 keys, PEM files. The test CA signs `server.pem` (SAN `DNS:foo.test.google.fr,
/// DNS:localhost, IP:127.0.0.1`), `wrong-name.pem` (only `DNS:wrong.example`), `expired.pem`
/// (valid on 2020-01-01 only) and `client.pem` (clientAuth, CN `fleet-test-client`);
/// `untrusted.pem` has the good names but another CA, which nobody trusts. The servers of
/// `Tests/Python` take them as `--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]`
/// (``serverArguments(_:requireClientCertificate:)``).
///
/// `shared` throws (and the calling test fails, never skips) when there is no Python or
/// openssl, or openssl fails; the error carries the script's output.
public struct TLSFixtures: Sendable {
  /// A certificate and key a server can present.
  public enum Identity: String, Sendable, CaseIterable {
    /// Signed by the test CA, for ``TLSFixtures/serverName``, `localhost` and `127.0.0.1`.
    case server
    /// Signed by the test CA, for `wrong.example` only.
    case wrongName = "wrong-name"
    /// Signed by the test CA with the names of `server`, but expired since 2020-01-02.
    case expired
    /// The names of `server`, signed by a CA that is not the test CA; the server sends no
    /// chain, so OpenSSL reports "unable to get local issuer certificate".
    case untrusted
  }

  /// The name the good server certificates carry (gRPC's interop test name), for
  /// `serverHostnameOverride` and `--server_host_override`.
  public static let serverName = "foo.test.google.fr"
  /// The common name of ``clientCertificate``, as the interop server reports it.
  public static let clientName = "fleet-test-client"

  /// The directory holding every file.
  public let directory: URL

  /// The test CA's certificate (PEM): the one trust root of the tests.
  public var caCertificate: String { path("ca.pem") }
  /// The certificate of a CA that signed ``Identity/untrusted`` and nothing the tests trust.
  public var otherCACertificate: String { path("other-ca.pem") }
  /// A client certificate signed by the test CA, for mutual TLS, and its key.
  public var clientCertificate: String { path("client.pem") }
  public var clientKey: String { path("client.key") }

  /// The certificate (PEM) and the private key (PKCS#8 PEM) of `identity`.
  public func certificate(_ identity: Identity) -> String { path("\(identity.rawValue).pem") }
  public func key(_ identity: Identity) -> String { path("\(identity.rawValue).key") }

  /// `--tls-cert … --tls-key …` for a server presenting `identity`, plus `--tls-client-ca`
  /// (the test CA) when it must require a client certificate.
  public func serverArguments(_ identity: Identity, requireClientCertificate: Bool = false)
    -> [String]
  {
    var arguments = ["--tls-cert", certificate(identity), "--tls-key", key(identity)]
    if requireClientCertificate {
      arguments += ["--tls-client-ca", caCertificate]
    }
    return arguments
  }

  private func path(_ name: String) -> String {
    directory.appendingPathComponent(name).path
  }

  /// The fixtures, generated on first use and shared by every test of the process.
  public static var shared: TLSFixtures {
    get async throws { try await generated.value }
  }

  private static let generated = Task { try await generate(into: fixturesDirectory) }

  private static func generate(into directory: URL) async throws -> TLSFixtures {
    let output = try await PythonPeer.run(
      "tls_fixtures.py", ["--out", directory.path], timeout: .seconds(60))
    guard output.status == 0 else {
      throw TLSFixturesError(directory: directory.path, transcript: output.transcript)
    }
    atexit { try? FileManager.default.removeItem(at: fixturesDirectory) }
    let fixtures = TLSFixtures(directory: directory)
    let files =
      [fixtures.caCertificate, fixtures.clientCertificate, fixtures.clientKey]
      + Identity.allCases.flatMap { [fixtures.certificate($0), fixtures.key($0)] }
    for file in files where !FileManager.default.fileExists(atPath: file) {
      throw TLSFixturesError(
        directory: directory.path, transcript: "\(file) is missing\n\(output.transcript)")
    }
    return fixtures
  }
}

/// One directory per test process: parallel `swift test` runs never share certificates.
private let fixturesDirectory = FileManager.default.temporaryDirectory
  .appendingPathComponent("fleet-tls-fixtures-\(getpid())-\(UUID().uuidString.prefix(8))")

/// `tls_fixtures.py` could not make the certificates.
public struct TLSFixturesError: Error, CustomStringConvertible {
  public var directory: String
  public var transcript: String

  public var description: String {
    "could not generate the TLS test certificates in \(directory) with Tests/Python/"
      + "tls_fixtures.py (it needs the openssl CLI):\n\(transcript)"
  }
}
