/// A value that only its event loop's thread may touch: loop confinement as a type rather
/// than a comment. Every read and write checks the thread in debug builds (as
/// ``EventLoop/assertInLoop(_:_:)`` does); release builds pay nothing.
///
/// It is `Sendable` so that the object holding it may be shared with other threads, which
/// hand work to the loop (`loop.execute`) instead of touching the value.
package struct LoopBound<Value>: @unchecked Sendable {
  // @unchecked Sendable: `value` is only reached on `loop`'s thread (checked in debug builds).
  package let loop: EventLoop
  private var storage: Value

  /// `value`, owned by `loop` from now on. May be made on any thread.
  package init(_ value: Value, on loop: EventLoop) {
    self.loop = loop
    storage = value
  }

  /// The value; only on the loop's thread.
  package var value: Value {
    get {
      loop.assertInLoop()
      return storage
    }
    _modify {
      loop.assertInLoop()
      yield &storage
    }
  }

  /// The value without the thread check, for its owner's `deinit`: by then no other
  /// reference to the owner exists, on the loop or anywhere else.
  package var valueInDeinit: Value {
    get { storage }
    _modify { yield &storage }
  }
}
