import Testing

@testable import GRPCWire

/// Proxy URLs, `no_proxy` and the environment, as gRPC's C-core reads them: pure functions,
/// one table row per rule.
@Suite("Proxy configuration")
struct ProxyConfigurationTests {
  // MARK: Proxy URLs

  @Test(
    "a proxy URL gives scheme, host, port and credentials",
    arguments: [
      ("http://proxy.internal:3128", false, "proxy.internal", 3128, nil, nil),
      ("proxy.internal:3128", false, "proxy.internal", 3128, nil, nil),
      ("http://proxy.internal", false, "proxy.internal", 80, nil, nil),
      ("https://proxy.internal", true, "proxy.internal", 443, nil, nil),
      ("HTTP://10.0.0.1:8080/", false, "10.0.0.1", 8080, nil, nil),
      ("http://[::1]:3128", false, "::1", 3128, nil, nil),
      ("http://alice:s3cret@proxy:3128", false, "proxy", 3128, "alice", "s3cret"),
      ("http://alice:p%40ss%3Aword@proxy:3128", false, "proxy", 3128, "alice", "p@ss:word"),
      ("http://alice@proxy:3128", false, "proxy", 3128, "alice", nil),
      ("  http://proxy:3128\n", false, "proxy", 3128, nil, nil),
    ] as [(String, Bool, String, Int, String?, String?)])
  func parses(
    _ url: String, _ tls: Bool, _ host: String, _ port: Int, _ user: String?, _ password: String?
  ) throws {
    let proxy = try HTTPProxy(url)
    #expect(proxy.usesTLS == tls)
    #expect(proxy.host == host)
    #expect(proxy.port == port)
    #expect(proxy.username == user)
    #expect(proxy.password == password)
  }

