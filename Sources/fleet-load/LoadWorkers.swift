import FleetProtos
import GRPCTestingProtos
import GRPCWire
import ProtoRuntime

/// The call loops of the workers, one per kind of workload: unary calls, a ping-pong stream,
/// and server streams counted message by message.
///
/// Each loop claims its calls from the ``LoadPhase`` and logs latencies and outcomes into the
/// worker's ``WorkerLog``. A call the run itself cancelled (the phase is over) is neither a
/// failure nor a latency.
struct LoadWorkers: Sendable {
  let channels: [GRPCChannel]
  let options: CallOptions
  let tripNames: [String]
  let concurrency: Int
  let requestSize: Int
  let responseSize: Int
  let streamMessages: Int

  /// Runs worker number `worker` of `workload` until `phase` is over.
  func run(_ workload: Workload, worker: Int, phase: LoadPhase, log: inout WorkerLog) async {
    let channel = channels[worker % channels.count]
    switch workload {
    case .getTrip:
      // Each trip's request framed once, as a poller's repeated call is.
      let requests = tripNames.map { name in
        var request = FleetEngine.GetTripRequest()
        request.name = name
        return GRPCChannel.frame(request)
      }
      await unary(channel, FleetEngine.TripService.getTrip, phase, &log, requests)
    case .unaryCall:
      let request = GRPCChannel.frame(simpleRequest())
      await unary(channel, GRPCTesting.BenchmarkService.unaryCall, phase, &log, [request])
    case .streamingCall:
      await pingPong(channel, GRPCTesting.BenchmarkService.streamingCall, phase, &log)
    case .streamingFromServer:
      let request = simpleRequest()
      await messages(channel, GRPCTesting.BenchmarkService.streamingFromServer, phase, &log) {
        _ in request
      }
    case .streamingOutputCall:
      var request = GRPCTesting.StreamingOutputCallRequest()
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = Int32(responseSize)
      request.responseParameters = Array(repeating: parameters, count: streamMessages)
      if requestSize > 0 { request.payload = payload(requestSize) }
      await messages(channel, GRPCTesting.TestService.streamingOutputCall, phase, &log) {
        [request] _ in request
      }
    case .watchTrip:
      let (names, step) = (tripNames, concurrency)
      await messages(channel, FleetFeed.TripFeed.watchTrip, phase, &log) { call in
        var request = FleetFeed.WatchTripRequest()
        request.name = names[(worker + call * step) % names.count]
        return request
      }
    }
  }

  // MARK: Loops

  /// Unary calls back to back (or at their scheduled times), each sending one of `requests`,
  /// framed beforehand (call k: request k modulo their count); unit: one call. Back to back
  /// on the channel's loop, they are loop-driven (``LoopUnaryWorker``): no task hop per call.
  private func unary<Request, Response>(
    _ channel: GRPCChannel, _ method: ProtoMethod<Request, Response>, _ phase: LoadPhase,
    _ log: inout WorkerLog, _ requests: [[UInt8]]
  ) async {
    if phase.interval == nil, channel.eventLoop.inEventLoop,
      let prepared = try? channel.prepare(method, options: options).laidOut()
    {
      let worker = LoopUnaryWorker(
        channel: channel, prepared: prepared, requests: requests,
        decode: { message in message.decoded(as: Response.self).map { _ in message.bytes.count } },
        phase: phase, log: log)
      await worker.run()
      log = worker.log
      return
    }
    while let ticket = phase.claim() {
      guard await Self.wait(for: ticket) else { break }
      let begin = ticket.scheduled ?? .now
      do {
        // As channel.unary(method, …) calls, with the response's size kept for the report.
        let response = try await channel.unary(
          path: method.path, framedRequest: requests[ticket.number % requests.count],
          deserializer: SizedProtoDeserializer<Response>(), options: options)
        log.record(.now - begin)
        log.response(byteCount: response.message.byteCount)
        log.outcome(nil)
      } catch {
        if phase.isStopped, Self.isCancellation(error) { break }
        log.record(.now - begin)
        log.outcome(Self.summary(of: error))
      }
      phase.completed()
    }
  }

