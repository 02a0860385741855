import Foundation
import GRPCWire
import Testing

/// The error value itself: NSError bridging in the io.grpc domain, the local constructors,
/// and what its description may and may not show. (Its category, explanation and the NSError's
/// recovery suggestion are FleetConsumer's: FleetConsumerTests' ErrorTaxonomyTests.)
@Suite("RPCError")
struct RPCErrorTests {
  @Test("bridges to NSError in domain io.grpc with the wire number", arguments: StatusCode.allCases)
  func nsError(_ code: StatusCode) {
    let error: any Error = RPCError(code: code, message: "it failed")
    let nsError = error as NSError
    #expect(nsError.domain == "io.grpc")
    #expect(nsError.code == code.rawValue)
    #expect(nsError.userInfo[NSLocalizedDescriptionKey] as? String == "\(code.name): it failed")
    #expect(nsError.localizedDescription == "\(code.name): it failed")
  }

  @Test("the consumer SDK's documented check works unchanged")
  func consumerSDKCheck() {
    let error: (any Error)? = RPCError(code: .permissionDenied, message: "wrong trip")
    var gRPCErrorCode: Int?
    if let error = error as NSError?, error.domain == "io.grpc" {
      gRPCErrorCode = error.code
    }
    #expect(gRPCErrorCode == 7)
  }

  @Test("a cause becomes the NSError's underlying error")
  func underlyingError() {
    let cause = RPCError(code: .internalError, message: "inner")
    let error = RPCError(code: .unavailable, message: "outer", cause: cause)
    let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
    #expect(underlying?.domain == "io.grpc")
    #expect(underlying?.code == 13)
  }

  @Test("an interrupted connection is UNAVAILABLE and says so")
  func interrupted() {
    let error = RPCError.interrupted("the peer reset the connection")
    #expect(error.code == .unavailable)
    #expect(error.isInterrupted)
    #expect(
      error.message == "connection interrupted during the call: the peer reset the connection")
    #expect(RPCError.interrupted("").message == "connection interrupted during the call")
    // A server's own UNAVAILABLE is not an interruption.
    #expect(!RPCError(code: .unavailable, message: "down").isInterrupted)
    // Relabelled, it stays an interruption.
    var relabelled = error
    relabelled.code = .internalError
    #expect(relabelled.isInterrupted)
  }

  @Test(
    "a non-gRPC HTTP response keeps its status and maps its code",
    arguments: [
      (503, StatusCode.unavailable), (401, .unauthenticated), (404, .unimplemented),
      (200, .unknown), (400, .internalError),
    ])
  func fromHTTP(_ httpStatus: Int, _ code: StatusCode) {
    let error = RPCError.fromHTTP(
      status: httpStatus, message: "content-type text/html", metadata: ["server": "proxy"])
    #expect(error.code == code)
    #expect(error.httpStatus == httpStatus)
    #expect(error.message.contains("HTTP \(httpStatus)"))
    #expect(error.message.hasSuffix("content-type text/html"))
    #expect(error.metadata.first("server") == "proxy")
    #expect(error.description.contains("(HTTP \(httpStatus))"))
  }

  @Test("invalid metadata fails the call as INTERNAL naming the key, not the value")
  func invalidMetadata() throws {
    var metadata = Metadata()
    metadata.add("authorization", "Bearer secret-token\r\n")
    let problem = try #require(throws: MetadataError.self) { try metadata.validate() }
    let error = RPCError.invalidMetadata(problem)
    #expect(error.code == .internalError)
    #expect(error.message.contains("authorization"))
    #expect(!error.description.contains("secret"))
    #expect((error.cause as? MetadataError) == problem)
  }

  @Test("description shows code, message and cause but never metadata")
  func description() {
    var metadata = Metadata()
    metadata.add("authorization", "Bearer secret-token")
    metadata.add("x-debug", "also-not-shown")
    let error = RPCError(
      code: .unauthenticated, message: "token expired", metadata: metadata,
      cause: RPCError(code: .internalError, message: "inner"))
    #expect(error.description == "UNAUTHENTICATED: token expired (cause: INTERNAL: inner)")
    #expect(RPCError(code: .cancelled, message: "").description == "CANCELLED")
  }

  @Test("equality compares everything but the cause")
  func equality() {
    let a = RPCError(code: .aborted, message: "m", cause: RPCError(code: .unknown, message: "1"))
    let b = RPCError(code: .aborted, message: "m", cause: RPCError(code: .unknown, message: "2"))
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a != RPCError(code: .aborted, message: "n"))
    #expect(a != RPCError.interrupted("m"))
    #expect(Set([a, b]).count == 1)
  }
}