  @Test(
    "a bad proxy URL is INVALID_ARGUMENT naming the field and what is wrong, never the password",
    arguments: [
      ("", "it is empty"),
      ("socks5://proxy:1080", "scheme 'socks5' is not http or https"),
      ("http://proxy:0", "the port '0' is not within 1...65535"),
      ("http://proxy:99999", "the port '99999' is not within 1...65535"),
      ("http://proxy:port", "the port 'port' is not within 1...65535"),
      ("http://proxy:3128/path", "a proxy URL has no path, query or fragment"),
      ("http://:3128", "it names no host"),
      ("http://[::1:3128", "an IPv6 address lacks its ']'"),
      ("http://::1:3128", "an IPv6 address must be in brackets"),
      ("http://user:pw%zz@proxy:3128", "the user info has a bad percent-escape"),
      ("http://:hunter2@proxy:3128", "the user name is empty"),
      ("http://pro xy:3128", "'pro xy' is not a host name or address"),
    ])
  func rejects(_ url: String, _ why: String) {
    #expect {
      try HTTPProxy(url, field: "https_proxy")
    } throws: { error in
      guard let error = error as? RPCError else { return false }
      return error.code == .invalidArgument && error.message.hasPrefix("https_proxy: ")
        && error.message.hasSuffix(why) && !error.message.contains("hunter2")
    }
  }

  @Test("a proxy's description and Basic credentials: the password shown as ***, sent in Base64")
  func credentials() throws {
    let proxy = try HTTPProxy("http://alice:s3cret@proxy:3128")
    #expect(proxy.description == "http://alice:***@proxy:3128")
    #expect("\(proxy)".contains("s3cret") == false)
    // base64("alice:s3cret"), padded (RFC 7617).
    #expect(proxy.authorization == "Basic YWxpY2U6czNjcmV0")
    #expect(try HTTPProxy("http://ab:c@p:1").authorization == "Basic YWI6Yw==")
    #expect(try HTTPProxy("http://proxy:3128").authorization == nil)
    #expect(HTTPProxy.redacted("http://alice:s3cret@proxy:3128") == "http://alice:***@proxy:3128")
  }

  // MARK: no_proxy

  @Test(
    "no_proxy matches by name, suffix, *, IP address, CIDR range and port",
    arguments: [
      // (no_proxy, host, port, exempt)
      ("example.com", "example.com", 443, true),
      ("example.com", "api.example.com", 443, true),
      ("example.com", "notexample.com", 443, false),
      (".example.com", "api.example.com", 443, true),
      (".example.com", "example.com", 443, true),
      ("*.example.com", "a.b.example.com", 443, true),
      ("EXAMPLE.com", "Api.Example.COM.", 443, true),
      ("other.org, example.com", "example.com", 443, true),
      ("other.org", "example.com", 443, false),
      ("*", "anything.at.all", 1, true),
      ("10.1.2.3", "10.1.2.3", 443, true),
      ("10.1.2.3", "10.1.2.4", 443, false),
      ("10.0.0.0/8", "10.200.3.4", 443, true),
      ("10.0.0.0/8", "11.0.0.1", 443, false),
      ("192.168.1.128/25", "192.168.1.200", 443, true),
      ("192.168.1.128/25", "192.168.1.100", 443, false),
      ("fd00::/8", "fd12::1", 443, true),
      ("fd00::/8", "[fd12::1]", 443, true),
      ("fd00::/8", "fe80::1", 443, false),
      ("10.0.0.0/8", "ten.example", 443, false),
      ("example.com", "10.0.0.1", 443, false),
      ("example.com:443", "example.com", 443, true),
      ("example.com:443", "example.com", 8443, false),
      ("127.0.0.1:50051", "127.0.0.1", 50051, true),
      ("127.0.0.1:50051", "127.0.0.1", 50052, false),
      ("[::1]:443", "::1", 443, true),
      ("[::1]:443", "::1", 444, false),
      // Loopback is not exempt unless named (as in the C-core).
      ("example.com", "127.0.0.1", 443, false),
      ("example.com", "localhost", 443, false),
      ("localhost", "localhost", 443, true),
      ("127.0.0.0/8", "127.0.0.1", 443, true),
      // Entries that are none of the kinds are left out.
      ("10.0.0.0/33, example.com:0, , ...", "10.0.0.1", 443, false),
    ])
  func noProxy(_ list: String, _ host: String, _ port: Int, _ exempt: Bool) {
    #expect(NoProxyList(list).matches(host: host, port: port) == exempt)
  }

  // MARK: The environment

  /// The proxy the environment `variables` gives for `host:port`, as its description.
  private func fromEnvironment(
    _ variables: [String: String], host: String = "fleetengine.googleapis.com", port: Int = 443
  ) throws -> String? {
    try ProxyRoute.proxy(.environment, host: host, port: port) { variables[$0] }?.description
  }

  @Test("the environment in the C-core's order: grpc_proxy, https_proxy, http_proxy, lower case first")
  func environmentOrder() throws {
    let all = [
      "grpc_proxy": "http://g:1", "GRPC_PROXY": "http://G:1", "https_proxy": "http://s:1",
      "HTTPS_PROXY": "http://S:1", "http_proxy": "http://h:1", "HTTP_PROXY": "http://H:1",
    ]
    #expect(try fromEnvironment(all) == "http://g:1")
    var variables = all
    for (removed, next) in [
      ("grpc_proxy", "http://G:1"), ("GRPC_PROXY", "http://s:1"), ("https_proxy", "http://S:1"),
      ("HTTPS_PROXY", "http://h:1"), ("http_proxy", "http://H:1"),
    ] {
      variables[removed] = nil
      #expect(try fromEnvironment(variables) == next, "without \(removed)")
    }
    variables["HTTP_PROXY"] = nil
    #expect(try fromEnvironment(variables) == nil)
    // An empty variable counts as unset.
    #expect(try fromEnvironment(["https_proxy": "", "http_proxy": "http://h:1"]) == "http://h:1")
  }

  @Test("no_grpc_proxy, no_proxy or NO_PROXY exempts a target; loopback only when named")
  func environmentExemptions() throws {
    let proxy = ["https_proxy": "http://proxy:3128"]
    #expect(try fromEnvironment(proxy, host: "127.0.0.1") == "http://proxy:3128")
    #expect(try fromEnvironment(proxy, host: "localhost") == "http://proxy:3128")
    for variable in ["no_grpc_proxy", "NO_GRPC_PROXY", "no_proxy", "NO_PROXY"] {
      let variables = proxy.merging([variable: "googleapis.com,127.0.0.0/8"]) { $1 }
      #expect(try fromEnvironment(variables) == nil, "\(variable)")
      #expect(try fromEnvironment(variables, host: "127.0.0.1") == nil, "\(variable)")
      #expect(try fromEnvironment(variables, host: "example.com") == "http://proxy:3128")
    }
  }

  @Test("an unusable proxy in the environment is INVALID_ARGUMENT naming the variable")
  func environmentError() {
    #expect {
      try fromEnvironment(["HTTPS_PROXY": "socks5://user:hunter2@p:1"])
    } throws: { error in
      let error = error as? RPCError
      return error?.code == .invalidArgument
        && error?.message.hasPrefix("the environment variable HTTPS_PROXY: ") == true
        && error?.message.contains("hunter2") == false
    }
  }

  @Test(".none ignores the environment; .url ignores no_proxy")
  func explicitOptions() throws {
    #expect(try ProxyRoute.proxy(.none, host: "h", port: 1) { _ in "http://p:1" } == nil)
    let explicit = try ProxyRoute.proxy(.url("http://p:2"), host: "h", port: 1) { _ in "*" }
    #expect(explicit?.description == "http://p:2")
  }
}
