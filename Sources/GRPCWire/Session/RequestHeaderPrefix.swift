internal import CNGHTTP2

/// The request header fields every call to one method of a channel sends — `:method`,
/// `:scheme`, `:path`, `:authority`, `content-type`, `te`, `user-agent`,
/// `grpc-accept-encoding` — laid out once as nghttp2 name-value pairs in memory of its own.
///
/// A call copies these pairs (not the strings behind them) ahead of its own fields (timeout,
/// compression, metadata) when it is submitted: building the whole block field by field cost
/// an array, a retain per field and a copy of every byte on each call. Immutable once made;
/// nghttp2 copies what it is given, so nothing points into it after `nghttp2_submit_request`.
final class RequestHeaderPrefix: @unchecked Sendable {
  // @unchecked Sendable: written only in init, read-only afterwards.

  let path: String
  let count: Int
  /// `count` pairs, then the bytes of their names and values (HeaderBlock.layOut).
  private let storage: UnsafeMutableRawPointer
  /// The prefix whose pairs this one starts with, when it extends one: those pairs point into
  /// its storage.
  private let base: RequestHeaderPrefix?

  init(path: String, fields: [HeaderField]) {
    self.path = path
    count = fields.count
    base = nil
    storage = UnsafeMutableRawPointer.allocate(
      byteCount: max(HeaderBlock.byteCount(fields), 1),
      alignment: MemoryLayout<nghttp2_nv>.alignment)
    _ = HeaderBlock.layOut(fields, at: storage)
  }

  /// `prefix`'s pairs followed by `fields`, laid out once: the whole block of a call made
  /// again and again with the same fields (``PreparedCall/laidOut()``).
  init(_ prefix: RequestHeaderPrefix, then fields: [HeaderField]) {
    path = prefix.path
    count = prefix.count + fields.count
    base = prefix
    let pairs = MemoryLayout<nghttp2_nv>.stride * prefix.count
    storage = UnsafeMutableRawPointer.allocate(
      byteCount: max(pairs + HeaderBlock.byteCount(fields), 1),
      alignment: MemoryLayout<nghttp2_nv>.alignment)
    storage.bindMemory(to: nghttp2_nv.self, capacity: prefix.count)
      .initialize(from: prefix.nameValues, count: prefix.count)
    _ = HeaderBlock.layOut(fields, at: storage + pairs)
  }

  deinit { storage.deallocate() }

  /// The pairs, valid while this object lives.
  var nameValues: UnsafePointer<nghttp2_nv> {
    UnsafePointer(storage.assumingMemoryBound(to: nghttp2_nv.self))
  }
}

extension HeaderBlock {
  /// `prefix`'s pairs followed by `fields`, as one block for nghttp2, valid during `body`.
  static func withNameValues<R>(
    _ prefix: RequestHeaderPrefix, _ fields: [HeaderField],
    _ body: (UnsafePointer<nghttp2_nv>, Int) -> R
  ) -> R {
    if fields.isEmpty { return withExtendedLifetime(prefix) { body(prefix.nameValues, prefix.count) } }
    return withNameValues(fields) { extra, extraCount in
      let total = prefix.count + extraCount
      return withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: total) { nva in
        let base = nva.baseAddress!
        withExtendedLifetime(prefix) {
          base.initialize(from: prefix.nameValues, count: prefix.count)
        }
        (base + prefix.count).initialize(from: extra, count: extraCount)
        return withExtendedLifetime(prefix) { body(base, total) }
      }
    }
  }
}
