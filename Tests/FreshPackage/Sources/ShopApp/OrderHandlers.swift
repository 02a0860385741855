import GRPCWire
import ShopProtos

/// `acme.shop.v1.OrderService` served through the generated `ServiceProtocol`: every request
/// is checked against `Samples` (a difference fails the call with INVALID_ARGUMENT naming the
/// field values), every response is the sample the client expects.
struct OrderHandlers: Shop.OrderService.ServiceProtocol {
  func placeOrder(_ request: Shop.Order, context: ServerContext) async throws -> Shop.Order {
    try checked("PlaceOrder request", request, Samples.order(Samples.placeRequest))
    return Samples.order(Samples.placeResponse)
  }

  func listOrders(
    _ request: Shop.OrderQuery, responses: ResponseWriter<Shop.Order>, context: ServerContext
  ) async throws {
    try checked("ListOrders request", request, Samples.query)
    for n in Samples.listed { try await responses.write(Samples.order(n)) }
  }

  func uploadOrders(
    _ requests: RequestStream<Shop.Order>, context: ServerContext
  ) async throws -> Shop.OrderSummary {
    var received: [Shop.Order] = []
    for try await order in requests { received.append(order) }
    try checked("UploadOrders requests", received, Samples.uploaded.map(Samples.order))
    return Samples.summary(of: received)
  }

  func trackOrders(
    _ requests: RequestStream<Shop.Order>, responses: ResponseWriter<Shop.Order>,
    context: ServerContext
  ) async throws {
    var expected = Samples.tracked.makeIterator()
    for try await order in requests {
      guard let n = expected.next() else {
        throw RPCError(code: .invalidArgument, message: "TrackOrders: more requests than sent")
      }
      try checked("TrackOrders request \(n)", order, Samples.order(n))
      try await responses.write(Samples.order(n + Samples.trackAnswerOffset))
    }
    guard expected.next() == nil else {
      throw RPCError(code: .invalidArgument, message: "TrackOrders: fewer requests than sent")
    }
  }

  /// `Mismatch.check` as the call's status: INVALID_ARGUMENT with both values.
  private func checked<M: Equatable>(_ what: String, _ received: M, _ expected: M) throws {
    do {
      try Mismatch.check(what, received, expected)
    } catch {
      throw RPCError(code: .invalidArgument, message: error.description)
    }
  }
}
