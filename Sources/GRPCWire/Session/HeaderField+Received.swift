internal import Glibc

extension HeaderField {
  /// A header field from the bytes nghttp2 hands a header callback (valid only during it).
  ///
  /// The names and values every gRPC call carries (`:status`, `content-type`,
  /// `application/grpc`, `grpc-status`, `0`, …) come back as shared strings, byte for byte the
  /// same, so a call's headers cost no String validation or allocation for them: in a
  /// profile of one call at a time that was 5% of the client's CPU.
  init(
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int,
    recent: inout RecentHeaderTexts
  ) {
    self.init(
      name: Self.text(name, nameLength, &recent), value: Self.text(value, valueLength, &recent))
  }

  private static func text(
    _ bytes: UnsafePointer<UInt8>?, _ count: Int, _ recent: inout RecentHeaderTexts
  ) -> String {
    guard let bytes else { return "" }
    return common(bytes, count) ?? recent.text(bytes, count)
  }

  /// The shared string of the common text (``commonByLength``) whose UTF-8 bytes are the
  /// `count` bytes at `bytes`, or nil when they are no common text's.
  static func common(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> String? {
    guard count < commonByLength.count, !commonByLength[count].isEmpty else { return nil }
    // The bytes read once into words, then compared with each candidate's words: a memcmp
    // call per candidate cost more than the rest of recording the field.
    let words = HeaderTextWords(bytes, count)
    for candidate in commonByLength[count] where candidate.words == words {
      return candidate.text
    }
    return nil
  }

  /// Whether `text`'s UTF-8 bytes are the `count` bytes at `bytes` (`text` has that many).
  fileprivate static func same(_ text: String, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool
  {
    text.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, bytes, count) == 0 }
      == true
  }

  /// Header names and values of gRPC requests and responses with their bytes as words,
  /// indexed by their UTF-8 length (at most ``HeaderTextWords/capacity``).
  static let commonByLength: [[(text: String, words: HeaderTextWords)]] = {
    let common = [
      ":status", ":method", ":scheme", ":path", ":authority", "content-type", "te",
      "user-agent", "grpc-accept-encoding", "grpc-encoding", "grpc-status", "grpc-message",
      "grpc-timeout", "authorization", "grpc-status-details-bin", "accept-encoding",
      "200", "POST", "http", "https", "application/grpc", "trailers", "identity,gzip",
      "identity,deflate,gzip", "gzip", "identity", "0",
    ]
    var table = [[(text: String, words: HeaderTextWords)]](
      repeating: [], count: 1 + common.map(\.utf8.count).max()!)
    precondition(table.count - 1 <= HeaderTextWords.capacity)
    for text in common {
      let words = Array(text.utf8).withUnsafeBufferPointer {
        HeaderTextWords($0.baseAddress!, $0.count)
      }
      table[text.utf8.count].append((text, words))
    }
    return table
  }()
}

/// Up to 24 bytes as three words, the rest zero: texts of the same length are equal when
/// their words are.
struct HeaderTextWords: Equatable {
  static let capacity = 24
  private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

  /// The `count` (at most ``capacity``) bytes at `bytes`.
  init(_ bytes: UnsafePointer<UInt8>, _ count: Int) {
    precondition(count <= Self.capacity)
    withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: bytes, byteCount: count) }
  }

  static func == (a: Self, b: Self) -> Bool {
    a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2
  }
}

/// The last few header names and values a session received that are not among the common
/// ones, as strings: a peer repeats the same ones on every call (a client's `:path`,
/// `:authority`, `user-agent`, token and routing header; a server's custom metadata), which
/// then cost no allocation or UTF-8 validation after the first time. Bounded: eight texts of
/// at most 128 bytes, replaced in turn, so a peer sending ever new values only cycles them.
struct RecentHeaderTexts {
  private static let capacity = 8
  private static let longest = 128
  private var texts: [String] = []
  private var next = 0

  /// The text of the `count` bytes at `bytes`: a recent one when it has those bytes.
  mutating func text(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> String {
    for candidate in texts
    where candidate.utf8.count == count && HeaderField.same(candidate, bytes, count) {
      return candidate
    }
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    // Kept only when it is its bytes (valid UTF-8, so nothing was replaced) and short.
    guard count <= Self.longest, text.utf8.count == count else { return text }
    if texts.count < Self.capacity {
      texts.append(text)
    } else {
      texts[next] = text
      next = (next + 1) % Self.capacity
    }
    return text
  }
}

extension [HeaderField] {
  /// Appends a field from the bytes a header callback hands over (valid only during it).
  mutating func appendReceived(
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int,
    recent: inout RecentHeaderTexts
  ) {
    // Room for a whole block at once rather than growing field by field.
    if capacity == 0 { reserveCapacity(12) }
    append(
      HeaderField(
        name: name, nameLength: nameLength, value: value, valueLength: valueLength,
        recent: &recent))
  }

  /// Empties a connection's header-block buffer for the next block, keeping its storage
  /// when it is of the usual size (a gRPC block has about ten fields): every response then
  /// reuses it, while a huge block a peer sent once is not held for the connection's life.
  mutating func clearKeepingUsualCapacity() {
    removeAll(keepingCapacity: capacity <= 32)
  }
}
