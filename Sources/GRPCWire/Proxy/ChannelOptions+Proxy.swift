internal import Glibc

extension ChannelOptions {
  /// Whether a channel reaches its target through an HTTP CONNECT proxy.
  public enum Proxy: Sendable, Hashable {
    /// Straight to the target, whatever the environment says.
    case none
    /// As gRPC's C-core does: the first set of `grpc_proxy`, `https_proxy`, `http_proxy`
    /// (each in lower case, then upper case), unless `no_grpc_proxy` or `no_proxy` (or
    /// `NO_PROXY`) exempts the target (``NoProxyList``); loopback targets are not exempt
    /// unless named there. Read when the channel is made.
    case environment
    /// Through this proxy (`http://[user:password@]host[:port]`, or `https://` for TLS to the
    /// proxy), for every target.
    case url(String)
  }
}

/// Which proxy, if any, a channel's connections go through: ``ChannelOptions/Proxy`` applied
/// to a target and an environment.
enum ProxyRoute {
  /// The variables read, in the C-core's order: the first one set (and not empty) wins.
  static let proxyVariables = [
    "grpc_proxy", "GRPC_PROXY", "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY",
  ]
  static let noProxyVariables = ["no_grpc_proxy", "NO_GRPC_PROXY", "no_proxy", "NO_PROXY"]

  /// The proxy for `host:port`; nil for a direct connection. Throws INVALID_ARGUMENT naming
  /// the option or the variable when its URL is unusable. `environment` gives a variable's
  /// value (the process's environment by default).
  static func proxy(
    _ option: ChannelOptions.Proxy, host: String, port: Int,
    environment: (String) -> String? = ProxyRoute.processEnvironment
  ) throws(RPCError) -> HTTPProxy? {
    switch option {
    case .none:
      return nil
    case .url(let url):
      return try HTTPProxy(url)
    case .environment:
      func firstSet(_ names: [String]) -> (name: String, value: String)? {
        for name in names {
          if let value = environment(name), !value.isEmpty { return (name, value) }
        }
        return nil
      }
      guard let (name, value) = firstSet(proxyVariables) else { return nil }
      if let exempt = firstSet(noProxyVariables),
        NoProxyList(exempt.value).matches(host: host, port: port)
      {
        return nil
      }
      return try HTTPProxy(value, field: "the environment variable \(name)")
    }
  }

  /// The process's environment variable `name`.
  static func processEnvironment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }
}
