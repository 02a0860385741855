internal import COpenSSL

/// HMAC-SHA256 and AES-256-CTR from OpenSSL, for share links whose content is hidden and
/// signed: the link server seals a trip name and expiry so that a token shows nothing and a
/// changed one fails. No OpenSSL type leaves this file; every result is checked.
package enum LinkSealing {
  /// Why OpenSSL could not do it (out of memory, a broken library).
  package struct Failure: Error, Sendable {
    package let message: String
  }

  /// HMAC-SHA256 of `message` under `key`.
  package static func hmacSHA256(key: [UInt8], _ message: [UInt8]) throws(Failure) -> [UInt8] {
    var code = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let done = key.withUnsafeBytes { keyBytes in
      message.withUnsafeBytes { messageBytes in
        HMAC(
          EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count),
          messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
          &code, &length)
      }
    }
    guard done != nil, length == 32 else { throw Failure(message: "HMAC-SHA256 failed") }
    return code
  }

  /// Whether `a` and `b` are equal, in time that does not depend on where they differ.
  package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return CRYPTO_memcmp(a, b, a.count) == 0
  }

  /// `count` bytes from OpenSSL's CSPRNG.
  package static func randomBytes(_ count: Int) throws(Failure) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    guard RAND_bytes(&bytes, Int32(count)) == 1 else {
      throw Failure(message: "RAND_bytes failed")
    }
    return bytes
  }

  /// `input` XORed with AES-256-CTR's key stream for `key` (32 bytes) and `iv` (16 bytes):
  /// encrypts and decrypts alike. Confidentiality only: pair it with a MAC.
  package static func aes256CTR(key: [UInt8], iv: [UInt8], _ input: [UInt8]) throws(Failure)
    -> [UInt8]
  {
    guard key.count == 32, iv.count == 16 else {
      throw Failure(message: "AES-256-CTR needs a 32-byte key and a 16-byte IV")
    }
    guard let context = EVP_CIPHER_CTX_new() else { throw Failure(message: "EVP_CIPHER_CTX_new failed") }
    defer { EVP_CIPHER_CTX_free(context) }
    guard EVP_EncryptInit_ex(context, EVP_aes_256_ctr(), nil, key, iv) == 1 else {
      throw Failure(message: "EVP_EncryptInit_ex failed")
    }
    var output = [UInt8](repeating: 0, count: input.count + 16)
    var written: Int32 = 0
    guard
      input.isEmpty
        || EVP_EncryptUpdate(context, &output, &written, input, Int32(input.count)) == 1
    else { throw Failure(message: "EVP_EncryptUpdate failed") }
    var final: Int32 = 0
    let finished = output.withUnsafeMutableBufferPointer { buffer in
      EVP_EncryptFinal_ex(context, buffer.baseAddress! + Int(written), &final)
    }
    guard finished == 1 else { throw Failure(message: "EVP_EncryptFinal_ex failed") }
    return Array(output.prefix(Int(written + final)))
  }
}
