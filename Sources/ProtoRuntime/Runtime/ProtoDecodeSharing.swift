#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What one decode has already built, so that equal parts of a message are built once and
/// shared: a string longer than Swift's inline 15 bytes, the storage of a copy-on-write
/// message (`COW_MESSAGES` in CodeGen/swiftgen.py), and the array of a repeated message field.
///
/// A Fleet Engine trip repeats itself: `vehicle_waypoints` holds the `remaining_waypoints`,
/// `current_route_segment_end_point` one of them, every terminal location the same place ID
/// twice. Decoded apart, each copy cost its own heap allocations (a string's buffer, a
/// storage object, an array); shared, a copy costs a retain, and copies of a followed trip take their
/// memory once. Sharing is invisible: the values are equal, and copy-on-write storage is
/// copied before its first change.
///
/// One per thread, reused by every decode on it (with the arena protobuf-c unpacks into), so
/// a decode allocates neither; it is live only while ``CBridgedMessage/withUnpacked(_:_:)``
/// runs, and forgets everything when the outermost decode on the thread returns. A generated
/// `init(cMessage:)` called outside a decode finds it idle and shares nothing.
///
/// Matching is exact: a string is reused only for the same bytes, a storage only when the
/// generated `matches(cMessage:)` says the C message decodes to exactly its value, an array
/// only when every element does.
@usableFromInline package final class ProtoDecodeSharing {
  /// Strings of more than 15 UTF-8 bytes decoded so far (shorter ones allocate nothing).
  private var strings: [String] = []
  /// Copy-on-write storages decoded so far, with their class.
  private var storages: [(type: ObjectIdentifier, storage: AnyObject)] = []
  /// Arrays of repeated message fields decoded so far, with their element type and count
  /// (held as `Any`, which stores an array inline: no allocation).
  private var arrays: [(element: ObjectIdentifier, count: Int, array: Any)] = []
  /// Decodes in progress on this thread (a decode inside a decode's body counts twice).
  private var depth = 0
  /// The arena the outermost decode unpacks into; emptied, not freed, when it returns.
  let arena = ProtoArena(initialCapacity: ThreadBlockCache.blockSize)

  /// At most this many strings and storages are remembered per decode: past it, a decode
  /// builds what it meets, so a message of thousands of distinct strings costs no quadratic
  /// search.
  static let limit = 64

  private init() {
    strings.reserveCapacity(Self.limit)
    storages.reserveCapacity(Self.limit)
    arrays.reserveCapacity(Self.limit)
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let created = pthread_key_create(&key) { pointer in
      Unmanaged<ProtoDecodeSharing>.fromOpaque(pointer!).release()
    }
    precondition(created == 0, "pthread_key_create failed")
    return key
  }()

  /// This thread's sharing, made on first use.
  private static var thisThread: ProtoDecodeSharing {
    if let existing = pthread_getspecific(key) {
      return Unmanaged<ProtoDecodeSharing>.fromOpaque(existing).takeUnretainedValue()
    }
    let made = ProtoDecodeSharing()
    pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
    return made
  }

  /// This thread's sharing while a decode runs on it, else nil.
  private static var active: ProtoDecodeSharing? {
    guard let existing = pthread_getspecific(key) else { return nil }
    let sharing = Unmanaged<ProtoDecodeSharing>.fromOpaque(existing).takeUnretainedValue()
    return sharing.depth > 0 ? sharing : nil
  }

  /// Runs one decode with sharing live; `body` gets the arena to unpack into: this thread's
  /// for the outermost decode, a fresh one for a decode inside it.
  static func decoding<Result>(
    _ body: (ProtoArena) throws(ProtoDecodingError) -> Result
  ) throws(ProtoDecodingError) -> Result {
    let sharing = thisThread
    sharing.depth += 1
    defer {
      sharing.depth -= 1
      if sharing.depth == 0 {
        sharing.strings.removeAll(keepingCapacity: true)
        sharing.storages.removeAll(keepingCapacity: true)
        sharing.arrays.removeAll(keepingCapacity: true)
        sharing.arena.reset()
      }
    }
    if sharing.depth > 1 {
      let arena = ProtoArena()
      return try withExtendedLifetime(arena) { () throws(ProtoDecodingError) -> Result in
        try body(arena)
      }
    }
    return try body(sharing.arena)
  }

  /// The C string `p` of more than 15 bytes as a String: one decoded before with the same
  /// bytes, or a new one, remembered. Throws for bytes that are not UTF-8.
  @usableFromInline package static func string(_ p: UnsafePointer<CChar>) throws(ProtoDecodingError)
    -> String
  {
    let sharing = active
    let count = strlen(p)
    // Typed, so that `same` is the String-to-C-string comparison: with `p` itself Swift would
    // pick the generic `same(_:_:)` over two pointers and pass `held` as a temporary C string.
    let cString: UnsafePointer<CChar>? = p
    if let sharing {
      for held in sharing.strings where held.utf8.count == count && ProtoC.same(held, cString) {
        return held
      }
    }
    guard let made = String(validatingCString: p) else {
      // The caller rethrows with the message name and size; see decodeThroughC.
      throw ProtoDecodingError(message: "", reason: .invalidUTF8, byteCount: 0)
    }
    if let sharing, sharing.strings.count < limit { sharing.strings.append(made) }
    return made
  }

  /// A storage of class `S` decoded before in this decode for which `matches` is true.
  @usableFromInline package static func storage<S: AnyObject>(
    _ type: S.Type, where matches: (S) -> Bool
  ) -> S? {
    guard let sharing = active else { return nil }
    let id = ObjectIdentifier(type)
    for held in sharing.storages where held.type == id {
      let storage = unsafeDowncast(held.storage, to: S.self)
      if matches(storage) { return storage }
    }
    return nil
  }

  /// Remembers `storage`, fully decoded, for the rest of this decode.
  @usableFromInline package static func keep<S: AnyObject>(_ storage: S) {
    guard let sharing = active, sharing.storages.count < limit else { return }
    sharing.storages.append((ObjectIdentifier(S.self), storage))
  }

  /// An array of `count` elements of `Element` decoded before in this decode for which
  /// `matches` is true.
  @usableFromInline package static func array<Element>(
    of element: Element.Type, count: Int, where matches: ([Element]) -> Bool
  ) -> [Element]? {
    guard let sharing = active else { return nil }
    let id = ObjectIdentifier(element)
    for held in sharing.arrays where held.element == id && held.count == count {
      let array = held.array as! [Element]
      if matches(array) { return array }
    }
    return nil
  }

  /// Remembers `array`, fully decoded, for the rest of this decode.
  @usableFromInline package static func keep<Element>(array: [Element]) {
    guard let sharing = active, sharing.arrays.count < limit else { return }
    sharing.arrays.append((ObjectIdentifier(Element.self), array.count, array))
  }
}