  /// One bidirectional stream per worker, one request and its response at a time; unit: one
  /// round trip. A failed stream is replaced by a new one.
  private func pingPong(
    _ channel: GRPCChannel,
    _ method: ProtoMethod<GRPCTesting.SimpleRequest, GRPCTesting.SimpleResponse>,
    _ phase: LoadPhase, _ log: inout WorkerLog
  ) async {
    let request = simpleRequest()
    var ticket = phase.claim()
    while ticket != nil {
      var begin = ContinuousClock.now
      do {
        try await channel.bidirectionalStreaming(method, options: options) { writer, responses in
          var iterator = responses.makeAsyncIterator()
          while let current = ticket {
            guard await Self.wait(for: current) else { return }
            begin = current.scheduled ?? .now
            try await writer.write(request, compress: false)
            guard try await iterator.next() != nil else {
              throw RPCError(
                code: .internalError, message: "the server ended the stream without a response")
            }
            log.record(.now - begin)
            log.outcome(nil)
            phase.completed()
            ticket = phase.claim()
          }
          writer.finish()
        }
      } catch {
        if phase.isStopped, Self.isCancellation(error) { break }
        log.record(.now - begin)
        log.outcome(Self.summary(of: error))
        phase.completed()
        ticket = phase.claim()
      }
    }
  }

  /// Server-streaming calls, one after another; unit: one response message, its latency the
  /// time since the previous message of the stream (the first: since the call started).
  /// Outcomes are per call; a stream still healthy when the run stops counts as OK.
  private func messages<Request, Response>(
    _ channel: GRPCChannel, _ method: ProtoMethod<Request, Response>, _ phase: LoadPhase,
    _ log: inout WorkerLog, request: (Int) -> Request
  ) async {
    var call = 0
    while !phase.isStopped {
      var last = ContinuousClock.now
      do {
        try await channel.serverStreaming(method, request(call), options: options) { responses in
          for try await _ in responses {
            let now = ContinuousClock.now
            // The phase is over: returning resets the stream.
            guard phase.completed() else { return }
            log.record(now - last)
            last = now
          }
        }
        log.outcome(nil)
      } catch {
        if phase.isStopped, Self.isCancellation(error) {
          log.outcome(nil)
          break
        }
        log.outcome(Self.summary(of: error))
        phase.streamFailed()
      }
      call += 1
    }
  }

  // MARK: Pieces

  /// Sleeps until a paced ticket's time; false when the task was cancelled meanwhile.
  private static func wait(for ticket: LoadPhase.Ticket) async -> Bool {
    guard let scheduled = ticket.scheduled else { return true }
    if scheduled > .now {
      do {
        try await Task.sleep(until: scheduled, tolerance: .microseconds(50), clock: .continuous)
      } catch {
        return false
      }
    }
    return true
  }

  private static func isCancellation(_ error: any Error) -> Bool {
    (error as? RPCError)?.code == .cancelled || error is CancellationError
  }

  static func summary(of error: any Error) -> RPCErrorSummary {
    if let error = error as? RPCError {
      return RPCErrorSummary(code: error.code.name, message: error.message)
    }
    return RPCErrorSummary(code: StatusCode.unknown.name, message: "\(error)")
  }

  /// BenchmarkService's request: `--request-size` bytes of payload, `--response-size` asked.
  private func simpleRequest() -> GRPCTesting.SimpleRequest {
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = Int32(responseSize)
    if requestSize > 0 { request.payload = payload(requestSize) }
    return request
  }

  private func payload(_ size: Int) -> GRPCTesting.Payload {
    var payload = GRPCTesting.Payload()
    payload.body = [UInt8](repeating: 0, count: size)
    return payload
  }
}

/// ProtoDeserializer's decode, also giving the size of the message as it arrived.
struct SizedProtoDeserializer<Message: ProtoMessage>: MessageDeserializer {
  func deserialize(_ message: ReceivedMessage) throws -> (message: Message, byteCount: Int) {
    (try Message(serializedBytes: message.bytes), message.bytes.count)
  }
}
