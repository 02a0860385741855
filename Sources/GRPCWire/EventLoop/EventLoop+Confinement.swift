internal import CGRPCSystem

// Loop confinement: whether the caller is on the loop's thread, and the checks that stop the
// process, in every build, when loop-only code is reached from elsewhere or from inside an
// nghttp2 callback.

extension EventLoop {
  /// Whether the caller is on this loop's thread: the thread's current loop (a thread-local
  /// the loop's thread sets before it runs) is this one. One load and a compare, no call.
  public var inEventLoop: Bool {
    fleet_current_loop() == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
  }

  /// Stops the process, in every build, when called from inside an nghttp2 callback: the
  /// paths that resume continuations, cancel handler tasks, call observers and reset streams
  /// call it. Loop only.
  func checkOutsideCallbacks(_ file: StaticString = #fileID, _ line: UInt = #line) {
    precondition(
      !insideNGHTTP2, "called inside an nghttp2 callback, which may only record",
      file: file, line: line)
  }

  /// Stops the process, in every build, unless called on this loop's thread: the check at
  /// every entry point of the transport's loop-only state (streams, connections, the pool,
  /// sessions, the server and its connections), whose types are `@unchecked Sendable` because
  /// that state is only reached here. A call from another thread is our bug, which would
  /// otherwise race with the loop unseen in a release build. A thread-local load and a compare
  /// (``inEventLoop``).
  @inline(__always)
  package func checkInLoop(_ file: StaticString = #fileID, _ line: UInt = #line) {
    if _slowPath(!inEventLoop) { Self.calledOffLoop(file, line) }
  }

  /// ``checkInLoop(_:_:)`` failed: `fatalError`, whose message a release build prints too.
  @inline(never)
  static func calledOffLoop(_ file: StaticString, _ line: UInt) -> Never {
    fatalError("loop-only code called off its event loop's thread", file: file, line: line)
  }

  /// Stops the process, in every build, unless called on this loop's thread: the check of
  /// every public loop-only API (timers, end-of-tick hooks, loop-driven calls, ``LoopBound``).
  /// Calling one of them from another thread is the caller's bug, which would otherwise race
  /// with the loop; code elsewhere hands its work over with ``execute(_:)`` or runs in a task
  /// that prefers the loop.
  public func preconditionInEventLoop(
    _ what: @autoclosure () -> String = "loop-only code",
    file: StaticString = #fileID, line: UInt = #line
  ) {
    precondition(
      inEventLoop,
      "\(what()) called off its event loop's thread; call it on the loop (in `execute`, a "
        + "timer, a loop-driven call's callback or a task preferring the loop)",
      file: file, line: line)
  }
}
