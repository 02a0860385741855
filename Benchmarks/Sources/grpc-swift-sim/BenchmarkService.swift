import BenchmarkProtos
import Foundation
import GRPCCore

/// grpc.testing.BenchmarkService as gRPC's own benchmark servers implement it: each response
/// carries a payload of the request's `response_size` zero bytes.
struct BenchmarkService: Grpc_Testing_BenchmarkService.SimpleServiceProtocol {
  private static func response(to request: Grpc_Testing_SimpleRequest)
    -> Grpc_Testing_SimpleResponse
  {
    var response = Grpc_Testing_SimpleResponse()
    response.payload.body = Data(count: Int(max(request.responseSize, 0)))
    return response
  }

  func unaryCall(
    request: Grpc_Testing_SimpleRequest, context: ServerContext
  ) async throws -> Grpc_Testing_SimpleResponse { Self.response(to: request) }

  func streamingCall(
    request: RPCAsyncSequence<Grpc_Testing_SimpleRequest, any Error>,
    response: RPCWriter<Grpc_Testing_SimpleResponse>, context: ServerContext
  ) async throws {
    for try await message in request { try await response.write(Self.response(to: message)) }
  }

  func streamingFromClient(
    request: RPCAsyncSequence<Grpc_Testing_SimpleRequest, any Error>, context: ServerContext
  ) async throws -> Grpc_Testing_SimpleResponse {
    var last = Grpc_Testing_SimpleRequest()
    for try await message in request { last = message }
    return Self.response(to: last)
  }

  /// Sends the same response until the client cancels (the write then throws, or the task is
  /// cancelled).
  func streamingFromServer(
    request: Grpc_Testing_SimpleRequest, response: RPCWriter<Grpc_Testing_SimpleResponse>,
    context: ServerContext
  ) async throws {
    let message = Self.response(to: request)
    while !Task.isCancelled { try await response.write(message) }
  }

  func streamingBothWays(
    request: RPCAsyncSequence<Grpc_Testing_SimpleRequest, any Error>,
    response: RPCWriter<Grpc_Testing_SimpleResponse>, context: ServerContext
  ) async throws {
    for try await message in request { try await response.write(Self.response(to: message)) }
  }
}
