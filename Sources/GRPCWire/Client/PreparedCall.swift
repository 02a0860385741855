/// A call's request fields and options, checked and laid out once
/// (``GRPCChannel/prepare(path:options:kind:)``) for calls that repeat them: a poller calls
/// with the same fields until its credentials change.
///
/// Holds what the stream needs and no more (not the options' metadata, which `headers`
/// already carries): a poller keeps one per resource it polls. A timeout in the options is
/// each call's own, counted from its start. Immutable; share it between calls and threads.
public struct PreparedCall: Sendable {
  let headerPrefix: RequestHeaderPrefix
  let headers: [HeaderField]
  let timeout: Duration?
  let maxReceiveSize: Int
  /// The largest request message payload (``CallOptions/maxSendMessageSize``); `.max`: none.
  let maxSendSize: Int
  let waitForReady: Bool
  let carriesCredentials: Bool
  /// Whether the call's request is compressed: its options' compression after the service
  /// config and the loop interceptors' ``LoopClientInterceptor/prepare(_:)`` (the
  /// `grpc-encoding` field says the same).
  let compresses: Bool
  /// What a loop-driven call needs to run its interceptors; nil when there are none.
  let interception: Interception?

  /// This call with its own fields laid out after the method's, once: for a call made again
  /// and again (a poll), whose fields are then not laid out on each call.
  public func laidOut() -> PreparedCall {
    guard !headers.isEmpty else { return self }
    return PreparedCall(
      headerPrefix: RequestHeaderPrefix(headerPrefix, then: headers), headers: [],
      timeout: timeout, maxReceiveSize: maxReceiveSize, maxSendSize: maxSendSize,
      waitForReady: waitForReady, carriesCredentials: carriesCredentials,
      compresses: compresses, interception: interception)
  }
}
