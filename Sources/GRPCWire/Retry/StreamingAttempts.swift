internal import Synchronization

/// The attempts of one client-streaming, bidirectional (or hedged server-streaming) call under
/// a retry or hedging policy, as its writer and reader see them: A6's replay buffer.
///
/// Until the call is committed, every request message written is kept (framed) and sent to
/// each running attempt; a new attempt starts with all of them, and with the half-close if the
/// caller has finished. The call is committed to one attempt when its response headers (or its
/// end) arrive, when the driver gives up retrying, or when the next message would take the
/// kept bytes past the call's limit or the channel's budget (``RetryBufferBudget``); then the
/// buffer is freed, the other attempts are cancelled, and writes and reads go to that attempt
/// alone. Readers wait for the commit: no response reaches the caller from an attempt that
/// could still be replaced.
///
/// Any thread; decisions are made under the lock, streams are written, cancelled and waiters
/// resumed after it.
final class StreamingAttempts: Sendable {
  private struct State {
    /// The framed request messages written so far, while uncommitted.
    var buffer: [UInt8]
    /// The caller half-closed the request stream.
    var finished: Bool
    /// Attempts started and not yet given up on.
    var running: [ClientStream] = []
    /// The most recent attempt (for the end of a call that never committed).
    var latest: ClientStream?
    var committed: ClientStream?
    /// The call ended without a committed attempt.
    var failure: RPCError?
    var commitWaiters: [CheckedContinuation<ClientStream, any Error>] = []
    /// Writers whose message did not fit while no attempt ran (in a backoff).
    var attemptWaiters: [CheckedContinuation<Void, any Error>] = []
    /// Messages the caller wrote.
    var written = 0
    /// Bytes of `buffer` taken from the channel's budget.
    var reserved = 0
    /// The buffer outgrew its limits before any attempt ran: the first one is committed.
    var overflowed = false
  }

  private let state: Mutex<State>
  let limit: Int
  let budget: RetryBufferBudget
  let maxSendSize: Int

  /// A call whose request so far is `initial` (framed; `finished`: no more will come), which
  /// keeps at most `limit` bytes for replay within `budget`. An `initial` that does not fit
  /// goes to the first attempt, which the call is then committed to.
  init(
    initial: [UInt8], finished: Bool, limit: Int, budget: RetryBufferBudget, maxSendSize: Int
  ) {
    var state = State(buffer: initial, finished: finished)
    if initial.count <= limit, budget.reserve(initial.count) {
      state.reserved = initial.count
    } else {
      state.overflowed = true
    }
    self.state = Mutex(state)
    self.limit = limit
    self.budget = budget
    self.maxSendSize = maxSendSize
  }

  // MARK: The driver's side

  /// Starts the next attempt: `make` builds its stream from the requests so far and whether
  /// they are all; nil (nothing made) once the call is committed or over.
  func start(_ make: ([UInt8], Bool) throws(RPCError) -> ClientStream) throws(RPCError)
    -> ClientStream?
  {
    let (made, waiters) = try state.withLock {
      s throws(RPCError) -> (ClientStream?, [CheckedContinuation<Void, any Error>]) in
      guard s.committed == nil, s.failure == nil else { return (nil, []) }
      let stream = try make(s.buffer, s.finished)
      s.running.append(stream)
      s.latest = stream
      if s.overflowed {
        // Nothing else is running: no loser, and no reader waits yet.
        _ = commitLocked(&s, to: stream)
      }
      return (stream, s.attemptWaiters.exchange([]))
    }
    for waiter in waiters { waiter.resume() }
    return made
  }

  /// The driver gives up on `stream`, which failed before response headers; a retry may follow.
  func attemptFailed(_ stream: ClientStream) {
    state.withLock { s in s.running.removeAll { $0 === stream } }
  }

  /// Commits the call to `stream`; false when it was already committed (to any attempt) or
  /// over. The other attempts are cancelled.
  @discardableResult
  func commit(to stream: ClientStream, reason: String = "another attempt was committed") -> Bool {
    let done = state.withLock {
      s -> (losers: [ClientStream], waiters: [CheckedContinuation<ClientStream, any Error>])? in
      guard s.committed == nil, s.failure == nil else { return nil }
      return commitLocked(&s, to: stream)
    }
    guard let done else { return false }
    for loser in done.losers {
      loser.cancel(RPCError(code: .cancelled, message: "the hedged attempt lost: \(reason)"))
    }
    for waiter in done.waiters { waiter.resume(returning: stream) }
    return true
  }

  private func commitLocked(_ s: inout State, to stream: ClientStream)
    -> (losers: [ClientStream], waiters: [CheckedContinuation<ClientStream, any Error>])
  {
    s.committed = stream
    s.latest = stream
    budget.release(s.reserved)
    s.reserved = 0
    s.buffer = []
    let losers = s.running.filter { $0 !== stream }
    s.running = [stream]
    let attemptWaiters = s.attemptWaiters.exchange([])
    for waiter in attemptWaiters { waiter.resume() }
    return (losers, s.commitWaiters.exchange([]))
  }

