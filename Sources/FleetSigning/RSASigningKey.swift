internal import COpenSSL

/// An RSA private key, read by OpenSSL from PEM, that signs with RS256: RSASSA-PKCS1-v1_5
/// with SHA-256 (RFC 7518 section 3.3), as JWTs for Google APIs are signed.
///
/// Its own module so that FleetConsumer, which mints tokens with it, never sees a C type: no
/// OpenSSL type leaves this file. Every call's result is checked and everything OpenSSL
/// allocates is freed before the call returns, except the key itself, which `deinit` frees.
package final class RSASigningKey: @unchecked Sendable {
  // @unchecked: `key` is never modified after `init`, and OpenSSL allows one EVP_PKEY to be
  // used by many threads at once as long as none changes it (openssl-threads(7)); each
  // signature has its own EVP_MD_CTX.
  private let key: OpaquePointer

  /// Reads the private key from `pem` (PKCS#8 `PRIVATE KEY`, as Google's keys are, or PKCS#1
  /// `RSA PRIVATE KEY`). Throws when it is not PEM, is encrypted, or is not an RSA private key;
  /// the error never quotes the key.
  package init(pem: String) throws(Failure) {
    ERR_clear_error()
    let bytes = Array(pem.utf8)
    let read: OpaquePointer? = bytes.withUnsafeBytes { buffer in
      // The memory BIO reads `bytes` in place, and is freed before they go.
      guard let length = Int32(exactly: buffer.count),
        let bio = BIO_new_mem_buf(buffer.baseAddress, length)
      else { return nil }
      defer { BIO_free(bio) }
      // No passphrase: an encrypted key fails here rather than prompting on a terminal, as
      // OpenSSL's default callback would.
      return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
    }
    guard let read else {
      throw Failure(
        message: "the private_key is not a PEM private key OpenSSL can read "
          + "(\(Self.openSSLErrors()))")
    }
    guard EVP_PKEY_is_a(read, "RSA") == 1 else {
      EVP_PKEY_free(read)
      throw Failure(
        message:
          "the private_key is not an RSA key; RS256 needs one (Google's service-account keys are)")
    }
    key = read
  }

  deinit {
    EVP_PKEY_free(key)
  }

  /// The RS256 signature of `message`. Throws only when OpenSSL fails (out of memory, a
  /// broken library), with OpenSSL's reasons.
  package func signRS256(_ message: [UInt8]) throws(Failure) -> [UInt8] {
    ERR_clear_error()
    guard let context = EVP_MD_CTX_new() else {
      throw Self.failure("EVP_MD_CTX_new")
    }
    defer { EVP_MD_CTX_free(context) }
    // The EVP_PKEY_CTX DigestSignInit makes belongs to `context` and goes with it.
    guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
      throw Self.failure("EVP_DigestSignInit")
    }
    var length = 0
    guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else {
      throw Self.failure("EVP_DigestSign (length)")
    }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
      throw Self.failure("EVP_DigestSign")
    }
    return Array(signature.prefix(length))
  }

  private static func failure(_ call: String) -> Failure {
    Failure(message: "OpenSSL could not sign the token: \(call) failed (\(openSSLErrors()))")
  }

  /// Why a key could not be read or a signature made; never quotes the key.
  package struct Failure: Error, Sendable {
    package let message: String
  }

  /// OpenSSL's queued errors as text, oldest first; empties the queue.
  private static func openSSLErrors() -> String {
    var reasons: [String] = []
    while case let code = ERR_get_error(), code != 0 {
      if let reason = ERR_reason_error_string(code) {
        reasons.append(String(cString: reason))
      } else {
        reasons.append("error \(code)")
      }
    }
    return reasons.isEmpty ? "no reason given" : reasons.joined(separator: "; ")
  }
}
