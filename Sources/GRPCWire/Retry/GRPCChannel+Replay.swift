/// Calls whose requests are streamed (client-streaming, bidirectional) of a method with a retry
/// or hedging policy, and calls of every kind under a hedging policy (proposal A6):
/// the attempts run under a driver task while the caller writes and reads through a
/// ``StreamingAttempts``, which replays the requests written so far to each new attempt.
extension GRPCChannel {
  /// Runs `body` as one call of `path` under `policy`: the first attempt starts with `initial`
  /// (`finished`: the whole request), more follow per the policy until the call is committed.
  /// Returns the call's attempts (for its summary) and `body`'s result; once `body` is done the
  /// call is over (an attempt still running is reset).
  func withReplayedAttempts<Result>(
    path: String, initial: [UInt8], finished: Bool, _ options: CallOptions,
    _ policy: CallPolicies.Policy, _ method: ServiceConfig.MethodConfig,
    _ policies: CallPolicies, oneResponse: Bool,
    _ body: (StreamingAttempts) async throws -> Result
  ) async throws -> (StreamingAttempts, Result) {
    try await withAttempts(path: path, options, method, policies) { call in
      let attempts = StreamingAttempts(
        initial: initial, finished: finished,
        limit: options.retryBufferLimit ?? self.options.perCallRetryBufferLimit,
        budget: policies.buffer, maxSendSize: call.options.maxSendMessageSize ?? .max)
      // The first attempt starts here, before the caller writes, as a call without a policy.
      let first: ClientStream
      do throws(RPCError) {
        first = try attempts.start { buffer, finished throws(RPCError) in
          try startAttempt(&call, buffer, finished: finished, oneResponse: oneResponse)
        }!
        try launch(first)
      } catch {
        attempts.fail(error)
        throw error
      }
      let started = call
      return try await withThrowingTaskGroup(of: Int.self) { group in
        group.addTask {
          switch policy {
          case .retry(let retry):
            await self.driveRetries(first, started, retry, attempts, policies, oneResponse)
          case .hedging(let hedging):
            await self.driveHedges(first, started, hedging, attempts, policies, oneResponse)
          }
        }
        do {
          let result = try await withTaskCancellationHandler {
            try await body(attempts)
          } onCancel: {
            attempts.cancel(RPCError(code: .cancelled, message: "the call's task was cancelled"))
          }
          attempts.cancel(
            RPCError(code: .cancelled, message: "the caller stopped reading responses"))
          // A driver waiting out a backoff has nothing left to do.
          group.cancelAll()
          call.started = try await group.next() ?? call.started
          if let committed = attempts.committed {
            Self.recordEnd(of: committed, policy, policies.throttle)
          }
          return (attempts, result)
        } catch {
          attempts.cancel(RPCError(code: .cancelled, message: "the caller's code threw: \(error)"))
          group.cancelAll()
          call.started = (try? await group.next() ?? call.started) ?? call.started
          if error is CancellationError {
            throw RPCError(code: .cancelled, message: "the call's task was cancelled")
          }
          throw error
        }
      }
    }
  }

  /// Waits until `stream` has response headers or has ended; a cancelled driver resets it,
  /// unless the call is committed to it (then the caller owns it).
  private static func awaitHead(of stream: ClientStream, _ attempts: StreamingAttempts) async {
    await withTaskCancellationHandler {
      _ = try? await stream.initialMetadata()
    } onCancel: {
      attempts.abandon(stream, RPCError(code: .cancelled, message: "the call's task was cancelled"))
    }
  }

  /// The next attempt of `call`, launched, with the requests so far; nil once the call is
  /// committed or over (then also when it could not start: the call fails with why).
  private func nextAttempt(
    _ call: inout CallAttempts, _ attempts: StreamingAttempts, oneResponse: Bool
  ) -> ClientStream? {
    do throws(RPCError) {
      guard
        let stream = try attempts.start({ buffer, finished throws(RPCError) in
          try startAttempt(&call, buffer, finished: finished, oneResponse: oneResponse)
        })
      else { return nil }
      try launch(stream)
      return stream
    } catch {
      attempts.fail(error)
      return nil
    }
  }

