import Foundation
import PeerSupport
import Testing

/// `fleet-follow` in a network whose way out is an egress proxy: a trip on `fleet-sim` over
/// TLS (the test CA through `SSL_CERT_FILE`, the name `localhost` verified) through Debian's
/// tinyproxy on loopback, from `HTTPS_PROXY` or `--proxy`; `--no-proxy` goes around it.
@Suite("fleet-follow through an HTTP CONNECT proxy", .serialized, .timeLimit(.minutes(3)))
struct FleetFollowProxyTests {
  /// Runs `fleet-follow` against `fleet-sim --tls-cert …` through a tinyproxy (with Basic
  /// authentication), with `environment` and `flags` added; returns its result, the
  /// simulator's port and the proxy's request lines.
  private func follow(
    environment: (TinyProxy) -> [String: String], flags: (TinyProxy) -> [String]
  ) async throws -> (ToolProcess.Result, port: Int, requests: [String], log: String) {
    let fixtures = try await TLSFixtures.shared
    let simulator = try ToolProcess.start(
      "fleet-sim",
      ["--port", "0", "--trips", "1", "--time-scale", "600"] + fixtures.serverArguments(.server))
    return try await afterwardsStopping(simulator) {
      let (port, _) = try await simulator.waitForPort(.listeningOn, timeout: .seconds(30))
      return try await withTinyProxy(basicAuth: ("fleet", "pr0xy-pass-SECRET")) { proxy in
        let follower = try ChildProcess(
          ToolProcess.builtExecutable("fleet-follow"),
          [
            "--endpoint", "localhost:\(port)", "--trip-name", "providers/sim-provider/trips/trip-1",
            "--token", "tok-SECRET-4711", "--poll-interval", "0.2", "--max-seconds", "3", "--json",
            "--log-level", "debug",
          ] + flags(proxy),
          environment: ProcessInfo.processInfo.environment.merging(
            ["SSL_CERT_FILE": fixtures.caCertificate].merging(environment(proxy)) { $1 }) { $1 })
        let output = try await follower.output(within: .seconds(30))
        let result = ToolProcess.Result(
          status: output.status, stdout: output.stdoutText, stderr: output.stderr)
        // Through the proxy, fleet-follow's first connection made one CONNECT.
        if environment(proxy)["HTTPS_PROXY"] != nil || flags(proxy).contains("--proxy"),
          !flags(proxy).contains("--no-proxy")
        {
          try await proxy.waitForRequests(1)
        }
        return (result, port, proxy.requests, proxy.log)
      }
    }
  }

  /// `body`, then `child` stopped, whether `body` returns or throws.
  private func afterwardsStopping<T>(_ child: ChildProcess, _ body: () async throws -> T)
    async throws -> T
  {
    do {
      let result = try await body()
      await child.stop()
      return result
    } catch {
      await child.stop()
      throw error
    }
  }

  /// The trip statuses fleet-follow printed (the trip moves fast at --time-scale 600: the first
  /// one seen need not be NEW).
  private func statuses(_ result: ToolProcess.Result) throws -> [String] {
    try result.objects().compactMap {
      $0["event"] as? String == "tripStatus" ? $0["status"] as? String : nil
    }
  }

  @Test("with HTTPS_PROXY set, fleet-follow follows the trip over TLS through the proxy")
  func httpsProxyVariable() async throws {
    let (result, port, requests, log) = try await follow(
      environment: { ["HTTPS_PROXY": $0.url(user: "fleet", password: "pr0xy-pass-SECRET")] },
      flags: { _ in [] })
    #expect(result.status == 0, "\(result)")
    #expect(try !statuses(result).isEmpty, "\(result)")
    #expect(try result.objects().allSatisfy { $0["event"] as? String != "error" }, "\(result)")
    #expect(requests == ["CONNECT localhost:\(port) HTTP/1.1"], "\(log)")
    // Neither the proxy's log nor fleet-follow's has the token or the proxy's password.
    for text in [log, result.stdout + result.stderr] {
      #expect(!text.contains("tok-SECRET") && !text.contains("pr0xy-pass-SECRET"))
    }
    #expect(result.stderr.contains("the proxy opened a tunnel"), "\(result.stderr)")
  }

  @Test("--proxy names the proxy; --no-proxy goes around the one of HTTPS_PROXY")
  func flags() async throws {
    let (named, port, requests, log) = try await follow(
      environment: { _ in [:] },
      flags: { ["--proxy", $0.url(user: "fleet", password: "pr0xy-pass-SECRET")] })
    #expect(named.status == 0, "\(named)")
    #expect(try !statuses(named).isEmpty, "\(named)")
    #expect(requests == ["CONNECT localhost:\(port) HTTP/1.1"], "\(log)")

    let (direct, _, directRequests, _) = try await follow(
      environment: { ["HTTPS_PROXY": $0.url(user: "fleet", password: "pr0xy-pass-SECRET")] },
      flags: { _ in ["--no-proxy"] })
    #expect(direct.status == 0, "\(direct)")
    #expect(try !statuses(direct).isEmpty, "\(direct)")
    #expect(directRequests.isEmpty)
  }

  @Test("a proxy that refuses: the error line is UNAVAILABLE naming the proxy and its 407")
  func refused() async throws {
    let (result, port, _, _) = try await follow(
      environment: { ["HTTPS_PROXY": $0.url()] }, flags: { _ in [] })
    #expect(result.status == 0, "\(result)")
    let errors = try result.objects().filter { $0["event"] as? String == "error" }
    let first = try #require(errors.first, "\(result)")
    #expect(first["status"] as? String == "UNAVAILABLE", "\(first)")
    #expect(
      (first["message"] as? String)?.contains(
        "did not open a tunnel to localhost:\(port): it refused CONNECT localhost:\(port): "
          + "407 Proxy Authentication Required") == true, "\(first)")
  }

  @Test("a bad --proxy is a usage error naming the flag, without the password")
  func badProxyFlag() async throws {
    let result = try await FleetFollowProcess.run(
      [
        "--endpoint", "localhost:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--proxy", "socks5://u:hunter2@proxy:1080",
      ])
    #expect(result.status == 2, "\(result)")
    #expect(result.stderr.contains("--proxy: 'socks5://u:***@proxy:1080' is not a usable proxy URL"), "\(result)")
    #expect(!result.stderr.contains("hunter2"))
  }
}
