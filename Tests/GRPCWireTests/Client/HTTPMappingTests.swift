import Foundation
import GRPCWire
import PeerSupport
import Testing

/// Responses that are plain HTTP, not gRPC (what a proxy or load balancer sends): raw_h2_server's
/// `http_<code>` answers `:status <code>`, `content-type: text/plain` and a text body, without
/// `grpc-status`, so the code comes from gRPC's doc/http-grpc-status-mapping.md.
@Suite("HTTP statuses without grpc-status", .suitePeers("raw_h2_server.py"))
struct HTTPMappingTests {
  // doc/http-grpc-status-mapping.md, row for row.
  static let mapping: [(Int, StatusCode)] = [
    (400, .internalError),
    (401, .unauthenticated),
    (403, .permissionDenied),
    (404, .unimplemented),
    (429, .unavailable),
    (500, .unknown),
    (502, .unavailable),
    (503, .unavailable),
    (504, .unavailable),
  ]

  @Test(
    "an HTTP error status maps to the spec's gRPC code, keeps the HTTP status and names it",
    .timeLimit(.minutes(1)), arguments: mapping)
  func httpStatus(_ status: Int, _ code: StatusCode) async throws {
    let raw = try SuitePeers.peer("raw_h2_server.py")
    let id = "http_\(status)-\(UUID().uuidString.prefix(8))"

    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await raw.channel.scenario("http_\(status)", caseID: id)
      })
    #expect(error.code == code, "\(error)")
    #expect(error.httpStatus == status, "\(error)")
    #expect(error.message.contains("HTTP \(status)"), "\(error.message)")
    #expect(!error.isInterrupted)

    // A stream-level failure: the connection serves the next call.
    let echo = try await raw.channel.scenario("ok_echo", caseID: "\(id)-next")
    #expect(echo.message == Array("ping".utf8))
  }
}
