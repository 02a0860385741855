import GRPCTestingProtos
import GRPCWire

typealias Service = GRPCTesting.TestService

/// The cases themselves; sizes and values are the ones interop-test-descriptions.md gives.
struct InteropCases {
  let channel: GRPCChannel

  // MARK: Unary

  func emptyUnary() async throws {
    let response = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    try check(response.message == GRPCTesting.Empty(), "the response is not an empty Empty")
    try check(response.message.serializedBytes().isEmpty, "the response has bytes")
  }

  func largeUnary() async throws {
    let response = try await channel.unary(Service.unaryCall, simpleRequest())
    try checkPayload(response.message.payload, size: 314_159, "the response")
  }

  func clientCompressedUnary() async throws {
    // A probe: a request that claims compression but is sent plain must be refused.
    var probe = simpleRequest()
    probe.expectCompressed = bool(true)
    try await expectError(.invalidArgument, "an uncompressed request expected compressed") {
      _ = try await channel.unary(Service.unaryCall, probe)
    }
    let compressed = try await channel.unary(
      Service.unaryCall, probe, options: CallOptions(compression: .gzip))
    try checkPayload(compressed.message.payload, size: 314_159, "the compressed call's response")
    var plain = simpleRequest()
    plain.expectCompressed = bool(false)
    let uncompressed = try await channel.unary(Service.unaryCall, plain)
    try checkPayload(uncompressed.message.payload, size: 314_159, "the plain call's response")
  }

  func serverCompressedUnary() async throws {
    for compressed in [true, false] {
      var request = simpleRequest()
      request.responseCompressed = bool(compressed)
      let response = try await channel.unary(
        path: Service.unaryCall.path, request: request, serializer: ProtoSerializer(),
        deserializer: FlaggedDeserializer<GRPCTesting.SimpleResponse>())
      try check(
        response.message.wasCompressed == compressed,
        "response_compressed=\(compressed) but the response's compressed flag is \(response.message.wasCompressed)")
      try checkPayload(response.message.message.payload, size: 314_159, "the response")
    }
  }

  // MARK: Client streaming

  func clientStreaming() async throws {
    let response = try await channel.clientStreaming(Service.streamingInputCall) { writer in
      for size in [27_182, 8, 1_828, 45_904] {
        try await writer.write(streamingInput(size: size))
      }
    }
    try check(
      response.message.aggregatedPayloadSize == 74_922,
      "aggregated_payload_size is \(response.message.aggregatedPayloadSize), not 74922")
  }

  func clientCompressedStreaming() async throws {
    try await expectError(.invalidArgument, "an uncompressed first message expected compressed") {
      _ = try await channel.clientStreaming(Service.streamingInputCall) { writer in
        var request = streamingInput(size: 27_182)
        request.expectCompressed = bool(true)
        try await writer.write(request)
      }
    }
    let response = try await channel.clientStreaming(
      Service.streamingInputCall, options: CallOptions(compression: .gzip)
    ) { writer in
      var first = streamingInput(size: 27_182)
      first.expectCompressed = bool(true)
      try await writer.write(first, compress: true)
      var second = streamingInput(size: 45_904)
      second.expectCompressed = bool(false)
      try await writer.write(second, compress: false)
    }
    try check(
      response.message.aggregatedPayloadSize == 73_086,
      "aggregated_payload_size is \(response.message.aggregatedPayloadSize), not 73086")
  }

  // MARK: Server streaming

  func serverStreaming() async throws {
    let sizes = [31_415, 9, 2_653, 58_979]
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = sizes.map { responseParameters(size: $0) }
    let received = try await channel.serverStreaming(Service.streamingOutputCall, request) {
      responses in
      var payloads: [GRPCTesting.Payload?] = []
      for try await response in responses { payloads.append(response.payload) }
      return payloads
    }
    try check(received.count == sizes.count, "\(received.count) responses, not \(sizes.count)")
    for (payload, size) in zip(received, sizes) { try checkPayload(payload, size: size, "a response") }
  }

  func serverCompressedStreaming() async throws {
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = [
      responseParameters(size: 31_415, compressed: true),
      responseParameters(size: 92_653, compressed: false),
    ]
    let received = try await channel.serverStreaming(
      path: Service.streamingOutputCall.path, request: request, serializer: ProtoSerializer(),
      deserializer: FlaggedDeserializer<GRPCTesting.StreamingOutputCallResponse>()
    ) { responses in
      var all: [Flagged<GRPCTesting.StreamingOutputCallResponse>] = []
      for try await response in responses { all.append(response) }
      return all
    }
    try check(received.count == 2, "\(received.count) responses, not 2")
    try check(received[0].wasCompressed, "the first response is not compressed")
    try check(!received[1].wasCompressed, "the second response is compressed")
    try checkPayload(received[0].message.payload, size: 31_415, "the first response")
    try checkPayload(received[1].message.payload, size: 92_653, "the second response")
  }

