internal import Logging

/// What an attempt of a hedged call, or its hedging timer, reports to the call.
private enum HedgeEvent: Sendable {
  case ended(ClientStream, [ClientStream.Received], CallOutcome, Metadata?)
  case thrown(any Error)
  /// The hedging delay of this generation passed (an older generation's is stale).
  case timer(Int)
}

/// Unary calls under a service config's hedging policy (proposal A6, "Hedging Policy"): the
/// first attempt at once, one more every `hedgingDelay` while none has succeeded, all running
/// at once; the first OK wins and the others are cancelled (RST_STREAM CANCEL), a fatal code
/// ends the call and cancels the others, a non-fatal one starts the next attempt at once.
extension GRPCChannel {
  func unaryHedged<Response: Sendable>(
    path: String, _ framed: [UInt8], _ deserializer: some MessageDeserializer<Response>,
    _ options: CallOptions, _ policy: ServiceConfig.HedgingPolicy,
    _ method: ServiceConfig.MethodConfig, _ policies: CallPolicies
  ) async throws -> ClientResponse<Response> {
    let throttle = policies.throttle
    return try await withAttempts(path: path, options, method, policies) { call in
      try await withThrowingTaskGroup(of: HedgeEvent.self) { group in
        var running = 0
        var generation = 0
        var timerPending = false
        // A pushback said not to retry: no more attempts.
        var stopped = false

        func mayStart() -> Bool {
          !stopped && call.started < policy.maxAttempts
            && (call.started == 0 || throttle?.allowsRetry != false)
        }
        func start() throws {
          let stream = try startAttempt(&call, framed, oneResponse: true)
          // Launched here, not in the child task: a child may start late on a busy machine,
          // and the attempts must go out hedgingDelay apart.
          try launch(stream)
          if call.started > 1 { call.metrics.hedges.increment() }
          running += 1
          group.addTask {
            do {
              let (messages, outcome, head) = try await self.supervise(stream) {
                await stream.awaitEnd()
              }
              return .ended(stream, messages, outcome, head)
            } catch {
              return .thrown(error)
            }
          }
        }
        func arm(_ delay: Duration) {
          generation += 1
          timerPending = true
          let armed = generation
          group.addTask {
            do {
              try await Task.sleep(for: delay)
              return .timer(armed)
            } catch {
              return .timer(-1)
            }
          }
        }

        try start()
        if mayStart() { arm(policy.hedgingDelay) }
        while let event = try await group.next() {
          switch event {
          case .timer(let armed):
            guard armed == generation else { continue }
            timerPending = false
            guard mayStart() else {
              if running == 0 {
                throw RPCError(code: .unavailable, message: "no hedged attempt could be made")
              }
              continue
            }
            try start()
            if mayStart() { arm(policy.hedgingDelay) }
          case .thrown(let error):
            running -= 1
            let failure =
              error as? RPCError ?? RPCError(code: .unknown, message: "an attempt failed: \(error)")
            if Task.isCancelled || (running == 0 && !(timerPending && mayStart())) { throw failure }
          case .ended(let stream, let messages, let outcome, let head):
            running -= 1
            guard case .failure(let error) = outcome else {
              throttle?.recordSuccess()
              group.cancelAll()
              return try Self.single(messages, outcome, head, stream, deserializer)
            }
            let nonFatal = policy.nonFatalStatusCodes.contains(error.code)
            if nonFatal || error.retryPushback == .stop { throttle?.recordFailure() }
            guard nonFatal, head == nil else {
              group.cancelAll()
              logFinalAttempt(
                path, call.started, error, "\(error.code.name) is fatal to a hedged call")
              throw error
            }
            switch error.retryPushback {
            case .stop?:
              stopped = true
            case .retry(let delay)?:
              // A6: the next attempt after the pushback's delay, then hedgingDelay apart again.
              if mayStart() { arm(delay) }
            case nil:
              // A6: a non-fatal failure starts the next attempt at once; the one after it
              // follows hedgingDelay later.
              if mayStart() {
                try start()
                if mayStart() { arm(policy.hedgingDelay) }
              }
            }
            if running == 0, !(timerPending && mayStart()) {
              logFinalAttempt(path, call.started, error, "no hedged attempt is left to make")
              throw error
            }
          }
        }
        preconditionFailure("a hedged call's task group ran out of events")
      }
    }
  }
}
