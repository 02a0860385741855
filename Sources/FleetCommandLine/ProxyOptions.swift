public import ArgumentParser
public import GRPCWire

/// `--proxy URL` and `--no-proxy`, shared by the client tools through `@OptionGroup`: the HTTP
/// CONNECT proxy to go through. Without either, the environment's (`https_proxy` and friends,
/// `no_proxy`), as gRPC's C-core reads it.
public struct ProxyOptions: ParsableArguments, Sendable {
  @Option(
    name: .customLong("proxy"),
    help: ArgumentHelp(
      "Connect through this HTTP CONNECT proxy (http://[user:password@]host:port, or "
        + "https:// for TLS to the proxy; the password is never printed), whatever the "
        + "environment says.",
      valueName: "url"))
  public var url: String?

  @Flag(
    name: .customLong("no-proxy"),
    help: "Connect directly, ignoring grpc_proxy, https_proxy and http_proxy.")
  public var noProxy = false

  public init() {}

  public func validate() throws {
    guard let url else { return }
    guard !noProxy else { throw ValidationError("--proxy and --no-proxy exclude each other") }
    do {
      _ = try HTTPProxy(url, field: "--proxy")
    } catch {
      throw ValidationError(error.message)
    }
  }

  /// The channel's proxy setting these flags ask for.
  public var proxy: ChannelOptions.Proxy {
    if noProxy { return .none }
    return url.map { .url($0) } ?? .environment
  }
}
