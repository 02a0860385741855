internal import COpenSSL

/// An OpenSSL BIO over another ``ByteTransport``: what the TLS to the target reads and writes
/// through when it runs inside the TLS to an `https://` proxy. Loop-only, like the transports.
///
/// The BIO's data pointer is this object, unretained: the ``TLSTransport`` that owns the SSL
/// object (which owns the BIO) keeps this object as long.
final class TransportBIO {
  let outer: any ByteTransport

  init(_ outer: any ByteTransport) {
    self.outer = outer
  }

  /// A new BIO reading and writing `outer`; nil when OpenSSL cannot make one.
  func makeBIO() -> OpaquePointer? {
    guard let method = Self.method, let bio = BIO_new(method) else { return nil }
    BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
    BIO_set_init(bio, 1)
    return bio
  }

  // nonisolated(unsafe): made once, never changed; OpenSSL reads a BIO_METHOD from any thread.
  nonisolated(unsafe) private static let method: OpaquePointer? = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "fleet-transport")
    else { return nil }
    BIO_meth_set_write(method, transportBIOWrite)
    BIO_meth_set_read(method, transportBIORead)
    BIO_meth_set_ctrl(method, transportBIOControl)
    return method
  }()

  fileprivate static func owner(_ bio: OpaquePointer?) -> TransportBIO {
    Unmanaged<TransportBIO>.fromOpaque(BIO_get_data(bio)!).takeUnretainedValue()
  }

  /// A transport result as a BIO's: the count, or -1 with the retry flag for the direction
  /// the outer transport waits for; 0 for the end of the stream (reads).
  fileprivate static func bioResult(_ result: TransportResult, _ bio: OpaquePointer?) -> Int32 {
    switch result {
    case .bytes(let count):
      return Int32(count)
    case .wouldBlock(let wantWrite):
      fleet_bio_set_retry(bio, wantWrite ? 1 : 0)
      return -1
    case .closed:
      return 0
    case .failed:
      return -1
    }
  }
}

private func transportBIOWrite(
  _ bio: OpaquePointer?, _ data: UnsafePointer<CChar>?, _ length: Int32
) -> Int32 {
  fleet_bio_clear_retry(bio)
  let result = TransportBIO.owner(bio).outer.write(
    UnsafeRawBufferPointer(start: data, count: Int(length)))
  // A write that cannot go on is never an end of stream.
  if case .closed = result { return -1 }
  return TransportBIO.bioResult(result, bio)
}

private func transportBIORead(
  _ bio: OpaquePointer?, _ data: UnsafeMutablePointer<CChar>?, _ length: Int32
) -> Int32 {
  fleet_bio_clear_retry(bio)
  return TransportBIO.bioResult(
    TransportBIO.owner(bio).outer.read(
      into: UnsafeMutableRawBufferPointer(start: data, count: Int(length))), bio)
}

/// Flush is the only control the SSL layer needs of a source/sink BIO: writes go out at once.
private func transportBIOControl(
  _ bio: OpaquePointer?, _ command: Int32, _ number: Int, _ pointer: UnsafeMutableRawPointer?
) -> Int {
  command == BIO_CTRL_FLUSH ? 1 : 0
}
