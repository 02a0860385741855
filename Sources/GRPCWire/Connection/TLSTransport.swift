internal import COpenSSL
internal import Glibc

/// TLS 1.2+ over a non-blocking socket, through OpenSSL: ALPN `h2`, SNI, chain and host-name
/// verification; or over another transport (TLS to the target inside the TLS to an `https://`
/// proxy). Loop-only.
final class TLSTransport: ByteTransport {
  /// What the TLS records travel over.
  private enum Underlying {
    case socket(Int32)
    /// Another transport, reached through a BIO of ours (``TransportBIO``).
    case transport(TransportBIO)
  }

  private let underlying: Underlying
  private let ssl: OpaquePointer
  /// `host:port`, for messages.
  private let target: String
  private let isServer: Bool
  /// Says whether the handshake must agree on ALPN `h2` (``TLSContext/negotiatesH2``).
  private let context: TLSContext

  /// An SSL object of `context` over `underlying`, for either role; `preposition` words the
  /// failure ("with" a client, "to" a server).
  private init(
    _ underlying: Underlying, context: TLSContext, target: String, isServer: Bool,
    preposition: String
  ) throws(RPCError) {
    func cannotStart() -> RPCError {
      RPCError(
        code: .unavailable,
        message: "cannot start TLS \(preposition) \(target): \(TLSContext.lastError())")
    }
    guard let ssl = SSL_new(context.context) else { throw cannotStart() }
    self.underlying = underlying
    self.ssl = ssl
    self.target = target
    self.isServer = isServer
    self.context = context
    switch underlying {
    case .socket(let fd):
      guard SSL_set_fd(ssl, fd) == 1 else { throw cannotStart() }
    case .transport(let bio):
      guard let made = bio.makeBIO() else { throw cannotStart() }
      // The SSL object owns the BIO from here (one reference serves both directions).
      SSL_set_bio(ssl, made, made)
    }
  }

  /// TLS for an accepted connection; the handshake starts with the first `handshake()`.
  convenience init(acceptedFD fd: Int32, context: TLSContext, peer: String) throws(RPCError) {
    try self.init(.socket(fd), context: context, target: peer, isServer: true, preposition: "with")
  }

  /// Prepares TLS on connected socket `fd`; the handshake starts with the first `handshake()`.
  /// With a proxy's context (no ALPN offered), the handshake asks for no `h2`.
  convenience init(
    fd: Int32, context: TLSContext, verifyName: String, target: String
  ) throws(RPCError) {
    try self.init(.socket(fd), context: context, target: target, isServer: false, preposition: "to")
    try verify(verifyName)
  }

  /// Prepares TLS to the target through `outer`, the TLS to an `https://` proxy whose tunnel is
  /// open: TLS inside TLS, the target's SNI and verification end to end.
  convenience init(
    over outer: TLSTransport, context: TLSContext, verifyName: String, target: String
  ) throws(RPCError) {
    try self.init(
      .transport(TransportBIO(outer)), context: context, target: target, isServer: false,
      preposition: "to")
    try verify(verifyName)
  }

  /// Sends `name` as SNI (a host name) and requires the certificate to carry it.
  private func verify(_ name: String) throws(RPCError) {
    let isAddress = SocketAddress(numericHost: name, port: 0) != nil
    // Unchecked, a name that cannot be set would leave the certificate's name unverified.
    let set =
      isAddress
      // RFC 6066: SNI carries host names only. The certificate must name the IP instead.
      ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1
      : fleet_ssl_set_sni(ssl, name) == 1 && SSL_set1_host(ssl, name) == 1
    guard set else {
      throw RPCError(
        code: .unavailable,
        message: "cannot verify \(target) as '\(name)': \(TLSContext.lastError())")
    }
  }

  deinit {
    SSL_free(ssl)
  }

