import GRPCTestingProtos
import GRPCWire

/// The interop cases of gRPC's interop-test-descriptions.md that a plaintext client runs.
/// Each checks what the description says, not only that a call returned.
enum InteropCase: String, CaseIterable {
  case emptyUnary = "empty_unary"
  case largeUnary = "large_unary"
  case clientCompressedUnary = "client_compressed_unary"
  case serverCompressedUnary = "server_compressed_unary"
  case clientStreaming = "client_streaming"
  case clientCompressedStreaming = "client_compressed_streaming"
  case serverStreaming = "server_streaming"
  case serverCompressedStreaming = "server_compressed_streaming"
  case pingPong = "ping_pong"
  case emptyStream = "empty_stream"
  case customMetadata = "custom_metadata"
  case statusCodeAndMessage = "status_code_and_message"
  case specialStatusMessage = "special_status_message"
  case unimplementedMethod = "unimplemented_method"
  case unimplementedService = "unimplemented_service"
  case cancelAfterBegin = "cancel_after_begin"
  case cancelAfterFirstResponse = "cancel_after_first_response"
  case timeoutOnSleepingServer = "timeout_on_sleeping_server"
  case rpcSoak = "rpc_soak"
  case channelSoak = "channel_soak"
  case maxConcurrentStreamsConnectionScaling = "max_concurrent_streams_connection_scaling"

  static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }

  /// Runs the case on `channel`; channel_soak makes a channel per iteration with
  /// `makeChannel`, and both soak cases follow `soak`.
  func run(
    on channel: GRPCChannel, soak: SoakSettings, makeChannel: () -> GRPCChannel
  ) async throws {
    let cases = InteropCases(channel: channel)
    switch self {
    case .emptyUnary: try await cases.emptyUnary()
    case .largeUnary: try await cases.largeUnary()
    case .clientCompressedUnary: try await cases.clientCompressedUnary()
    case .serverCompressedUnary: try await cases.serverCompressedUnary()
    case .clientStreaming: try await cases.clientStreaming()
    case .clientCompressedStreaming: try await cases.clientCompressedStreaming()
    case .serverStreaming: try await cases.serverStreaming()
    case .serverCompressedStreaming: try await cases.serverCompressedStreaming()
    case .pingPong: try await cases.pingPong()
    case .emptyStream: try await cases.emptyStream()
    case .customMetadata: try await cases.customMetadata()
    case .statusCodeAndMessage: try await cases.statusCodeAndMessage()
    case .specialStatusMessage: try await cases.specialStatusMessage()
    case .unimplementedMethod: try await cases.unimplementedMethod()
    case .unimplementedService: try await cases.unimplementedService()
    case .cancelAfterBegin: try await cases.cancelAfterBegin()
    case .cancelAfterFirstResponse: try await cases.cancelAfterFirstResponse()
    case .timeoutOnSleepingServer: try await cases.timeoutOnSleepingServer()
    case .rpcSoak: try await cases.rpcSoak(soak)
    case .channelSoak: try await cases.channelSoak(soak, makeChannel: makeChannel)
    case .maxConcurrentStreamsConnectionScaling:
      try await cases.maxConcurrentStreamsConnectionScaling()
    }
  }
}

/// A failed check: what was expected and what happened.
struct InteropFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
  if !condition { throw InteropFailure(what()) }
}

/// Runs `body` and requires it to fail with `code` (and `message`, when given).
func expectError(
  _ code: StatusCode, message: String? = nil, _ what: String, _ body: () async throws -> Void
) async throws {
  do {
    try await body()
  } catch let error as RPCError {
    try check(error.code == code, "\(what): expected \(code), got \(error.code): \(error.message)")
    if let message {
      try check(
        error.message == message,
        "\(what): expected message \(message.debugDescription), got \(error.message.debugDescription)")
    }
    return
  }
  throw InteropFailure("\(what): expected \(code), but the call succeeded")
}
