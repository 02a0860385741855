internal import FleetSync

/// The response bytes one server connection may hold queued for a client that does not read
/// them (its flow-control window shut), summed over the connection's streams.
///
/// A handler's write waits for room here *before* it serialises its message, so a client that
/// opens many streams and never reads keeps at most the budget (plus one message per writer
/// already past the check) queued, not a message per stream. Writers wait in arrival order and
/// are resumed as the connection's data provider hands queued bytes to nghttp2. Shared by the
/// connection's loop (which drains) and handler tasks (which queue), so behind a lock.
final class SendBudget: Sendable {
  let limit: Int
  private let state = PosixMutex(State())

  private struct State {
    var queued = 0
    var waiters: [(stream: Int32, continuation: CheckedContinuation<Void, any Error>)] = []
  }

  init(limit: Int) { self.limit = limit }

  /// Bytes queued on the connection now.
  var queued: Int { state.withLock { $0.queued } }

  /// Whether a writer would be let in at once: the budget is not spent and nobody waits.
  var hasRoom: Bool { state.withLock { $0.queued < limit && $0.waiters.isEmpty } }

  /// Writers waiting for room.
  var waiterCount: Int { state.withLock { $0.waiters.count } }

  /// Returns once the connection is under its budget (at once when it is); throws what
  /// `aborted` returns, checked under the budget's lock so that ``cancel(stream:_:)`` cannot
  /// slip between the check and the wait.
  func waitForRoom(stream: Int32, aborted: () -> (any Error)?) async throws {
    if hasRoom { return }
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
      let now = state.withLock { s -> Result<Void, any Error>? in
        if let error = aborted() { return .failure(error) }
        if s.queued < limit && s.waiters.isEmpty { return .success(()) }
        s.waiters.append((stream, c))
        return nil
      }
      if let now { c.resume(with: now) }
    }
  }

  /// A writer queued `count` bytes (0: a writer let in gave up without queueing). While room
  /// is left the next waiting writer is let in, one at a time, so the budget is overshot by at
  /// most the messages of writers let in together.
  func queued(_ count: Int) {
    let next = state.withLock { s -> CheckedContinuation<Void, any Error>? in
      s.queued += count
      return Self.nextWriter(&s, limit)
    }
    next?.resume()
  }

  /// `count` queued bytes were sent (or dropped): the first waiting writer is let in if they
  /// made room.
  func released(_ count: Int) {
    releasing(count)?.resume()
  }

  /// ``released(_:)``, leaving the writer it lets in to the caller to resume (nghttp2's data
  /// provider: once mem_send has returned).
  func releasing(_ count: Int) -> CheckedContinuation<Void, any Error>? {
    guard count > 0 else { return nil }
    return state.withLock { s -> CheckedContinuation<Void, any Error>? in
      s.queued -= count
      return Self.nextWriter(&s, limit)
    }
  }

  private static func nextWriter(_ s: inout State, _ limit: Int) -> CheckedContinuation<Void, any Error>? {
    guard s.queued < limit, !s.waiters.isEmpty else { return nil }
    return s.waiters.removeFirst().continuation
  }

  /// The call on `stream` ended: its writer, if waiting, gets `error`.
  func cancel(stream: Int32, _ error: any Error) {
    let waiting = state.withLock { s -> CheckedContinuation<Void, any Error>? in
      guard let index = s.waiters.firstIndex(where: { $0.stream == stream }) else { return nil }
      return s.waiters.remove(at: index).continuation
    }
    waiting?.resume(throwing: error)
  }
}