  func handshake() -> TransportProgress {
    ERR_clear_error()
    let result = isServer ? SSL_accept(ssl) : SSL_connect(ssl)
    if result == 1 {
      guard context.negotiatesH2 else { return .done }
      var selected: UnsafePointer<UInt8>? = nil
      var length: UInt32 = 0
      SSL_get0_alpn_selected(ssl, &selected, &length)
      let protocolName = selected.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
      guard protocolName == "h2" else {
        return .failed(
          RPCError(
            code: .unavailable,
            message: "the server at \(target) did not agree to HTTP/2 (ALPN h2) during the TLS "
              + "handshake" + (protocolName.map { "; it chose '\($0)'" } ?? "; it chose no protocol")))
      }
      return .done
    }
    switch SSL_get_error(ssl, result) {
    case SSL_ERROR_WANT_READ: return .wantRead
    case SSL_ERROR_WANT_WRITE: return .wantWrite
    default: return .failed(RPCError(code: .unavailable, message: "TLS handshake with \(target) failed: \(handshakeFailure(result))"))
    }
  }

  /// Why the handshake failed: the certificate verification result when that is what failed,
  /// else OpenSSL's error queue, else the socket's.
  private func handshakeFailure(_ result: Int32) -> String {
    let verify = SSL_get_verify_result(ssl)
    if verify != X509_V_OK {
      return "certificate verify failed: " + String(cString: X509_verify_cert_error_string(verify))
    }
    let queued = TLSContext.lastError()
    if !queued.isEmpty { return queued }
    if SSL_get_error(ssl, result) == SSL_ERROR_SYSCALL {
      return errno == 0 ? "the server closed the connection" : errnoDescription(errno)
    }
    return "error \(SSL_get_error(ssl, result))"
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
    ERR_clear_error()
    let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
    if count > 0 { return .bytes(Int(count)) }
    return failure(count)
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
    guard bytes.count > 0 else { return .bytes(0) }
    ERR_clear_error()
    let count = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
    if count > 0 { return .bytes(Int(count)) }
    return failure(count)
  }

  private func failure(_ result: Int32) -> TransportResult {
    let savedErrno = errno
    switch SSL_get_error(ssl, result) {
    case SSL_ERROR_WANT_READ: return .wouldBlock(wantWrite: false)
    case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantWrite: true)
    case SSL_ERROR_ZERO_RETURN: return .closed
    case SSL_ERROR_SYSCALL:
      let queued = TLSContext.lastError()
      if !queued.isEmpty { return .failed(queued) }
      return savedErrno == 0 ? .closed : .failed(errnoDescription(savedErrno))
    default:
      return .failed(TLSContext.lastError())
    }
  }

  var hasBufferedInput: Bool {
    if SSL_pending(ssl) > 0 { return true }
    // Inside the TLS to a proxy, that TLS may hold the rest of a record already off the socket.
    if case .transport(let bio) = underlying { return bio.outer.hasBufferedInput }
    return false
  }

  func close() {
    ERR_clear_error()
    _ = SSL_shutdown(ssl)
    switch underlying {
    case .socket(let fd): Glibc.close(fd)
    case .transport(let bio): bio.outer.close()
    }
  }
}

/// An OpenSSL client context for one channel's TLS configuration: trust roots, TLS 1.2+,
/// peer verification, ALPN h2, and the client certificate for mTLS.
final class TLSContext: @unchecked Sendable {
  // @unchecked Sendable: an SSL_CTX is safe to share once configured; it is never changed.
  let context: OpaquePointer
  /// Whether handshakes under this context negotiate ALPN `h2` (a client offers it, a server
  /// selects it), so a handshake that ends without it fails; false for a proxy's context.
  let negotiatesH2: Bool