  // MARK: Bidirectional

  func pingPong() async throws {
    let sizes = [(31_415, 27_182), (9, 8), (2_653, 1_828), (58_979, 45_904)]
    try await channel.bidirectionalStreaming(Service.fullDuplexCall) { writer, responses in
      var iterator = responses.makeAsyncIterator()
      for (responseSize, payloadSize) in sizes {
        try await writer.write(streamingOutput(responseSize: responseSize, payloadSize: payloadSize))
        let response = try await iterator.next()
        try check(response != nil, "the stream ended before the response of size \(responseSize)")
        try checkPayload(response!.payload, size: responseSize, "a response")
      }
      writer.finish()
      let end = try await iterator.next()
      try check(end == nil, "a response arrived after the request stream was finished")
    }
  }

  func emptyStream() async throws {
    try await channel.bidirectionalStreaming(Service.fullDuplexCall) { writer, responses in
      writer.finish()
      var count = 0
      for try await _ in responses { count += 1 }
      try check(count == 0, "\(count) responses to an empty stream")
    }
  }

  func customMetadata() async throws {
    let initialValue = "test_initial_metadata_value"
    let trailingValue: [UInt8] = [0xAB, 0xAB, 0xAB]
    var metadata = Metadata()
    metadata.add("x-grpc-test-echo-initial", initialValue)
    metadata.add("x-grpc-test-echo-trailing-bin", binary: trailingValue)
    let options = CallOptions(metadata: metadata)

    let unary = try await channel.unary(Service.unaryCall, simpleRequest(), options: options)
    try checkPayload(unary.message.payload, size: 314_159, "the unary response")
    try checkEcho(unary.initialMetadata, unary.trailingMetadata, initialValue, trailingValue, "unary")

    try await channel.bidirectionalStreaming(Service.fullDuplexCall, options: options) {
      writer, responses in
      try await writer.write(streamingOutput(responseSize: 314_159, payloadSize: 271_828))
      writer.finish()
      var count = 0
      for try await response in responses {
        try checkPayload(response.payload, size: 314_159, "the streaming response")
        count += 1
      }
      try check(count == 1, "\(count) streaming responses, not 1")
      let initial = try await responses.initialMetadata()
      try checkEcho(initial, responses.trailingMetadata ?? Metadata(), initialValue, trailingValue, "streaming")
    }
  }

  func statusCodeAndMessage() async throws {
    let message = "test status message"
    var request = simpleRequest()
    request.responseStatus = echoStatus(2, message)
    try await expectError(.unknown, message: message, "UnaryCall with response_status") {
      _ = try await channel.unary(Service.unaryCall, request)
    }
    try await expectError(.unknown, message: message, "FullDuplexCall with response_status") {
      try await channel.bidirectionalStreaming(Service.fullDuplexCall) { writer, responses in
        var streaming = streamingOutput(responseSize: 1, payloadSize: 1)
        streaming.responseStatus = echoStatus(2, message)
        try await writer.write(streaming)
        writer.finish()
        for try await _ in responses {}
      }
    }
  }

  func specialStatusMessage() async throws {
    let message = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"
    var request = simpleRequest()
    request.responseStatus = echoStatus(2, message)
    try await expectError(.unknown, message: message, "UnaryCall with a special message") {
      _ = try await channel.unary(Service.unaryCall, request)
    }
  }

  func unimplementedMethod() async throws {
    try await expectError(.unimplemented, "TestService/UnimplementedCall") {
      _ = try await channel.unary(Service.unimplementedCall, GRPCTesting.Empty())
    }
  }

  func unimplementedService() async throws {
    try await expectError(.unimplemented, "UnimplementedService/UnimplementedCall") {
      _ = try await channel.unary(
        GRPCTesting.UnimplementedService.unimplementedCall, GRPCTesting.Empty())
    }
  }

  func cancelAfterBegin() async throws {
    // Connect first, so the call's HEADERS are on the wire when it is cancelled and the
    // server sees a RST_STREAM, not a call that never arrived.
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    let started = AsyncStream<Void>.makeStream()
    let call = Task {
      try await channel.clientStreaming(Service.streamingInputCall) { _ in
        started.continuation.yield()
        // Wait, sending nothing, until the task is cancelled.
        try await Task.sleep(for: .seconds(3600))
      }
    }
    for await _ in started.stream { break }
    call.cancel()
    try await expectError(.cancelled, "a client-streaming call cancelled before any message") {
      _ = try await call.value
    }
  }

