import BenchmarkProtos
import Foundation
import GRPCCore
import GRPCProtobuf
import SwiftProtobuf
import Synchronization

/// The calls `--call` names, exactly as fleet-load spells them.
enum Workload: String, CaseIterable, Sendable {
  case getTrip = "GetTrip"
  case unaryCall = "grpc.testing.BenchmarkService/UnaryCall"
  case streamingCall = "grpc.testing.BenchmarkService/StreamingCall"
  case streamingFromServer = "grpc.testing.BenchmarkService/StreamingFromServer"
  case streamingOutputCall = "grpc.testing.TestService/StreamingOutputCall"

  static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

  /// What one counted unit is, as fleet-load counts it: `rpc` (a call, or one round trip of
  /// the ping-pong stream) or `message` (a response message of a server stream).
  var unit: String {
    switch self {
    case .getTrip, .unaryCall, .streamingCall: "rpc"
    case .streamingFromServer, .streamingOutputCall: "message"
    }
  }
}

/// What one worker (or all, merged) saw.
struct WorkerResult: Sendable {
  /// Latency of each measured unit, nanoseconds; for a streamed message, the time since the
  /// previous message of its stream (the first: since the call started), as fleet-load.
  var latencies: [Int64] = []
  /// Units in the measured phase.
  var measured = 0
  /// Units completed during the warm-up, and while stopping (after the measured phase).
  var warmup = 0
  var drained = 0
  /// Outcomes per status code name (per unit for calls, per stream for streams, as
  /// fleet-load); failed calls per message.
  var codes: [String: Int] = [:]
  var errors: [String: Int] = [:]
  /// Unary responses received (in any phase) and their bytes with gRPC's 5-byte prefix.
  var responses = 0
  var responseBytes = 0

  mutating func merge(_ other: WorkerResult) {
    responses += other.responses
    responseBytes += other.responseBytes
    latencies += other.latencies
    measured += other.measured
    warmup += other.warmup
    drained += other.drained
    codes.merge(other.codes, uniquingKeysWith: +)
    errors.merge(other.errors, uniquingKeysWith: +)
  }

  /// One unary response of `byteCount` bytes (without the gRPC prefix) received.
  mutating func response(byteCount: Int) {
    responses += 1
    responseBytes += 5 + byteCount
  }

  /// Counts one finished unit in the phase it finished in; false once the run is over.
  mutating func record(
    _ phases: LoadPhases, latency: Duration?, code: String? = "OK", error: String? = nil
  ) -> Bool {
    switch phases.current {
    case .warmup:
      warmup += 1
      return true
    case .measuring:
      measured += 1
      if let latency {
        latencies.append(
          latency.components.seconds * 1_000_000_000 + latency.components.attoseconds
            / 1_000_000_000)
      }
      if let code { codes[code, default: 0] += 1 }
      if let error { errors[error, default: 0] += 1 }
      return phases.countMeasured()
    case .stopping:
      drained += 1
      return false
    }
  }
}

/// Everything a worker needs; the calls themselves are the generated stubs' methods.
struct WorkloadContext: Sendable {
  let workload: Workload
  let tripNames: [String]
  let requestSize: Int
  let responseSize: Int
  let streamMessages: Int
  let phases: LoadPhases
  let metadata: Metadata = ["authorization": "Bearer load-test"]

  var simpleRequest: Grpc_Testing_SimpleRequest {
    var request = Grpc_Testing_SimpleRequest()
    request.responseSize = Int32(responseSize)
    request.payload.body = Data(count: requestSize)
    return request
  }

  /// One call of the workload (one message for the streams), before any load.
  func probe(_ client: GRPCClient<some ClientTransport>) async throws {
    switch workload {
    case .getTrip:
      var request = Maps_Fleetengine_V1_GetTripRequest()
      request.name = tripNames[0]
      _ = try await Maps_Fleetengine_V1_TripService.Client(wrapping: client)
        .getTrip(request, metadata: metadata)
    case .unaryCall, .streamingCall, .streamingFromServer:
      _ = try await Grpc_Testing_BenchmarkService.Client(wrapping: client)
        .unaryCall(simpleRequest, metadata: metadata)
    case .streamingOutputCall:
      try await streamingOutput(Grpc_Testing_TestService.Client(wrapping: client))
    }
  }

  func runWorker(_ worker: Int, client: GRPCClient<some ClientTransport>) async throws
    -> WorkerResult
  {
    switch workload {
    case .getTrip: return await getTrips(worker, client)
    case .unaryCall: return await unaryCalls(client)
    case .streamingCall: return try await pingPong(client)
    case .streamingFromServer: return try await serverStream(client)
    case .streamingOutputCall: return await streamingOutputCalls(client)
    }
  }

  // MARK: Unary

  private func getTrips(_ worker: Int, _ client: GRPCClient<some ClientTransport>) async
    -> WorkerResult
  {
    let names = tripNames
    return await unaryLoop(
      client, Maps_Fleetengine_V1_TripService.Method.GetTrip.descriptor,
      SizedProtobufDeserializer<Maps_Fleetengine_V1_Trip>()
    ) { number in
      var request = Maps_Fleetengine_V1_GetTripRequest()
      request.name = names[(worker + number) % names.count]
      return request
    }
  }

