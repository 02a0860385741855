import Foundation
import PeerSupport
import Testing

/// A Google service-account key made fresh for this test process by
/// `Tests/Python/consumer_jwt.py generate` (PyPI `cryptography`, not our OpenSSL code), and
/// that script's independent check of the tokens minted from it.
///
/// Made once per process into a temporary directory removed when the process exits; a
/// missing Python or `cryptography` fails the calling test, never skips it.
struct ServiceAccountFixture: Sendable {
  /// The key file: `type`, `private_key_id`, `private_key` (PKCS#8 PEM), `client_email`, ….
  let keyFile: String
  /// Its public half (PEM), for the fake Fleet Engine's `--verify-jwt-public-key`.
  let publicKey: String
  /// A P-256 private key (PEM): a key that is not RSA.
  let ecPrivateKey: String
  /// The RSA key, encrypted with a passphrase (PEM).
  let encryptedPrivateKey: String
  let clientEmail: String
  let privateKeyID: String
  let directory: URL

  /// The fixture of this process.
  static var shared: ServiceAccountFixture {
    get async throws { try await generated.value }
  }

  private static let generated = Task { () throws -> ServiceAccountFixture in
    let directory = fixtureDirectory
    let output = try await PythonPeer.run(
      "consumer_jwt.py", ["generate", "--out", directory.path], timeout: .seconds(60))
    guard output.status == 0,
      let made = try? JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: String],
      let keyFile = made["keyFile"], let publicKey = made["publicKey"],
      let email = made["clientEmail"], let keyID = made["privateKeyID"]
    else { throw FixtureError(transcript: output.transcript) }
    atexit { try? FileManager.default.removeItem(at: fixtureDirectory) }
    return ServiceAccountFixture(
      keyFile: keyFile, publicKey: publicKey,
      ecPrivateKey: directory.appendingPathComponent("ec-private.pem").path,
      encryptedPrivateKey: directory.appendingPathComponent("encrypted-private.pem").path,
      clientEmail: email, privateKeyID: keyID, directory: directory)
  }

  /// The key file's JSON object, to derive broken variants from.
  func keyObject() throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: keyFile))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  /// `data` written to a new file in the fixture's directory; its path.
  func write(_ data: Data, named name: String) throws -> String {
    let url = directory.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)")
    try data.write(to: url)
    return url.path
  }

  /// What `consumer_jwt.py verify` said of each (trip ID, token): one JSON object per token,
  /// in order, and its exit status (0: every token passed).
  func verify(_ tokens: [(tripID: String, token: String)]) async throws -> Verdicts {
    let output = try await PythonPeer.run(
      "consumer_jwt.py",
      ["verify", "--public-key", publicKey, "--email", clientEmail, "--kid", privateKeyID]
        + tokens.map { "\($0.tripID)=\($0.token)" },
      timeout: .seconds(60))
    let lines = output.stdoutText.split(separator: "\n")
    let verdicts = try lines.map { line in
      try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
    return Verdicts(status: output.status, verdicts: verdicts, transcript: output.transcript)
  }

  struct Verdicts: @unchecked Sendable {
    // @unchecked: JSON values, only read.
    var status: Int32
    var verdicts: [[String: Any]]
    var transcript: String
  }

  struct FixtureError: Error, CustomStringConvertible {
    var transcript: String
    var description: String {
      "Tests/Python/consumer_jwt.py could not make a service-account key:\n\(transcript)"
    }
  }
}

/// One directory per test process (removed at exit): parallel runs never share a key.
private let fixtureDirectory = FileManager.default.temporaryDirectory
  .appendingPathComponent("fleet-service-account-\(getpid())-\(UUID().uuidString.prefix(8))")
