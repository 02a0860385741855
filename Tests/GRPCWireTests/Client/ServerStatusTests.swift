import Foundation
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// Statuses a real server sends — grpcio's C-core through interop_server.py — arrive as
/// ``RPCError``s with the code, name and message it sent, Google's
/// `google.rpc.Status` details decoded, and the `io.grpc` NSError bridge; malformed details
/// from raw_h2_server.py never cost the wire status.
@Suite(
  "Server statuses from grpcio", .suitePeers("interop_server.py", "raw_h2_server.py"),
  .timeLimit(.minutes(2)))
struct ServerStatusTests {
  static let interop = "interop_server.py"
  static let options = CallOptions(timeout: .seconds(10))

  /// A status the server is asked to send, and what the client must make of it.
  struct SentStatus: Sendable, CustomTestStringConvertible {
    let number: Int32
    let name: String
    let message: String

    var testDescription: String { "\(number) \(name): \(String(reflecting: message))" }
  }

  // Names spelled out here, not read from StatusCode, so the check is not circular. (What a
  // code means to a trip follower, its category, is FleetConsumer's: ErrorTaxonomyTests.)
  static let statuses: [SentStatus] = [
    SentStatus(number: 1, name: "CANCELLED", message: "cancelled"),
    SentStatus(number: 2, name: "UNKNOWN", message: "unknown"),
    SentStatus(number: 3, name: "INVALID_ARGUMENT", message: "bad trip name"),
    SentStatus(number: 4, name: "DEADLINE_EXCEEDED", message: "late"),
    SentStatus(number: 5, name: "NOT_FOUND", message: "no such trip"),
    SentStatus(number: 6, name: "ALREADY_EXISTS", message: "exists"),
    SentStatus(number: 7, name: "PERMISSION_DENIED", message: "wrong role"),
    SentStatus(number: 8, name: "RESOURCE_EXHAUSTED", message: "quota"),
    SentStatus(number: 9, name: "FAILED_PRECONDITION", message: "state"),
    SentStatus(number: 10, name: "ABORTED", message: "conflict"),
    SentStatus(number: 11, name: "OUT_OF_RANGE", message: "past the end"),
    SentStatus(number: 12, name: "UNIMPLEMENTED", message: "not here"),
    SentStatus(number: 13, name: "INTERNAL", message: "invariant broke"),
    SentStatus(number: 14, name: "UNAVAILABLE", message: "down"),
    SentStatus(number: 15, name: "DATA_LOSS", message: "lost"),
    SentStatus(number: 16, name: "UNAUTHENTICATED", message: "JWT expired"),
    // Non-ASCII: travels as percent-encoded UTF-8 in grpc-message.
    SentStatus(
      number: 5, name: "NOT_FOUND", message: "Fahrt „42“ nicht gefunden ☺"),
    // '%', a control character and non-ASCII: all need percent-encoding on the wire.
    SentStatus(
      number: 3, name: "INVALID_ARGUMENT", message: "100% ☺ \n done"),
    // Something that looks percent-encoded must come back literally ("%41" stays "%41").
    SentStatus(
      number: 9, name: "FAILED_PRECONDITION", message: "%41%zz% end"),
  ]

  static func echoStatus(_ sent: SentStatus) -> GRPCTesting.EchoStatus {
    var status = GRPCTesting.EchoStatus()
    status.code = sent.number
    status.message = sent.message
    return status
  }

  func expect(_ error: RPCError, matches sent: SentStatus) {
    #expect(error.code.rawValue == Int(sent.number), "\(error)")
    #expect(error.code.name == sent.name)
    #expect(error.message == sent.message)
    #expect(!error.isInterrupted)
    #expect(error.httpStatus == nil)
    #expect(error.details.isEmpty && error.detailsProblem == nil, "\(error)")
  }

