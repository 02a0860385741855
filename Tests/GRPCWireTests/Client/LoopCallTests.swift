import FleetSync
import Testing

@testable import GRPCWire
import GRPCTestingProtos
import PeerSupport

/// Calls driven by the loop itself (``LoopCall``): started on the channel's loop thread,
/// their callbacks run there, in order, once; cancelling ends them CANCELLED.
@Suite("Loop-driven calls", .timeLimit(.minutes(1)))
struct LoopCallTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall echoes the request's `response_size` as a payload of that many
  /// bytes, and whose StreamingOutputCall sends one response per parameter, each `size`
  /// bytes, `interval_us` after the one before.
  func makeServer() -> GRPCServer {
    let server = GRPCServer()
    server.registerUnaryPayload(fill: 7)
    server.registerStreamingOutput()
    return server
  }

  /// What the callbacks saw, recorded from the loop thread.
  final class Record: Sendable {
    struct Seen: Sendable {
      var sizes: [Int] = []
      var ends: [RPCError?] = []
      var offLoop = 0
    }
    let seen = Observed(Seen())
  }

  /// Runs `body` on the loop thread and waits for it.
  func onLoop<R: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () throws -> R)
    async throws -> R
  {
    try await withCheckedThrowingContinuation { continuation in
      loop.execute { continuation.resume(with: Result { try body() }) }
    }
  }

  /// Waits until `record` holds `ends` ends, for at most 10 s.
  func waitForEnds(_ record: Record, _ ends: Int) async throws {
    try await record.seen.wait(for: "\(ends) ends", timeout: .seconds(10)) {
      $0.ends.count >= ends
    }
  }

  @Test("unary: the response or the server's error arrives once, on the loop thread")
  func unary() async throws {
    let server = makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let loop = channel.eventLoop
    let record = Record()
    for (round, size) in [3, -1, 100_000].enumerated() {
      var built = GRPCTesting.SimpleRequest()
      built.responseSize = Int32(size)
      let request = built
      _ = try await onLoop(loop) {
        try channel.startUnary(Service.unaryCall, request, options: CallOptions()) { result in
          record.seen.update { seen in
            if !loop.inEventLoop { seen.offLoop += 1 }
            switch result {
            case .success(let response):
              seen.sizes.append(response.payload?.body.count ?? -1)
              seen.ends.append(nil)
            case .failure(let error): seen.ends.append(error)
            }
          }
        }
      }
      // Counted from the round, not from what was recorded once the call had started: a
      // fast call may have ended by then.
      try await waitForEnds(record, round + 1)
    }
    let seen = record.seen.value
    #expect(seen.sizes == [3, 100_000])
    #expect(seen.ends.map { $0?.code } == [nil, .invalidArgument, nil])
    #expect(seen.offLoop == 0)
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a prepared unary call with a framed request is the same call, made again")
  func preparedUnary() async throws {
    let server = makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = 5
    let framed = GRPCChannel.frame(request)
    let prepared = try channel.prepare(
      path: Service.unaryCall.path, options: CallOptions(timeout: .seconds(5)))
    let record = Record()
    for round in 1...3 {
      _ = try await onLoop(channel.eventLoop) {
        try channel.startUnary(prepared, framedRequest: framed, as: GRPCTesting.SimpleResponse.self)
        { result in
          record.seen.update { seen in
            seen.sizes.append((try? result.get())?.payload?.body.count ?? -1)
            seen.ends.append(nil)
          }
        }
      }
      try await waitForEnds(record, round)
    }
    #expect(record.seen.value.sizes == [5, 5, 5])
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a prepared call laid out whole sends the same fields as one laid out per call")
  func laidOutPrepared() async throws {
    let server = GRPCServer()
    let seen = PosixMutex<[(Metadata, Duration?)]>([])
    server.register(unary: Service.unaryCall) { _, context in
      seen.withLock { $0.append((context.requestMetadata, context.timeout)) }
      return GRPCTesting.SimpleResponse()
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    var metadata = Metadata()
    metadata.add("authorization", "Bearer one-token")
    metadata.add("x-goog-request-params", "provider_id=providers/p")
    metadata.add("x-binary-bin", binary: [0, 1, 2, 255])
    let prepared = try channel.prepare(
      path: Service.unaryCall.path, options: CallOptions(timeout: .seconds(7), metadata: metadata))
    let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest())
    let record = Record()
    for (round, call) in [prepared, prepared.laidOut(), prepared.laidOut()].enumerated() {
      _ = try await onLoop(channel.eventLoop) {
        try channel.startUnary(call, framedRequest: framed, as: GRPCTesting.SimpleResponse.self)
        { result in
          record.seen.update { seen in
            if case .failure(let error) = result { seen.ends.append(error) } else { seen.ends.append(nil) }
          }
        }
      }
      try await waitForEnds(record, round + 1)
    }
    #expect(record.seen.value.ends.map { $0?.code } == [nil, nil, nil])
    let calls = seen.withLock { $0 }
    try #require(calls.count == 3)
    for (metadata, timeout) in calls {
      #expect(metadata["authorization"] == [.string("Bearer one-token")])
      #expect(metadata["x-goog-request-params"] == [.string("provider_id=providers/p")])
      #expect(metadata["x-binary-bin"] == [.binary([0, 1, 2, 255])])
      #expect(metadata == calls[0].0)
      #expect(timeout != nil && timeout! <= .seconds(7) && timeout! > .seconds(6))
    }
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("server streaming: every message in order, then the end; cancel ends it CANCELLED")
  func serverStreaming() async throws {
    let server = makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let loop = channel.eventLoop
    let record = Record()
    var all = GRPCTesting.StreamingOutputCallRequest()
    all.responseParameters = (1...200).map {
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = Int32($0)
      return parameters
    }
    let request = all
    func start(_ request: GRPCTesting.StreamingOutputCallRequest) async throws -> LoopCall {
      try await onLoop(loop) {
        try channel.startServerStreaming(
          Service.streamingOutputCall, request, options: CallOptions(),
          onMessage: { response in
            record.seen.update { seen in
              if !loop.inEventLoop { seen.offLoop += 1 }
              seen.sizes.append(response.payload?.body.count ?? -1)
            }
          },
          onEnd: { error in record.seen.update { $0.ends.append(error) } })
      }
    }
    _ = try await start(request)
    try await waitForEnds(record, 1)
    #expect(record.seen.value.sizes == Array(1...200))
    #expect(record.seen.value.ends.count == 1 && record.seen.value.ends[0] == nil)

    var forever = GRPCTesting.StreamingOutputCallRequest()
    var parameters = GRPCTesting.ResponseParameters()
    // Longer than the suite may run: the call is open until cancelled.
    parameters.intervalUs = 120_000_000
    forever.responseParameters = [parameters]
    let call = try await start(forever)
    call.cancel()
    try await waitForEnds(record, 2)
    #expect(record.seen.value.ends[1]?.code == .cancelled)
    #expect(record.seen.value.offLoop == 0)
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a closed channel refuses to start a call, with UNAVAILABLE")
  func closedChannel() async throws {
    let loop = EventLoop(name: "loop-call-test")
    let channel = GRPCChannel(host: "127.0.0.1", port: 1, eventLoop: loop)
    channel.close()
    let error = try await onLoop(loop) { () -> RPCError? in
      do {
        _ = try channel.startUnary(
          Service.unaryCall, GRPCTesting.SimpleRequest(), options: CallOptions()
        ) { _ in }
        return nil
      } catch let error as RPCError {
        return error
      }
    }
    #expect(error?.code == .unavailable)
    loop.shutdown()
  }
}
