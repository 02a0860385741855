import FleetConsumer
import Foundation
import Testing

/// What FleetConsumer adds to GRPCWire's errors for a trip follower: who recovers (category),
/// and what to do (explanation, also the recovery suggestion of the io.grpc NSError).
@Suite("The io.grpc error taxonomy")
struct ErrorTaxonomyTests {
  // code, category (Fleet Engine's consumer documentation; spelled out here, not read from
  // StatusCode, so the check is not circular).
  static let categories: [(StatusCode, RPCError.Category)] = [
    (.ok, .other),
    (.cancelled, .serverOrNetwork),
    (.unknown, .other),
    (.invalidArgument, .client),
    (.deadlineExceeded, .serverOrNetwork),
    (.notFound, .client),
    (.alreadyExists, .other),
    (.permissionDenied, .client),
    (.resourceExhausted, .client),
    (.failedPrecondition, .other),
    (.aborted, .serverOrNetwork),
    (.outOfRange, .other),
    (.unimplemented, .other),
    (.internalError, .other),
    (.unavailable, .serverOrNetwork),
    (.dataLoss, .other),
    (.unauthenticated, .client),
  ]

  @Test("each code has its category and an explanation", arguments: categories)
  func codeRow(_ code: StatusCode, _ category: RPCError.Category) {
    #expect(code.category == category)
    #expect(!code.explanation.isEmpty)
  }

  @Test("the table covers all 17 codes")
  func tableIsComplete() {
    #expect(Set(Self.categories.map(\.0)) == Set(StatusCode.allCases))
  }

  @Test(
    "the NSError's recovery suggestion is the code's explanation", arguments: StatusCode.allCases)
  func recoverySuggestion(_ code: StatusCode) {
    let error: any Error = RPCError(code: code, message: "it failed")
    let nsError = error as NSError
    #expect(nsError.domain == "io.grpc")
    #expect(nsError.code == code.rawValue)
    #expect(nsError.localizedDescription == "\(code.name): it failed")
    #expect(nsError.userInfo[NSLocalizedRecoverySuggestionErrorKey] as? String == code.explanation)
    #expect(nsError.localizedRecoverySuggestion == code.explanation)
  }

  @Test("an error's category is its code's", arguments: StatusCode.allCases)
  func category(_ code: StatusCode) {
    #expect(RPCError(code: code, message: "").category == code.category)
  }

  @Test("an interrupted connection is a server-or-network error, whatever its code")
  func interrupted() {
    let error = RPCError.interrupted("the peer reset the connection")
    #expect(error.category == .serverOrNetwork)
    // A server's own UNAVAILABLE is server-or-network by its code alone.
    #expect(RPCError(code: .unavailable, message: "down").category == .serverOrNetwork)
    // Interrupted wins over whatever the code says.
    var relabelled = error
    relabelled.code = .internalError
    #expect(relabelled.category == .serverOrNetwork)
  }

  @Test("explanations carry the advice of Fleet Engine's consumer error table")
  func explanations() {
    #expect(
      StatusCode.invalidArgument.explanation.contains("providers/{provider_id}/trips/{trip_id}"))
    #expect(StatusCode.unauthenticated.explanation.contains("JWT"))
    #expect(StatusCode.unauthenticated.explanation.contains("expired"))
    #expect(StatusCode.unauthenticated.explanation.contains("trip ID"))
    #expect(StatusCode.permissionDenied.explanation.contains("role"))
    #expect(StatusCode.permissionDenied.explanation.contains("another trip ID"))
    #expect(StatusCode.permissionDenied.explanation.contains("not enabled"))
    #expect(StatusCode.resourceExhausted.explanation.contains("quota"))
    #expect(StatusCode.resourceExhausted.explanation.contains("rate limit"))
    #expect(StatusCode.notFound.explanation.contains("never created"))
    // One or two sentences each, short enough for a log line.
    for code in StatusCode.allCases {
      let sentences = code.explanation.split(separator: ". ").count
      #expect((1...3).contains(sentences), "\(code): \(code.explanation)")
      #expect(code.explanation.count < 300, "\(code)")
    }
  }
}