  @Test(
    "a UnaryCall's response_status arrives with its code, name, category and exact message",
    arguments: statuses)
  func unaryStatus(_ sent: SentStatus) async throws {
    let peer = try SuitePeers.peer(Self.interop)
    var request = GRPCTesting.SimpleRequest()
    request.responseStatus = Self.echoStatus(sent)

    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await peer.channel.unary(
          GRPCTesting.TestService.unaryCall, request, options: Self.options)
      })
    expect(error, matches: sent)
  }

  @Test(
    "a StreamingOutputCall's response_status arrives after its messages, exactly as sent",
    arguments: statuses)
  func streamingStatus(_ sent: SentStatus) async throws {
    let peer = try SuitePeers.peer(Self.interop)
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = [Int32(8), 16].map { size in
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = size
      return parameters
    }
    request.responseStatus = Self.echoStatus(sent)

    var sizes: [Int] = []
    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await peer.channel.serverStreaming(
          GRPCTesting.TestService.streamingOutputCall, request, options: Self.options
        ) { responses in
          for try await response in responses {
            sizes.append(response.payload?.body.count ?? -1)
          }
        }
      })
    #expect(sizes == [8, 16], "the messages come before the status")
    expect(error, matches: sent)
  }

  @Test(
    "grpcio-status's google.rpc.Status decodes into ErrorInfo, RetryInfo and BadRequest",
    arguments: [StatusCode.invalidArgument, .resourceExhausted, .unavailable])
  func richStatus(_ code: StatusCode) async throws {
    let peer = try SuitePeers.peer(Self.interop)
    var metadata = Metadata()
    metadata.add("x-fleet-test-rich-status", String(code.rawValue))

    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await peer.channel.unary(
          GRPCTesting.TestService.unaryCall, GRPCTesting.SimpleRequest(),
          options: CallOptions(timeout: .seconds(10), metadata: metadata))
      })
    // The values interop_server.py's rich_status() puts there.
    #expect(error.code == code)
    #expect(error.message == "rich status from the interop server")
    #expect(error.detailsProblem == nil, "\(error)")
    #expect(error.details.count == 3, "\(error.details)")

    let info = try #require(error.errorInfo, "\(error.details)")
    #expect(info.reason == "FLEET_TEST_REASON")
    #expect(info.domain == "fleet.test")
    #expect(info.metadata == ["hook": "rich-status"])

    #expect(error.retryInfo != nil)
    #expect(error.retryDelay == .milliseconds(1500))

    let badRequest = try #require(error.badRequest, "\(error.details)")
    #expect(badRequest.fieldViolations.count == 1)
    let violation = try #require(badRequest.fieldViolations.first)
    #expect(violation.field == "trip.name")
    #expect(violation.description == "must look like providers/{provider}/trips/{trip}")

    // Passed on unchanged: the bytes grpcio sent, with the wire's code.
    let status = error.status
    #expect(status.code == code)
    #expect(status.detailsBytes?.isEmpty == false)
  }

  @Test(
    "an error from the server bridges to NSError with domain io.grpc and the wire number",
    arguments: 1...16)
  func nsErrorBridge(_ number: Int) async throws {
    let peer = try SuitePeers.peer(Self.interop)
    var request = GRPCTesting.SimpleRequest()
    var status = GRPCTesting.EchoStatus()
    status.code = Int32(number)
    status.message = "status \(number) for NSError"
    request.responseStatus = status

    do {
      _ = try await peer.channel.unary(
        GRPCTesting.TestService.unaryCall, request, options: Self.options)
      Issue.record("status \(number) should have failed the call")
    } catch {
      // As integrators do it: from `any Error`, no cast to RPCError first.
      let bridged = error as NSError
      #expect(bridged.domain == "io.grpc")
      #expect(bridged.code == number)
      #expect(bridged.localizedDescription.contains("status \(number) for NSError"))
    }
  }

  static let malformedDetailScenarios: [(String, StatusCode, String, String)] = [
    ("details_bad_base64", .invalidArgument, "bad details", "base64"),
    ("details_bad_protobuf", .invalidArgument, "bad details", "google.rpc.Status"),
    ("details_code_mismatch", .notFound, "not found", "INVALID_ARGUMENT"),
  ]

  @Test(
    "malformed grpc-status-details-bin keeps the wire status and reports the details unusable",
    arguments: malformedDetailScenarios)
  func malformedDetails(
    _ scenario: String, _ code: StatusCode, _ message: String, _ problemMentions: String
  ) async throws {
    let raw = try SuitePeers.peer("raw_h2_server.py")
    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await raw.channel.scenario(scenario, caseID: "\(scenario)-\(UUID().uuidString)")
      })
    #expect(error.code == code, "\(error)")
    #expect(error.message == message)
    #expect(error.details.isEmpty, "\(error.details)")
    let problem = try #require(error.detailsProblem, "\(error)")
    #expect(problem.contains(problemMentions), "\(problem)")
  }
}