  private func unaryCalls(_ client: GRPCClient<some ClientTransport>) async -> WorkerResult {
    let request = simpleRequest
    return await unaryLoop(
      client, Grpc_Testing_BenchmarkService.Method.UnaryCall.descriptor,
      SizedProtobufDeserializer<Grpc_Testing_SimpleResponse>()
    ) { _ in request }
  }

  /// Unary calls back to back until the run is over: what the generated stub's method does
  /// (`client.unary` with GRPCProtobuf's serializer and deserializer), with the size of each
  /// response kept for the report.
  private func unaryLoop<
    Request: SwiftProtobuf.Message & Sendable, Response: SwiftProtobuf.Message & Sendable
  >(
    _ client: GRPCClient<some ClientTransport>, _ descriptor: MethodDescriptor,
    _ deserializer: SizedProtobufDeserializer<Response>, request: (Int) -> Request
  ) async -> WorkerResult {
    var result = WorkerResult()
    var number = 0
    var going = true
    while going {
      let message = request(number)
      number += 1
      let start = ContinuousClock.now
      do {
        let byteCount = try await client.unary(
          request: ClientRequest(message: message, metadata: metadata), descriptor: descriptor,
          serializer: ProtobufSerializer(), deserializer: deserializer, options: .defaults
        ) { try $0.message.byteCount }
        result.response(byteCount: byteCount)
        going = result.record(phases, latency: .now - start)
      } catch {
        going = result.record(
          phases, latency: .now - start, code: Self.code(error), error: "\(error)")
      }
    }
    return result
  }

  /// StreamingOutputCall calls one after another, each asking for --stream-messages
  /// responses of --response-size bytes; a unit is one response message.
  private func streamingOutputCalls(_ client: GRPCClient<some ClientTransport>) async
    -> WorkerResult
  {
    let service = Grpc_Testing_TestService.Client(wrapping: client)
    let phases = self.phases
    var result = WorkerResult()
    while phases.current != .stopping {
      do {
        let part = try await service.streamingOutputCall(
          streamingOutputRequest, metadata: metadata
        ) { response in
          var part = WorkerResult()
          var last = ContinuousClock.now
          for try await _ in response.messages {
            let now = ContinuousClock.now
            guard part.record(phases, latency: now - last, code: nil) else { break }
            last = now
          }
          return part
        }
        result.merge(part)
        result.codes["OK", default: 0] += 1
      } catch {
        result.codes[Self.code(error), default: 0] += 1
        result.errors["\(error)", default: 0] += 1
        if phases.current == .stopping { break }
      }
    }
    return result
  }

  private var streamingOutputRequest: Grpc_Testing_StreamingOutputCallRequest {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = Int32(responseSize)
    request.responseParameters = Array(repeating: parameters, count: streamMessages)
    return request
  }

  /// One StreamingOutputCall read to its end.
  private func streamingOutput(_ service: Grpc_Testing_TestService.Client<some ClientTransport>)
    async throws
  {
    try await service.streamingOutputCall(streamingOutputRequest, metadata: metadata) {
      response in
      for try await _ in response.messages {}
    }
  }

  // MARK: Streams

  /// One bidirectional stream for the whole run: send a request, wait for its response,
  /// repeat. A unit is one round trip.
  private func pingPong(_ client: GRPCClient<some ClientTransport>) async throws -> WorkerResult {
    let service = Grpc_Testing_BenchmarkService.Client(wrapping: client)
    let request = simpleRequest
    let phases = self.phases
    // The response side tells the request side when to send the next request.
    let (turns, turn) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
    return try await service.streamingCall(
      metadata: metadata,
      requestProducer: { writer in
        try await writer.write(request)
        for await _ in turns { try await writer.write(request) }
      },
      onResponse: { response in
        var result = WorkerResult()
        var start = ContinuousClock.now
        for try await _ in response.messages {
          let now = ContinuousClock.now
          let going = result.record(phases, latency: now - start)
          guard going else { break }
          start = now
          turn.yield()
        }
        turn.finish()
        return result
      })
  }

  /// One server stream for the whole run, counting messages until the run stops; returning
  /// from the response handler cancels the stream.
  private func serverStream(_ client: GRPCClient<some ClientTransport>) async throws
    -> WorkerResult
  {
    let service = Grpc_Testing_BenchmarkService.Client(wrapping: client)
    let phases = self.phases
    do {
      return try await service.streamingFromServer(simpleRequest, metadata: metadata) {
        response in
        var result = WorkerResult()
        var last = ContinuousClock.now
        for try await _ in response.messages {
          let now = ContinuousClock.now
          guard result.record(phases, latency: now - last, code: nil) else { break }
          last = now
        }
        result.codes["OK", default: 0] += 1
        return result
      }
    } catch let error as RPCError where error.code == .cancelled {
      return WorkerResult()
    }
  }

  static func code(_ error: any Error) -> String {
    guard let error = error as? RPCError else { return "UNKNOWN" }
    var name = ""
    for character in "\(error.code)" {
      if character.isUppercase, !name.isEmpty { name.append("_") }
      name.append(character.uppercased())
    }
    return name
  }
}

/// GRPCProtobuf's decode, also giving the size of the message as it arrived.
struct SizedProtobufDeserializer<Message: SwiftProtobuf.Message & Sendable>: MessageDeserializer {
  func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws
    -> (message: Message, byteCount: Int)
  {
    (try ProtobufDeserializer<Message>().deserialize(serializedMessageBytes),
     serializedMessageBytes.count)
  }
}
