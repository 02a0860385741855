// The `Client`'s loop-driven variants: per unary and server-streaming RPC, a `startX` beside
// the async `x`, over GRPCChannel's public `startUnary` / `startServerStreaming`.

extension ServiceStubs {
  /// Writes `method`'s loop-driven variant into the `Client` (nothing for the streaming kinds
  /// that have none, or over swift-protobuf's messages, whose descriptors are not
  /// `ProtoMethod`s).
  func loopDriven(_ method: Method, descriptor: String, _ out: inout TextLines) {
    guard messages == .protobufC, let name = method.loopName else { return }
    let rpc = method.path.split(separator: "/").last.map(String.init) ?? method.swiftName
    let (input, output) = (method.input, method.output)
    out.line()
    out.line("    /// Starts `\(rpc)` as a loop-driven call (`GRPCWire.LoopCall`), with no task:")
    out.line("    /// call it on the channel's loop (`channel.eventLoop`; elsewhere it stops the")
    switch method.kind {
    case .unary:
      out.line("    /// process); `completion` runs on that loop once the call is over, with the")
      out.line("    /// response or the call's `RPCError`.")
    default:
      out.line("    /// process); `onMessage` gets each response in order, then `onEnd` the")
      out.line("    /// outcome (nil for OK), all on that loop.")
    }
    out.line("    ///")
    out.line("    /// Throws at once, and starts nothing, when the call cannot be made (a closed")
    out.line("    /// channel, invalid metadata, a deadline already passed, a request over the")
    out.line("    /// send limit); everything after arrives as the call's `RPCError`. Interceptors")
    out.line("    /// that are all `LoopClientInterceptor`s run on the loop and keep the call")
    out.line("    /// task-free; with any other among them it runs in a task, still answered on")
    out.line("    /// the loop.")
    out.line("    \(access) func \(name)(")
    out.line("      _ request: \(input), options: GRPCWire.CallOptions = GRPCWire.CallOptions(),")
    switch method.kind {
    case .unary:
      let result = "Swift.Result<\(output), GRPCWire.RPCError>"
      out.line("      completion: @escaping @Sendable (\(result)) -> Void")
      out.line("    ) throws(GRPCWire.RPCError) -> GRPCWire.LoopCall {")
      out.line("      try channel.startUnary(")
      out.line("        \(descriptor), request, options: options, completion: completion)")
    default:
      out.line("      onMessage: @escaping @Sendable (\(output)) -> Void,")
      out.line("      onEnd: @escaping @Sendable (GRPCWire.RPCError?) -> Void")
      out.line("    ) throws(GRPCWire.RPCError) -> GRPCWire.LoopCall {")
      out.line("      try channel.startServerStreaming(")
      out.line(
        "        \(descriptor), request, options: options, onMessage: onMessage, onEnd: onEnd)")
    }
    out.line("    }")
  }
}
