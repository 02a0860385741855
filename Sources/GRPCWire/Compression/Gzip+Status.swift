extension Gzip {
  /// Inflates a received gzip message of either role (`what`: "request" or "response"),
  /// failing the call as gRPC asks: RESOURCE_EXHAUSTED past `limit` — as an uncompressed
  /// message over the limit would — and INTERNAL for data that is not gzip. `limitOwner`
  /// names whose limit it is in the message ("the server's limit", "the limit").
  static func inflateMessage(
    _ payload: [UInt8], limit: Int, what: String, limitOwner: String
  ) throws(RPCError) -> [UInt8] {
    do {
      return try decompress(payload, limit: limit)
    } catch {
      switch error {
      case .tooLarge(let limit):
        throw RPCError(
          code: .resourceExhausted,
          message: "a compressed \(what) inflates past \(limitOwner) of \(limit) bytes")
      case .corrupt(let reason):
        throw RPCError(code: .internalError, message: "a gzip \(what) message is corrupt: \(reason)")
      }
    }
  }
}