  /// `offersH2: false` for the TLS to an `https://` proxy, which speaks HTTP/1.1 (CONNECT).
  init(_ configuration: TLSConfiguration, offersH2: Bool = true) throws(RPCError) {
    ERR_clear_error()
    guard let context = SSL_CTX_new(TLS_client_method()) else {
      throw RPCError(code: .unavailable, message: "cannot create a TLS context: \(Self.lastError())")
    }
    self.context = context
    negotiatesH2 = offersH2
    guard fleet_ssl_ctx_set_min_tls12(context) == 1 else {
      throw RPCError(code: .unavailable, message: "cannot require TLS 1.2: \(Self.lastError())")
    }
    fleet_ssl_ctx_set_write_modes(context)
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
    switch configuration.trustRoots {
    case .system:
      guard SSL_CTX_set_default_verify_paths(context) == 1 else {
        throw RPCError(code: .unavailable, message: "cannot load the system's trusted CAs: \(Self.lastError())")
      }
    case .pemFile(let path):
      guard SSL_CTX_load_verify_locations(context, path, nil) == 1 else {
        throw RPCError(code: .unavailable, message: "cannot load trusted CAs from \(path): \(Self.lastError())")
      }
    }
    let h2: [UInt8] = [2, 0x68, 0x32]
    // SSL_CTX_set_alpn_protos returns 0 on success, unlike most of OpenSSL.
    guard !offersH2 || SSL_CTX_set_alpn_protos(context, h2, UInt32(h2.count)) == 0 else {
      throw RPCError(code: .unavailable, message: "cannot offer ALPN h2: \(Self.lastError())")
    }
    if let chain = configuration.clientCertificateChainFile {
      guard let key = configuration.clientPrivateKeyFile else {
        throw RPCError(code: .unavailable, message: "a client certificate needs its private key file")
      }
      guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else {
        throw RPCError(code: .unavailable, message: "cannot load the client certificate \(chain): \(Self.lastError())")
      }
      guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1,
        SSL_CTX_check_private_key(context) == 1
      else {
        throw RPCError(code: .unavailable, message: "cannot use the client key \(key): \(Self.lastError())")
      }
    }
  }

  /// A server context: this certificate chain and key, TLS 1.2+, ALPN selecting h2; with
  /// `clientCAFile`, client certificates verified against its CAs (required, or only checked
  /// when a client sends one).
  init(
    serverCertificateChainFile chain: String, privateKeyFile key: String,
    clientCAFile: String? = nil, requireClientCertificate: Bool = true
  ) throws(RPCError) {
    ERR_clear_error()
    guard let context = SSL_CTX_new(TLS_server_method()) else {
      throw RPCError(code: .unavailable, message: "cannot create a TLS context: \(Self.lastError())")
    }
    self.context = context
    negotiatesH2 = true
    guard fleet_ssl_ctx_set_min_tls12(context) == 1 else {
      throw RPCError(code: .unavailable, message: "cannot require TLS 1.2: \(Self.lastError())")
    }
    if let clientCAFile {
      guard SSL_CTX_load_verify_locations(context, clientCAFile, nil) == 1,
        let names = SSL_load_client_CA_file(clientCAFile)
      else {
        throw RPCError(
          code: .unavailable, message: "cannot load the client CA file \(clientCAFile): \(Self.lastError())")
      }
      // The CAs offered to clients, so that one with several certificates picks the right one.
      SSL_CTX_set_client_CA_list(context, names)
      let mode = SSL_VERIFY_PEER | (requireClientCertificate ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0)
      SSL_CTX_set_verify(context, mode, nil)
    }
    fleet_ssl_ctx_set_write_modes(context)
    fleet_ssl_ctx_select_h2(context)
    guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else {
      throw RPCError(code: .unavailable, message: "cannot load the certificate \(chain): \(Self.lastError())")
    }
    guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1,
      SSL_CTX_check_private_key(context) == 1
    else {
      throw RPCError(code: .unavailable, message: "cannot use the private key \(key): \(Self.lastError())")
    }
  }

  deinit {
    SSL_CTX_free(context)
  }

  /// OpenSSL's queued errors as text, oldest first; empties the queue.
  static func lastError() -> String {
    var reasons: [String] = []
    while case let code = ERR_get_error(), code != 0 {
      if let reason = ERR_reason_error_string(code) {
        reasons.append(String(cString: reason))
      } else {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
      }
    }
    return reasons.joined(separator: "; ")
  }
}
