import GRPCWire
import ShopProtos

/// Calls every RPC of `acme.shop.v1.OrderService` through the generated `Client`, sending
/// `Samples` and checking each response against them; prints `PASSED <rpc>` per call.
struct OrderCalls {
  let client: Shop.OrderService.Client

  func run() async throws {
    let placed = try await client.placeOrder(Samples.order(Samples.placeRequest))
    try Mismatch.check("PlaceOrder response", placed.message, Samples.order(Samples.placeResponse))
    print("PASSED PlaceOrder")

    let listed = try await client.listOrders(Samples.query) { responses in
      var orders: [Shop.Order] = []
      for try await order in responses { orders.append(order) }
      return orders
    }
    try Mismatch.check("ListOrders responses", listed, Samples.listed.map(Samples.order))
    print("PASSED ListOrders")

    let uploaded = Samples.uploaded.map(Samples.order)
    let summary = try await client.uploadOrders { requests in
      for order in uploaded { try await requests.write(order) }
    }
    try Mismatch.check("UploadOrders response", summary.message, Samples.summary(of: uploaded))
    print("PASSED UploadOrders")

    // Ping-pong: each answer is read before the next request goes, so the server's replies
    // to a stream still open are what is checked.
    let answers = try await client.trackOrders { requests, responses in
      var answers: [Shop.Order] = []
      var iterator = responses.makeAsyncIterator()
      for n in Samples.tracked {
        try await requests.write(Samples.order(n))
        guard let answer = try await iterator.next() else { break }
        answers.append(answer)
      }
      requests.finish()
      while let extra = try await iterator.next() { answers.append(extra) }
      return answers
    }
    try Mismatch.check(
      "TrackOrders responses", answers,
      Samples.tracked.map { Samples.order($0 + Samples.trackAnswerOffset) })
    print("PASSED TrackOrders")
  }
}
