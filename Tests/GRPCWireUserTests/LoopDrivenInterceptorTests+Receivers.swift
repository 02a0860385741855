import FleetSync
import GRPCTestingProtos
import GRPCWire
import Testing

// Built without package access, as LoopDrivenCallTests.swift says: public API only.

/// What the interceptors of a loop-driven call hear when its response does not decode, or its
/// receiver (the user's own) decodes it and reports, or never reports.
extension LoopDrivenInterceptorTests {
  @Test("a response that does not decode ends the call INTERNAL for the interceptor too")
  func undecodable() async throws {
    struct Undecodable: Error {}
    struct Refusing: MessageDeserializer {
      func deserialize(_ message: ReceivedMessage) throws -> Int { throw Undecodable() }
    }
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 3))
      let outcomes = Calls.Outcomes()
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(prepared, framedRequest: framed, deserializer: Refusing()) {
          result in
          outcomes.seen.withLock { seen in
            if case .failure(let error) = result { seen.errors.append(error) }
            seen.done = true
          }
        }
      }
      try await Calls.wait(outcomes) { $0.done }
      #expect(outcomes.seen.withLock { $0.errors.map(\.code) } == [.internalError])
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.internalError])
      #expect(entries.map(\.responses) == [1])
    }
  }

  /// A receiver of the user's own that decodes in its end, as a poller does, and tells the
  /// call the error its decoding gave: here every response fails to decode.
  final class OwnReceiver: UnaryCallReceiver {
    let outcomes = Calls.Outcomes()

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      ended(result) { _ in }
    }

    func ended(
      _ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void
    ) {
      let decoded = result.flatMap { _ -> Result<Int, RPCError> in
        .failure(RPCError(code: .internalError, message: "the response does not decode"))
      }
      if case .failure(let error) = decoded { report(error) } else { report(nil) }
      outcomes.seen.withLock { seen in
        if case .failure(let error) = decoded { seen.errors.append(error) }
        seen.done = true
      }
    }
  }

  @Test("a receiver of the user's own that decodes reports its decode error to the interceptors")
  func ownReceiverReports() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 3))
      let receiver = OwnReceiver()
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(prepared, framedRequest: framed, receiver: receiver)
      }
      try await Calls.wait(receiver.outcomes) { $0.done }
      #expect(receiver.outcomes.seen.withLock { $0.errors.map(\.code) } == [.internalError])
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.internalError])
      #expect(entries.map(\.responses) == [1])
    }
  }

  /// A receiver of the user's own that implements the reporting end but never reports.
  final class SilentReceiver: UnaryCallReceiver {
    let outcomes = Calls.Outcomes()

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      ended(result) { _ in }
    }

    func ended(
      _ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void
    ) {
      outcomes.seen.withLock { seen in
        if case .failure(let error) = result { seen.errors.append(error) }
        seen.done = true
      }
    }
  }

  @Test("a receiver that never reports: the interceptors still hear the call's own status")
  func silentReceiverReported() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      // A negative size: the server answers INVALID_ARGUMENT.
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: -1))
      let receiver = SilentReceiver()
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(prepared, framedRequest: framed, receiver: receiver)
      }
      try await Calls.wait(receiver.outcomes) { $0.done }
      #expect(receiver.outcomes.seen.withLock { $0.errors.map(\.code) } == [.invalidArgument])
      // Told on the loop right after the receiver returned: by the time a later job of the
      // loop runs.
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in 0 }
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.invalidArgument])
      #expect(entries.map(\.responses) == [0])
      #expect(entries.map(\.onLoop) == [true])
    }
  }
}