  func cancelAfterFirstResponse() async throws {
    let call = Task {
      try await channel.bidirectionalStreaming(Service.fullDuplexCall) { writer, responses in
        try await writer.write(streamingOutput(responseSize: 31_415, payloadSize: 27_182))
        var iterator = responses.makeAsyncIterator()
        let first = try await iterator.next()
        try checkPayload(first?.payload, size: 31_415, "the first response")
        withUnsafeCurrentTask { $0?.cancel() }
        // The cancellation resets the stream; the next read reports it.
        _ = try await iterator.next()
        throw InteropFailure("the call went on after its task was cancelled")
      }
    }
    try await expectError(.cancelled, "a full-duplex call cancelled after its first response") {
      try await call.value
    }
  }

  func timeoutOnSleepingServer() async throws {
    try await expectError(.deadlineExceeded, "a 1 ms deadline on a full-duplex call") {
      try await channel.bidirectionalStreaming(
        Service.fullDuplexCall, options: CallOptions(timeout: .milliseconds(1))
      ) { writer, responses in
        // The write itself may already fail with DEADLINE_EXCEEDED; either way the call does.
        try await writer.write(streamingOutput(responseSize: 0, payloadSize: 27_182))
        for try await _ in responses {}
      }
    }
  }

  // MARK: Building and checking messages

  func simpleRequest() -> GRPCTesting.SimpleRequest {
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = 314_159
    request.payload = payload(size: 271_828)
    return request
  }

  func payload(size: Int) -> GRPCTesting.Payload {
    var payload = GRPCTesting.Payload()
    payload.body = [UInt8](repeating: 0, count: size)
    return payload
  }

  func bool(_ value: Bool) -> GRPCTesting.BoolValue {
    var wrapper = GRPCTesting.BoolValue()
    wrapper.value = value
    return wrapper
  }

  func echoStatus(_ code: Int32, _ message: String) -> GRPCTesting.EchoStatus {
    var status = GRPCTesting.EchoStatus()
    status.code = code
    status.message = message
    return status
  }

  func streamingInput(size: Int) -> GRPCTesting.StreamingInputCallRequest {
    var request = GRPCTesting.StreamingInputCallRequest()
    request.payload = payload(size: size)
    return request
  }

  func responseParameters(size: Int, compressed: Bool? = nil) -> GRPCTesting.ResponseParameters {
    var parameters = GRPCTesting.ResponseParameters()
    parameters.size = Int32(size)
    if let compressed { parameters.compressed = bool(compressed) }
    return parameters
  }

  func streamingOutput(responseSize: Int, payloadSize: Int) -> GRPCTesting.StreamingOutputCallRequest {
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = [responseParameters(size: responseSize)]
    request.payload = payload(size: payloadSize)
    return request
  }

  func checkPayload(_ payload: GRPCTesting.Payload?, size: Int, _ what: String) throws {
    guard let payload else { throw InteropFailure("\(what) has no payload") }
    try check(payload.body.count == size, "\(what) has \(payload.body.count) payload bytes, not \(size)")
    try check(payload.body.allSatisfy { $0 == 0 }, "\(what)'s payload is not all zeros")
  }

  func checkEcho(
    _ initial: Metadata, _ trailing: Metadata, _ initialValue: String, _ trailingValue: [UInt8],
    _ what: String
  ) throws {
    try check(
      initial.first("x-grpc-test-echo-initial") == initialValue,
      "\(what): initial metadata echo is \(initial.first("x-grpc-test-echo-initial") ?? "missing")")
    try check(
      trailing.firstBinary("x-grpc-test-echo-trailing-bin") == trailingValue,
      "\(what): trailing metadata echo is \(trailing.firstBinary("x-grpc-test-echo-trailing-bin").map { "\($0)" } ?? "missing")")
  }
}

/// A response and whether it arrived compressed.
struct Flagged<Message: Sendable>: Sendable {
  var message: Message
  var wasCompressed: Bool
}

/// Decodes protobuf responses and keeps each one's compressed flag, for the cases that check it.
struct FlaggedDeserializer<Message: ProtoMessage>: MessageDeserializer {
  func deserialize(_ message: ReceivedMessage) throws -> Flagged<Message> {
    Flagged(message: try Message(serializedBytes: message.bytes), wasCompressed: message.wasCompressed)
  }
}
