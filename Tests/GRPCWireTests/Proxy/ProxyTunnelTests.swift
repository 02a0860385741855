import Foundation
import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// Through a real HTTP CONNECT proxy — Debian's tinyproxy, started on loopback — to grpcio's
/// interop server over TLS: the interop cases, `no_proxy`, Basic authentication, refusals,
/// what the proxy sees, and a proxy that goes silent after the tunnel opened.
@Suite("Proxy tunnels through tinyproxy", .serialized, .timeLimit(.minutes(5)))
struct ProxyTunnelTests {
  typealias TestService = GRPCTesting.TestService

  /// A channel to `host:port` over TLS (the test CA; `override` the name checked) through
  /// `proxy`.
  static func channel(
    host: String = "127.0.0.1", port: Int, proxy: ChannelOptions.Proxy,
    override: String? = TLSFixtures.serverName, fixtures: TLSFixtures,
    configure: (inout ChannelOptions) -> Void = { _ in }
  ) -> GRPCChannel {
    var options = ChannelOptions()
    options.transportSecurity = .tls(
      TLSConfiguration(trustRoots: .pemFile(fixtures.caCertificate), serverHostnameOverride: override))
    options.proxy = proxy
    configure(&options)
    return GRPCChannel(host: host, port: port, options: options)
  }

  /// One EmptyCall, with a timeout.
  static func emptyCall(_ channel: GRPCChannel) async throws {
    _ = try await channel.unary(
      TestService.emptyCall, GRPCTesting.Empty(), options: CallOptions(timeout: .seconds(30)))
  }

  /// `interop-client` with `environment` added to ours.
  static func interopClient(_ arguments: [String], environment: [String: String]) async throws
    -> ChildProcess.Output
  {
    let client = try ChildProcess(
      ToolProcess.builtExecutable("interop-client"), arguments,
      environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
      stderr: .mergedIntoStdout)
    return try await client.output(within: .seconds(60))
  }

  /// Runs `interop-client` for every interop case over TLS to the server on `port`, with
  /// `environment` (the proxy variables); each must pass.
  static func interopCases(
    port: Int, _ fixtures: TLSFixtures, environment: [String: String]
  ) async throws {
    for name in InteropTests.cases {
      let output = try await interopClient(
        [
          "--server_host=127.0.0.1", "--server_port=\(port)", "--test_case=\(name)",
          "--use_tls=true", "--ca_file=\(fixtures.caCertificate)",
          "--server_host_override=\(TLSFixtures.serverName)",
        ], environment: environment)
      #expect(output.status == 0, "\(name): \(output.stdoutText)")
      #expect(output.stdoutText.contains("\(name): PASSED"), "\(output.stdoutText)")
    }
  }

