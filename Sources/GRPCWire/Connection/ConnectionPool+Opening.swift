internal import Logging

/// Opening connections: name resolution off the loop, TLS from the channel's settings, the
/// proxy's tunnel when there is one, each connection with its own number in the logs.
extension ConnectionPool {
  func openConnection() -> ClientConnection {
    let tls: (context: TLSContext, verifyName: String)?
    let proxy: HTTPProxy?
    let proxyTLS: TLSContext?
    do throws(RPCError) {
      tls = try transportSecurity().get()
      proxy = try self.proxy.get()
      proxyTLS = proxy?.usesTLS == true ? try proxySecurity().get() : nil
    } catch {
      // A configuration that cannot work: every attempt would fail the same way.
      let connection = makeConnection(tls: nil, proxy: nil)
      let bound = LoopBound(connection, on: loop)
      loop.execute { bound.value.resolutionFailed(error) }
      return connection
    }
    let connection = makeConnection(tls: tls, proxy: proxy, proxyTLS: proxyTLS)
    if connectivity != .ready { setState(.connecting) }
    let now = MonotonicInstant.now
    if backoff == nil { backoff = ConnectionBackoff(options.backoff, now: now) }
    let timeout = backoff!.startAttempt(now: now)
    // Through a proxy, connections go to the proxy; the target's name travels in CONNECT and
    // the proxy resolves it.
    let (host, port) = proxy.map { ($0.host, $0.port) } ?? (self.host, self.port)
    let (loop, index, balancing) = (self.loop, connectionsOpened, options.loadBalancing)
    if let numeric = SocketAddress(numericHost: host, port: port) {
      connection.connect(to: [numeric], timeout: timeout)
    } else {
      // getaddrinfo blocks: keep it off the loop thread, which alone touches the connection.
      let connection = LoopBound(connection, on: loop)
      Task.detached {
        let resolved = SocketAddress.resolve(host: host, port: port)
        loop.execute {
          switch resolved {
          case .success(var addresses):
            // Round-robin spreads connections over the addresses; pick-first keeps DNS order
            // (the later addresses are the fallbacks).
            if balancing == .roundRobin, !addresses.isEmpty {
              let shift = index % addresses.count
              addresses = Array(addresses[shift...] + addresses[..<shift])
            }
            connection.value.connect(to: addresses, timeout: timeout)
          case .failure(let error):
            connection.value.resolutionFailed(error)
          }
        }
      }
    }
    return connection
  }

  func makeConnection(
    tls: (context: TLSContext, verifyName: String)?, proxy: HTTPProxy?,
    proxyTLS: TLSContext? = nil
  ) -> ClientConnection {
    let userAgent = [options.userAgentPrefix, "grpc-swift-fleetconsumer/\(GRPCChannel.version)"]
      .compactMap { $0 }.joined(separator: " ")
    let connection = ClientConnection(
      loop: loop, target: target,
      settings: HTTP2Settings(
        streamWindow: Int32(clamping: options.streamWindow),
        connectionWindow: Int32(clamping: options.connectionWindow)),
      tls: tls,
      tunnel: proxy.map { ConnectExchange(proxy: $0, host: host, port: port, userAgent: userAgent) },
      proxyTLS: proxyTLS,
      keepalive: options.keepalive,
      allowInsecureCredentials: options.allowInsecureCredentials,
      logger: connectionLogger(connectionsOpened + 1))
    connection.pool = self
    connections.append(connection)
    connectionsOpened += 1
    return connection
  }

  func connectionLogger(_ number: Int) -> Logger {
    var logger = self.logger
    logger[metadataKey: "grpc.connection"] = "\(number)"
    return logger
  }

  func transportSecurity() -> Result<(context: TLSContext, verifyName: String)?, RPCError> {
    guard case .tls(let configuration) = options.transportSecurity else { return .success(nil) }
    if tlsContext == nil {
      tlsContext = Result { () throws(RPCError) in try TLSContext(configuration) }
    }
    return tlsContext!.map { ($0, configuration.serverHostnameOverride ?? host) }
  }

  /// The TLS context of an `https://` proxy: ``ChannelOptions/proxyTrustRoots``, else the
  /// channel's trust roots, else the system's; no ALPN. Made once.
  func proxySecurity() -> Result<TLSContext, RPCError> {
    if let proxyTLSContext { return proxyTLSContext }
    var roots = TLSConfiguration.TrustRoots.system
    if case .tls(let configuration) = options.transportSecurity { roots = configuration.trustRoots }
    let made = Result { () throws(RPCError) in
      try TLSContext(TLSConfiguration(trustRoots: options.proxyTrustRoots ?? roots), offersH2: false)
    }
    proxyTLSContext = made
    return made
  }
}
