/// A value that only its event loop's thread may touch: loop confinement as a type rather
/// than a comment. Every read and write checks the thread, in every build
/// (``EventLoop/preconditionInEventLoop(_:file:line:)``): a wrong-thread access stops the
/// process with a message naming it instead of racing with the loop.
///
/// It is `Sendable` so that the object holding it may be shared with other threads, which
/// hand work to the loop (`loop.execute`) instead of touching the value.
public struct LoopBound<Value>: @unchecked Sendable {
  // @unchecked Sendable: `value` is only reached on `loop`'s thread (checked on every access).
  /// The loop whose thread owns the value.
  public let loop: EventLoop
  private var storage: Value

  /// `value`, owned by `loop` from now on. May be made on any thread.
  public init(_ value: Value, on loop: EventLoop) {
    self.loop = loop
    storage = value
  }

  /// The value; only on the loop's thread.
  public var value: Value {
    // Lent, not returned: `bound.value.method()` or `bound.value.field` borrows the value in
    // place, where a getter would copy it out (retaining a class, copying a struct's every
    // reference) on every access, as a pool's per call and a follow scheduler's per poll.
    _read {
      loop.preconditionInEventLoop("LoopBound.value")
      yield storage
    }
    _modify {
      loop.preconditionInEventLoop("LoopBound.value")
      yield &storage
    }
  }

  /// The value without the thread check, for its owner's `deinit` only: by then no other
  /// reference to the owner exists, on the loop or anywhere else. Unsafe anywhere else:
  /// nothing checks the thread, so a read or write off the loop races with it. Public
  /// because an owner outside GRPCWire (a user's type holding a `LoopBound`) has a `deinit`
  /// too, which may run on any thread.
  public var unsafeValueInDeinit: Value {
    get { storage }
    _modify { yield &storage }
  }
}