  @Test("interop-client passes every interop case over TLS through the proxy of https_proxy")
  func interopCases() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    try await withTinyProxy { proxy in
      try await Self.interopCases(port: server.port, fixtures, environment: ["https_proxy": proxy.url()])
      // One tunnel per case, each to the server; the proxy saw nothing but CONNECT. Every case
      // but cancel_after_begin needs its tunnel; that one cancels its call at once and exits,
      // perhaps before its CONNECT has gone out.
      let requests = try await proxy.waitForRequests(InteropTests.cases.count - 1)
      #expect(
        (InteropTests.cases.count - 1...InteropTests.cases.count).contains(requests.count),
        "\(proxy.log)")
      #expect(requests.allSatisfy { $0 == "CONNECT 127.0.0.1:\(server.port) HTTP/1.1" }, "\(requests)")
    }
  }

  @Test("TLS through the tunnel checks the target's name: SNI localhost verifies; a wrong name fails")
  func originNameThroughTunnel() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    try await withTinyProxy { proxy in
      // No override: the certificate must carry `localhost` (it does), which the SNI names.
      let channel = Self.channel(
        host: "localhost", port: server.port, proxy: .url(proxy.url()), override: nil,
        fixtures: fixtures)
      defer { channel.close() }
      try await Self.emptyCall(channel)
      let tls = try await server.waitForEvent("tls") { $0["sni"] == "localhost" }
      #expect(tls["alpn"] == "h2", "\(tls)")
      #expect(
        try await proxy.waitForRequests(1) == ["CONNECT localhost:\(server.port) HTTP/1.1"],
        "\(proxy.log)")

      let wrong = Self.channel(
        port: server.port, proxy: .url(proxy.url()), override: "wrong.example", fixtures: fixtures)
      defer { wrong.close() }
      await #expect {
        try await Self.emptyCall(wrong)
      } throws: { error in
        let error = error as? RPCError
        return error?.code == .unavailable && error?.message.contains("certificate verify failed") == true
      }
    }
  }

  @Test("no_proxy by name, suffix and CIDR goes direct; another entry leaves the proxy in the way")
  func noProxy() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    try await withTinyProxy { proxy in
      for (host, noProxy, proxied) in [
        ("localhost", "localhost", false), ("localhost", ".localhost", false),
        ("127.0.0.1", "10.0.0.0/8,127.0.0.0/8", false), ("127.0.0.1", "example.com", true),
        ("localhost", "example.com,127.0.0.1", true),
      ] {
        let before = proxy.requests.count
        let output = try await Self.interopClient(
          [
            "--server_host=\(host)", "--server_port=\(server.port)", "--test_case=empty_unary",
            "--use_tls=true", "--ca_file=\(fixtures.caCertificate)",
          ], environment: ["HTTPS_PROXY": proxy.url(), "NO_PROXY": noProxy])
        #expect(output.status == 0, "\(host) with no_proxy \(noProxy): \(output.stdoutText)")
        if proxied { try await proxy.waitForRequests(before + 1) }
        let through = proxy.requests.count - before
        #expect(through == (proxied ? 1 : 0), "\(host) with no_proxy \(noProxy): \(proxy.log)")
      }
    }
  }

  @Test("Basic authentication: the right password opens the tunnel; none is 407, a wrong one refused")
  func basicAuthentication() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    let password = "pr0xy-SECRET-pass"
    try await withTinyProxy(basicAuth: ("alice", password)) { proxy in
      let good = Self.channel(
        port: server.port, proxy: .url(proxy.url(user: "alice", password: password)),
        fixtures: fixtures)
      defer { good.close() }
      var metadata = Metadata()
      metadata.add("authorization", "Bearer tok-SECRET-4711")
      _ = try await good.unary(
        TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: .seconds(30), metadata: metadata))

      for (user, pass, status) in [
        (nil, nil, "407 Proxy Authentication Required"),
        // tinyproxy answers a wrong password with 401 (squid says 407: SquidAuthenticationTests).
        ("alice", "wrong", "401 Unauthorized"),
      ] as [(String?, String?, String)] {
        let channel = Self.channel(
          port: server.port, proxy: .url(proxy.url(user: user, password: pass)), fixtures: fixtures)
        defer { channel.close() }
        do {
          try await Self.emptyCall(channel)
          Issue.record("the proxy let \(user ?? "nobody") through")
        } catch let error as RPCError {
          #expect(error.code == .unavailable)
          let shown = proxy.url(user: user, password: pass == nil ? nil : "***")
          #expect(
            error.message.contains(
              "the proxy \(shown) did not open a tunnel to 127.0.0.1:\(server.port): it refused "
                + "CONNECT 127.0.0.1:\(server.port): \(status)"), "\(error.message)")
          #expect(!error.message.contains("wrong"))
        }
      }
      // The proxy's log: CONNECT host:port only — no path, no token, no password.
      try await proxy.waitForRequests(3)
      let log = proxy.log
      #expect(log.contains("CONNECT 127.0.0.1:\(server.port) HTTP/1.1"), "\(log)")
      for secret in ["tok-SECRET", password, "/grpc.testing", "EmptyCall", "YWxpY2U6"] {
        #expect(!log.contains(secret), "tinyproxy's log has \(secret):\n\(log)")
      }
    }
  }

  @Test("a refusal or a dead proxy is UNAVAILABLE naming the proxy and what it said")
  func refusals() async throws {
    let fixtures = try await TLSFixtures.shared
    let closedPort = try unusedPort()
    try await withTinyProxy { proxy in
      // tinyproxy cannot reach the target: 500.
      let unreachable = Self.channel(port: closedPort, proxy: .url(proxy.url()), fixtures: fixtures)
      defer { unreachable.close() }
      await #expect {
        try await Self.emptyCall(unreachable)
      } throws: { error in
        let error = error as? RPCError
        return error?.code == .unavailable
          && error?.message.contains(
            "the proxy \(proxy.url()) did not open a tunnel to 127.0.0.1:\(closedPort): it refused "
              + "CONNECT 127.0.0.1:\(closedPort): 500") == true
      }
    }
    // Nobody listens where the proxy should be.
    let noProxy = Self.channel(
      port: closedPort, proxy: .url("http://127.0.0.1:\(try unusedPort())"), fixtures: fixtures)
    defer { noProxy.close() }
    await #expect {
      try await Self.emptyCall(noProxy)
    } throws: { error in
      let error = error as? RPCError
      return error?.code == .unavailable && error?.message.contains("Connection refused") == true
    }
    // A URL that is not one: every connection attempt fails (UNAVAILABLE, as for a TLS
    // configuration that cannot work), saying which option and why; the cause is the
    // parser's INVALID_ARGUMENT.
    let bad = Self.channel(port: closedPort, proxy: .url("ftp://proxy:21"), fixtures: fixtures)
    defer { bad.close() }
    await #expect {
      try await Self.emptyCall(bad)
    } throws: { error in
      let error = error as? RPCError
      return error?.code == .unavailable
        && error?.message.hasPrefix(
          "ChannelOptions.proxy: 'ftp://proxy:21' is not a usable proxy URL: "
            + "scheme 'ftp' is not http or https") == true
        && (error?.cause as? RPCError)?.code == .invalidArgument
    }
  }

  @Test("a proxy that goes silent after CONNECT is noticed by keepalive; the next call reconnects through it")
  func silentProxy() async throws {
    let fixtures = try await TLSFixtures.shared
    // grpcio's ping policy off, as in KeepaliveTests: only the silence may end the connection.
    try await withPeerServer(
      "interop_server.py",
      arguments: fixtures.serverArguments(.server) + [
        "--no-wire-events", "--grpc-arg", "grpc.http2.min_ping_interval_without_data_ms=10",
        "--grpc-arg", "grpc.http2.max_ping_strikes=0",
      ]
    ) { server in
      try await withTinyProxy { proxy in
        let keepalive = ChannelOptions.Keepalive(
          interval: .milliseconds(300), timeout: .milliseconds(500))
        let channel = Self.channel(port: server.port, proxy: .url(proxy.url()), fixtures: fixtures) {
          $0.keepalive = keepalive
          $0.backoff = .fast
        }
        defer { channel.close() }
        let first = await channel.faultCall("before", timeout: .seconds(10))
        #expect(first.succeeded, "\(first)")
        let hanging = Task { await channel.faultCall("hang", hang: true) }
        _ = try await server.waitForEvent("hanging") { $0["id"] == "hang" }

        let frozenAt = ContinuousClock.now
        proxy.freeze()
        let call = await hanging.value
        proxy.thaw()
        let error = try #require(call.error, "\(call)")
        #expect(error.code == .unavailable)
        #expect(error.message.contains("keepalive PING"), "\(error.message)")
        let detected = frozenAt.duration(to: call.ended)
        #expect(detected <= keepalive.interval + keepalive.timeout + .seconds(1), "\(detected)")

        let next = await channel.faultCall("after", timeout: .seconds(10))
        #expect(next.succeeded, "\(next)")
        #expect(
          try await proxy.waitForRequests(2) == Array(repeating: "CONNECT 127.0.0.1:\(server.port) HTTP/1.1", count: 2),
          "\(proxy.log)")
      }
    }
  }
}