  /// A6's retries of a streaming call: an attempt that fails with a retryable code before its
  /// response headers is made again, with the requests so far, after a backoff or pushback.
  /// Returns the attempts started.
  private func driveRetries(
    _ first: ClientStream, _ call: CallAttempts, _ policy: ServiceConfig.RetryPolicy,
    _ attempts: StreamingAttempts, _ policies: CallPolicies, _ oneResponse: Bool
  ) async -> Int {
    var call = call
    var state = RetryState(policy)
    var stream = first
    while true {
      await Self.awaitHead(of: stream, attempts)
      let progress = stream.progress
      guard progress.head == nil, case .failure(let error)? = progress.outcome else {
        attempts.commit(to: stream)
        return call.started
      }
      // Committed meanwhile (the buffer overflowed) or ended by the caller.
      if attempts.isSettled { return call.started }
      let decision =
        Task.isCancelled
        ? .fail("the call's task was cancelled")
        : state.afterFailure(error, committed: false, throttle: policies.throttle)
      switch decision {
      case .fail(let why):
        if call.started > 1 { logFinalAttempt(call.path, call.started, error, why) }
        // The caller reads this attempt's failure.
        attempts.commit(to: stream)
        return call.started
      case .retry(let delay):
        attempts.attemptFailed(stream)
        do throws(RPCError) {
          try await retry(call, after: error, delay)
        } catch {
          attempts.fail(error)
          return call.started
        }
        guard let next = nextAttempt(&call, attempts, oneResponse: oneResponse) else {
          return call.started
        }
        stream = next
      }
    }
  }

  /// What a hedged streaming call's driver waits for.
  private enum HedgedAttemptEvent: Sendable {
    /// This attempt has response headers or has ended.
    case settled(ClientStream)
    /// The hedging delay of this generation passed (an older generation's is stale).
    case timer(Int)
  }

  /// A6's hedging of a streaming call: one more attempt every `hedgingDelay` (or at once after a
  /// non-fatal failure) while none has response headers, each with the requests so far; the
  /// first to get them is committed and the others are cancelled; a fatal code commits its
  /// attempt (the caller reads the failure). Returns the attempts started.
  private func driveHedges(
    _ first: ClientStream, _ call: CallAttempts, _ policy: ServiceConfig.HedgingPolicy,
    _ attempts: StreamingAttempts, _ policies: CallPolicies, _ oneResponse: Bool
  ) async -> Int {
    var call = call
    let throttle = policies.throttle
    return await withTaskGroup(of: HedgedAttemptEvent.self) { group in
      var running = 1
      var generation = 0
      var timerPending = false
      var stopped = false
      func mayStart() -> Bool {
        !stopped && !Task.isCancelled && call.started < policy.maxAttempts
          && throttle?.allowsRetry != false
      }
      func watch(_ stream: ClientStream) {
        group.addTask {
          await Self.awaitHead(of: stream, attempts)
          return .settled(stream)
        }
      }
      func arm(_ delay: Duration) {
        generation += 1
        timerPending = true
        let armed = generation
        group.addTask { .timer(await Self.hedgingTimer(delay, armed)) }
      }
      /// Starts one more attempt (and arms the next one's timer); false when the call is over.
      func hedge() -> Bool {
        guard let stream = nextAttempt(&call, attempts, oneResponse: oneResponse) else {
          return false
        }
        call.metrics.hedges.increment()
        running += 1
        watch(stream)
        if mayStart() { arm(policy.hedgingDelay) }
        return true
      }

      watch(first)
      if mayStart() { arm(policy.hedgingDelay) }
      var last = first
      events: while let event = await group.next() {
        if attempts.isSettled { break }
        switch event {
        case .timer(let armed):
          guard armed == generation else { continue }
          timerPending = false
          if mayStart() {
            guard hedge() else { break events }
          } else if running == 0 {
            // The throttle closed meanwhile: the caller reads the last attempt's failure.
            attempts.commit(to: last)
            break events
          }
        case .settled(let stream):
          running -= 1
          last = stream
          let progress = stream.progress
          guard progress.head == nil, case .failure(let error)? = progress.outcome else {
            attempts.commit(to: stream, reason: "another attempt received response headers first")
            break events
          }
          let nonFatal = policy.nonFatalStatusCodes.contains(error.code)
          if nonFatal || error.retryPushback == .stop { throttle?.recordFailure() }
          guard nonFatal, !Task.isCancelled else {
            logFinalAttempt(
              call.path, call.started, error, "\(error.code.name) is fatal to a hedged call")
            attempts.commit(to: stream, reason: "an attempt failed with \(error.code.name)")
            break events
          }
          attempts.attemptFailed(stream)
          switch error.retryPushback {
          case .stop?:
            stopped = true
          case .retry(let delay)?:
            if mayStart() { arm(delay) }
          case nil:
            if mayStart() { guard hedge() else { break events } }
          }
          if running == 0, !(timerPending && mayStart()) {
            logFinalAttempt(call.path, call.started, error, "no hedged attempt is left to make")
            attempts.commit(to: stream)
            break events
          }
        }
      }
      group.cancelAll()
      return call.started
    }
  }

  /// Sleeps `delay`, then returns `generation`: a hedging timer of that generation fired; -1
  /// when the sleep was cancelled (the call is over).
  private static func hedgingTimer(_ delay: Duration, _ generation: Int) async -> Int {
    do {
      try await Task.sleep(for: delay)
      return generation
    } catch {
      return -1
    }
  }
}
