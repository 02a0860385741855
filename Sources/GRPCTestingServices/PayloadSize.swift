internal import GRPCWire

/// A payload size a client asked for (`response_size`, `ResponseParameters.size`), checked
/// before anything is allocated: a peer's number becomes a count only through here.
enum PayloadSize {
  /// `requested` as a count; INVALID_ARGUMENT when negative, RESOURCE_EXHAUSTED when above
  /// the server's largest response message (``ServerContext/maxSendMessageSize``).
  static func checked(_ requested: Int32, _ field: String, _ context: ServerContext) throws(RPCError)
    -> Int
  {
    if requested < 0 {
      throw RPCError(code: .invalidArgument, message: "\(field) is \(requested); a size cannot be negative")
    }
    if Int(requested) > context.maxSendMessageSize {
      throw RPCError(
        code: .resourceExhausted,
        message: "\(field) \(requested) is larger than the server's response limit of \(context.maxSendMessageSize) bytes")
    }
    return Int(requested)
  }
}
