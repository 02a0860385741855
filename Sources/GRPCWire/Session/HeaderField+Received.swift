internal import Glibc

extension HeaderField {
  /// A header field from the bytes nghttp2 hands a header callback (valid only during it).
  ///
  /// The names and values every gRPC call carries (`:status`, `content-type`,
  /// `application/grpc`, `grpc-status`, `0`, …) come back as shared strings, byte for byte the
  /// same, so a call's headers cost no String validation or allocation for them: in a
  /// profile of one call at a time that was 5% of the client's CPU.
  init(
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int
  ) {
    self.init(
      name: Self.text(name, nameLength), value: Self.text(value, valueLength))
  }

  private static func text(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> String {
    let buffer = UnsafeBufferPointer(start: bytes, count: count)
    if count < commonByLength.count, let bytes {
      for candidate in commonByLength[count] {
        let same = candidate.utf8.withContiguousStorageIfAvailable {
          memcmp($0.baseAddress!, bytes, count) == 0
        }
        if same == true { return candidate }
      }
    }
    return String(decoding: buffer, as: UTF8.self)
  }

  /// Header names and values of gRPC requests and responses, indexed by their UTF-8 length.
  private static let commonByLength: [[String]] = {
    let common = [
      ":status", ":method", ":scheme", ":path", ":authority", "content-type", "te",
      "user-agent", "grpc-accept-encoding", "grpc-encoding", "grpc-status", "grpc-message",
      "grpc-timeout", "authorization", "grpc-status-details-bin", "accept-encoding",
      "200", "POST", "http", "https", "application/grpc", "trailers", "identity,gzip",
      "identity,deflate,gzip", "gzip", "identity", "0",
    ]
    var table = [[String]](repeating: [], count: 1 + common.map(\.utf8.count).max()!)
    for text in common { table[text.utf8.count].append(text) }
    return table
  }()
}

extension [HeaderField] {
  /// Appends a field from the bytes a header callback hands over (valid only during it).
  mutating func appendReceived(
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int
  ) {
    // Room for a whole block at once rather than growing field by field.
    if capacity == 0 { reserveCapacity(12) }
    append(HeaderField(name: name, nameLength: nameLength, value: value, valueLength: valueLength))
  }

  /// Empties a connection's header-block buffer for the next block, keeping its storage
  /// when it is of the usual size (a gRPC block has about ten fields): every response then
  /// reuses it, while a huge block a peer sent once is not held for the connection's life.
  mutating func clearKeepingUsualCapacity() {
    removeAll(keepingCapacity: capacity <= 32)
  }
}
