extension ServiceConfig.MethodConfig {
  /// `options` with this config's settings where the call has none of its own: the shorter of
  /// the two timeouts, wait-for-ready when the config asks for it, the config's response and
  /// request size limits unless the call sets its own.
  func applied(to options: CallOptions) -> CallOptions {
    var options = options
    if let timeout {
      options.timeout = options.timeout.map { min($0, timeout) } ?? timeout
    }
    // CallOptions.waitForReady is a Bool (false by default): a call cannot tell "not set" from
    // "off", so a config's `true` turns it on and its `false` changes nothing.
    if waitForReady == true { options.waitForReady = true }
    if options.maxReceiveMessageSize == nil, let maxResponseMessageBytes {
      options.maxReceiveMessageSize = maxResponseMessageBytes
    }
    if options.maxSendMessageSize == nil, let maxRequestMessageBytes {
      options.maxSendMessageSize = maxRequestMessageBytes
    }
    return options
  }
}