  /// Ends the call without a committed attempt (deadline, cancellation, the caller done with
  /// it): every attempt is cancelled, the buffer freed, waiting writers and readers get
  /// `error`. Nothing once the call is committed.
  func fail(_ error: RPCError) {
    let done = state.withLock {
      s -> (
        [ClientStream], [CheckedContinuation<ClientStream, any Error>],
        [CheckedContinuation<Void, any Error>]
      )? in
      guard s.committed == nil, s.failure == nil else { return nil }
      s.failure = error
      budget.release(s.reserved)
      s.reserved = 0
      s.buffer = []
      return (s.running.exchange([]), s.commitWaiters.exchange([]), s.attemptWaiters.exchange([]))
    }
    guard let done else { return }
    for stream in done.0 { stream.cancel(error) }
    for reader in done.1 { reader.resume(throwing: error) }
    for writer in done.2 { writer.resume(throwing: error) }
  }

  /// Cancels `stream` unless the call is committed to it (a driver's watch of an attempt, when
  /// the driver is cancelled).
  func abandon(_ stream: ClientStream, _ error: RPCError) {
    if state.withLock({ $0.committed !== stream }) { stream.cancel(error) }
  }

  /// Ends the call from the caller's side: the committed attempt is reset (CANCEL) unless it is
  /// over; without one, the call fails with `error` (``fail(_:)``).
  func cancel(_ error: RPCError) {
    fail(error)
    if let committed = state.withLock({ $0.committed }), committed.outcome == nil {
      committed.cancel(error)
    }
  }

  /// Whether the call is committed or over.
  var isSettled: Bool { state.withLock { $0.committed != nil || $0.failure != nil } }

  /// Request bytes kept for replay now.
  var bufferedBytes: Int { state.withLock { $0.buffer.count } }

  // MARK: The caller's side

  /// Sends one framed request message: kept for replay and written to every running attempt
  /// while uncommitted (a failed attempt's write error is the driver's to handle), to the
  /// committed attempt alone after. Commits the call when the message does not fit the buffer.
  func write(_ framed: [UInt8]) async throws {
    if framed.count - MessageFramer.prefixLength > maxSendSize {
      let error = RPCError.requestTooLarge(framed.count - MessageFramer.prefixLength, maxSendSize)
      cancel(error)
      throw error
    }
    while true {
      enum Plan {
        case attempts([ClientStream])
        case committed(
          ClientStream, newly: [ClientStream], [CheckedContinuation<ClientStream, any Error>])
        case failed(RPCError)
        case wait
      }
      let plan = state.withLock { s -> Plan in
        if let committed = s.committed {
          s.written += 1
          return .committed(committed, newly: [], [])
        }
        if let failure = s.failure { return .failed(failure) }
        if s.buffer.count + framed.count <= limit, budget.reserve(framed.count) {
          s.buffer.append(contentsOf: framed)
          s.reserved += framed.count
          s.written += 1
          return .attempts(s.running)
        }
        // A6: a message past the call's or the channel's limit commits the call to the
        // attempt now running; in a backoff, to the next one.
        guard let current = s.running.first else { return .wait }
        s.written += 1
        let (losers, waiters) = commitLocked(&s, to: current)
        return .committed(current, newly: losers, waiters)
      }
      switch plan {
      case .attempts(let streams):
        for stream in streams {
          // An attempt that ended fails the write; the driver retries it, replaying this one.
          try? await stream.write(framed, finish: false)
        }
        return
      case .committed(let stream, let losers, let waiters):
        for loser in losers {
          loser.cancel(RPCError(code: .cancelled, message: "the call outgrew its replay buffer"))
        }
        for waiter in waiters { waiter.resume(returning: stream) }
        try await stream.write(framed, finish: false)
        return
      case .failed(let error):
        throw error
      case .wait:
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
          let now = state.withLock { s -> Result<Void, RPCError>? in
            if let failure = s.failure { return .failure(failure) }
            if s.committed != nil || !s.running.isEmpty { return .success(()) }
            s.attemptWaiters.append(c)
            return nil
          }
          if let now { c.resume(with: now) }
        }
      }
    }
  }

  /// Half-closes the request stream of every running attempt, and of those to come.
  func finishRequests() {
    let streams = state.withLock { s -> [ClientStream] in
      guard !s.finished else { return [] }
      s.finished = true
      return s.running
    }
    for stream in streams { stream.finishRequests() }
  }

  /// The attempt the call is committed to, once it is; throws how the call ended otherwise.
  func committedStream() async throws -> ClientStream {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<ClientStream, any Error>) in
      let now = state.withLock { s -> Result<ClientStream, RPCError>? in
        if let committed = s.committed { return .success(committed) }
        if let failure = s.failure { return .failure(failure) }
        s.commitWaiters.append(c)
        return nil
      }
      if let now { c.resume(with: now) }
    }
  }

  /// The committed attempt (else the latest), for the call's summary, and the messages written.
  var summary: (stream: ClientStream?, written: Int) {
    state.withLock { ($0.committed ?? $0.latest, $0.written) }
  }

  /// The attempt the call is committed to, if it is.
  var committed: ClientStream? { state.withLock { $0.committed } }
}
