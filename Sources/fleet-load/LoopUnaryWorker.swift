import GRPCWire

/// One worker's unary calls driven by its channel's event loop: each call is started from
/// the previous one's end callback (``GRPCChannel/startUnary(_:framedRequest:receiver:)``),
/// so a call costs no task, continuation or executor hop, and its request was framed once,
/// as a poller's repeated call is. The worker's task waits once for the whole phase.
///
/// For closed-loop runs (no `--rps`) whose worker runs on the channel's loop; the awaited
/// calls of ``LoadWorkers`` serve the rest. Counts and outcomes are logged as those log them:
/// a call the run itself cancelled (the phase is over) is neither a failure nor a latency.
///
/// Not generic over the response: a generic class's methods are not specialized, and each
/// call's `Result` of a generic type cost a runtime metadata look-up. The response type is
/// in ``decode``, made where it is concrete.
final class LoopUnaryWorker: UnaryCallReceiver, @unchecked Sendable {
  // @unchecked Sendable: made on the loop by the worker's task (which runs there) and then
  // touched only on the loop: the calls' callbacks run there, and `cancel` hops there.
  private let channel: GRPCChannel
  private let prepared: PreparedCall
  private let requests: [[UInt8]]
  /// Decodes a response and gives its size as it arrived, or the error the call fails with.
  /// Reads it where it is: lent by the call (most responses), or in a received copy.
  private let decode: (LentMessage) -> Result<Int, RPCError>
  private let phase: LoadPhase
  private(set) var log: WorkerLog
  private var call: LoopCall?
  private var begin = ContinuousClock.now
  private var done: CheckedContinuation<Void, Never>?
  /// A call's end reported while it was being started: the starting loop goes on, rather
  /// than the end starting the next call inside the start (a recursion as deep as the calls).
  private var starting = false
  private var endedWhileStarting = false

  init(
    channel: GRPCChannel, prepared: PreparedCall, requests: [[UInt8]],
    decode: @escaping (LentMessage) -> Result<Int, RPCError>, phase: LoadPhase,
    log: WorkerLog
  ) {
    self.channel = channel
    self.prepared = prepared
    self.requests = requests
    self.decode = decode
    self.phase = phase
    self.log = log
  }

  /// Makes calls until the phase hands out no more and the last one has ended (or the task
  /// is cancelled: the call in flight is cancelled then). On the channel's loop.
  func run() async {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        self.done = done
        startNext()
      }
    } onCancel: {
      channel.eventLoop.execute { self.call?.cancel() }
    }
  }

  private func startNext() {
    repeat {
      endedWhileStarting = false
      guard let ticket = phase.claim() else { return finish() }
      begin = .now
      starting = true
      do {
        call = try channel.startUnary(
          prepared, framedRequest: requests[ticket.number % requests.count], receiver: self)
      } catch {
        recordFailure(error)
        endedWhileStarting = true
      }
      starting = false
    } while endedWhileStarting
  }

  func ended(lending response: LentMessage) {
    ended(decoded: decode(response))
  }

  func ended(_ result: Result<ReceivedMessage, RPCError>) {
    ended(
      decoded: result.flatMap { message in
        message.bytes.withUnsafeBytes {
          decode(LentMessage(bytes: $0, wasCompressed: message.wasCompressed))
        }
      })
  }

  private func ended(decoded: Result<Int, RPCError>) {
    call = nil
    switch decoded {
    case .success(let byteCount):
      log.record(.now - begin)
      log.response(byteCount: byteCount)
      log.outcome(nil)
      phase.completed()
    case .failure(let error):
      if phase.isStopped, error.code == .cancelled { return finish() }
      recordFailure(error)
    }
    if starting {
      endedWhileStarting = true
    } else {
      startNext()
    }
  }

  private func recordFailure(_ error: RPCError) {
    log.record(.now - begin)
    log.outcome(LoadWorkers.summary(of: error))
    phase.completed()
  }

  private func finish() {
    done?.resume()
    done = nil
  }
}
