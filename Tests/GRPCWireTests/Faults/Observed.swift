import FleetSync

/// A value that tasks update and other tasks wait on, until it satisfies a condition or a
/// timeout passes: how the fault tests wait for "the channel is READY again" or "2,500 calls
/// have ended" without polling or sleeping.
///
/// Updates and reads may come from any task or thread; waiters are resumed outside the lock.
/// The lock is a PosixMutex, which ThreadSanitizer sees (Synchronization.Mutex it does not).
final class Observed<Value: Sendable>: Sendable {
  private struct Waiter: Sendable {
    var predicate: @Sendable (Value) -> Bool
    var continuation: CheckedContinuation<Value, any Error>
  }

  private struct State: Sendable {
    var value: Value
    var waiters: [UInt64: Waiter] = [:]
    var nextWaiter: UInt64 = 0
  }

  private let state: PosixMutex<State>

  init(_ value: Value) {
    state = PosixMutex(State(value: value))
  }

  var value: Value { state.withLock { $0.value } }

  /// Changes the value, resumes the waiters it now satisfies, and returns what `change`
  /// returned.
  @discardableResult
  func update<R: Sendable>(_ change: @Sendable (inout Value) -> R) -> R {
    let (result, ready) = state.withLock {
      state -> (R, [(CheckedContinuation<Value, any Error>, Value)]) in
      let result = change(&state.value)
      var ready: [(CheckedContinuation<Value, any Error>, Value)] = []
      for (id, waiter) in state.waiters where waiter.predicate(state.value) {
        state.waiters[id] = nil
        ready.append((waiter.continuation, state.value))
      }
      return (result, ready)
    }
    for (continuation, value) in ready { continuation.resume(returning: value) }
    return result
  }

  /// Returns the value once `predicate` holds (at once if it does now). Throws
  /// ``WaitTimedOut`` (naming `what` and the last value) after `timeout`.
  @discardableResult
  func wait(
    for what: String, timeout: Duration,
    until predicate: @escaping @Sendable (Value) -> Bool
  ) async throws -> Value {
    let id = state.withLock { state in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let now = state.withLock { state -> Result<Value, any Error>? in
          if predicate(state.value) { return .success(state.value) }
          // Checked under the lock that `fail` takes: a cancellation is either seen here or
          // finds the waiter registered.
          if Task.isCancelled { return .failure(CancellationError()) }
          state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
          return nil
        }
        if let now {
          continuation.resume(with: now)
          return
        }
        // The timeout itself: a sleep that only decides when to give up waiting.
        Task { [weak self] in
          try? await Task.sleep(for: timeout)
          guard let self else { return }
          self.fail(id, WaitTimedOut(what: what, after: timeout, last: "\(self.value)"))
        }
      }
    } onCancel: {
      fail(id, CancellationError())
    }
  }

  private func fail(_ id: UInt64, _ error: any Error) {
    let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
    waiter?.continuation.resume(throwing: error)
  }
}

/// A wait of the fault tests that ran out of time.
struct WaitTimedOut: Error, CustomStringConvertible {
  var what: String
  var after: Duration
  var last: String

  var description: String {
    "timed out after \(after.milliseconds) ms waiting for \(what); last value: \(last)"
  }
}

/// Runs `body`, failing with ``WaitTimedOut`` if it has not finished after `limit` (it is
/// then cancelled): the global limit that turns a hang into a failure.
func withTimeLimit<T: Sendable>(
  _ what: String, _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
  try await withThrowingTaskGroup(of: T?.self) { group in
    group.addTask { try await body() }
    group.addTask {
      // The limit itself, not a pause in the scenario.
      try await Task.sleep(for: limit)
      return nil
    }
    defer { group.cancelAll() }
    guard let first = try await group.next(), let result = first else {
      throw WaitTimedOut(what: what, after: limit, last: "still running")
    }
    return result
  }
}

extension Duration {
  /// Whole milliseconds, for the figures the tests print.
  var milliseconds: Int {
    let (seconds, attoseconds) = components
    return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
  }
}

/// The first element of `stream` (nil when it finished empty), failing with ``WaitTimedOut``
/// when none comes within `limit`: how a test waits for what a callback reports.
func first<T: Sendable>(
  _ what: String, of stream: AsyncStream<T>, within limit: Duration
) async throws -> T? {
  try await withTimeLimit(what, limit) {
    var iterator = stream.makeAsyncIterator()
    return await iterator.next()
  }
}
