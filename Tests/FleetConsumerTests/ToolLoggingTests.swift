import Foundation
import PeerSupport
import Testing

/// `--log-level` and `--log-format` of the four tools, run as black boxes against each other:
/// at debug each prints its connection, call and (followers) poll events on stderr; at trace —
/// which writes every line any other level writes, and more — no line carries the token, the
/// service-account key, a minted JWT, the admin token, the link secret, a share link or the
/// password of the proxy the clients go through.
@Suite("Tool logging", .serialized, .timeLimit(.minutes(3)))
struct ToolLoggingTests {
  static let token = "tok-SECRET-4711-not-for-logs"
  static let admin = "admin-SECRET-0815"
  static let linkSecret = "link-SECRET-1234"
  static let proxyUser = "alice"
  static let proxyPassword = "proxy-SECRET-2718"

  /// Runs `body` with `fleet-sim --trips 2` started with `extra` flags; returns its stderr
  /// with `body`'s result once it has been stopped.
  private func withSimulator<T>(
    _ extra: [String], _ body: (Int) async throws -> T
  ) async throws -> (T, String) {
    let simulator = try ToolProcess.start(
      "fleet-sim", ["--port", "0", "--trips", "2", "--time-scale", "600"] + extra)
    do {
      let (port, _) = try await simulator.waitForPort(.listeningOn, timeout: .seconds(30))
      let result = try await body(port)
      await simulator.stop()
      return (result, simulator.stderr)
    } catch {
      await simulator.stop()
      throw error
    }
  }

  /// The secrets of this suite found in `text`, by name.
  private func secrets(in text: String, key: ServiceAccountFixture? = nil) throws -> [String] {
    var named = [
      ("the token", Self.token), ("the admin token", Self.admin),
      ("the link secret", Self.linkSecret), ("the proxy password", Self.proxyPassword),
      // Proxy-Authorization: Basic, as sent.
      (
        "the proxy credentials in base64",
        Data("\(Self.proxyUser):\(Self.proxyPassword)".utf8).base64EncodedString()
      ),
      // Every JWT starts with a base64url `{"`: a minted token in a line would show.
      ("a JWT", "eyJ"),
    ]
    if let key {
      named.append(("the key's ID", key.privateKeyID))
      let object = try key.keyObject()
      let pem = try #require(object["private_key"] as? String)
      for line in pem.split(separator: "\n") where !line.hasPrefix("-----") {
        named.append(("a line of the private key", String(line)))
      }
    }
    return named.filter { text.contains($0.1) }.map(\.0)
  }

  @Test("fleet-follow --log-level debug logs connections, calls and polls on stderr; stdout stays JSON")
  func fleetFollowDebug() async throws {
    let (result, simulatorLog) = try await withSimulator(["--log-level", "debug"]) { port in
      try await FleetFollowProcess.run(
        [
          "--endpoint", "127.0.0.1:\(port)", "--plaintext",
          "--trip-name", "providers/sim-provider/trips/trip-1", "--token", Self.token,
          "--poll-interval", "0.2", "--max-seconds", "2", "--json", "--log-level", "debug",
        ])
    }
    #expect(result.status == 0, "\(result)")
    // stdout is the JSON-lines contract, logs or not.
    #expect(try result.objects().count == result.lines.count)
    #expect(!result.stdout.contains("connection ready"))
    for event in ["connection ready", "call ended", "polling", "grpc.method=/maps.fleetengine.v1.TripService/GetTrip"] {
      #expect(result.stderr.contains(event), "no \(event) in:\n\(result.stderr)")
    }
    for event in ["connection accepted", "call handled"] {
      #expect(simulatorLog.contains(event), "no \(event) in fleet-sim's:\n\(simulatorLog)")
    }
    #expect(try secrets(in: result.stdout + result.stderr + simulatorLog).isEmpty)
  }

  @Test("--log-format json writes each log line as one JSON object with time, level, logger, message")
  func jsonFormat() async throws {
    let (result, _) = try await withSimulator([]) { port in
      try await FleetFollowProcess.run(
        [
          "--endpoint", "127.0.0.1:\(port)", "--plaintext",
          "--trip-name", "providers/sim-provider/trips/trip-1", "--token", Self.token,
          "--poll-interval", "0.2", "--max-seconds", "1", "--json", "--log-level", "debug",
          "--log-format", "json",
        ])
    }
    #expect(result.status == 0, "\(result)")
    let logLines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }
    #expect(logLines.count >= 3, "\(result.stderr)")
    for line in logLines {
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
      #expect(object["level"] as? String == "debug" || object["level"] as? String == "info")
      #expect(object["logger"] as? String == "fleet-follow")
      #expect(object["message"] is String && object["time"] is String && object["metadata"] is [String: Any])
    }
    #expect(logLines.contains { $0.contains(#""message":"polling""#) })
  }

  @Test("the default levels: nothing from a healthy client, nothing below notice from a server")
  func defaults() async throws {
    let (result, simulatorLog) = try await withSimulator([]) { port in
      try await FleetFollowProcess.run(
        [
          "--endpoint", "127.0.0.1:\(port)", "--plaintext",
          "--trip-name", "providers/sim-provider/trips/trip-1", "--token", Self.token,
          "--poll-interval", "0.2", "--max-seconds", "1", "--json",
        ])
    }
    #expect(result.status == 0, "\(result)")
    #expect(!result.stderr.contains(" debug ") && !result.stderr.contains(" info "), "\(result.stderr)")
    #expect(!simulatorLog.contains(" debug ") && !simulatorLog.contains(" info "), "\(simulatorLog)")
  }

  @Test(
    "at trace, no tool's line carries the token, the key, a JWT, the admin token, the link secret, a link or the proxy password"
  )
  func noSecretAtAnyLevel() async throws {
    let key = try await ServiceAccountFixture.shared
    // The clients go to fleet-sim through tinyproxy, with the password in --proxy's URL.
    try await withTinyProxy(basicAuth: (Self.proxyUser, Self.proxyPassword)) { proxy in
      let trace = ["--log-level", "trace"]
      let traceThroughProxy =
        trace + ["--proxy", proxy.url(user: Self.proxyUser, password: Self.proxyPassword)]
      var logs: [(String, String)] = []
      let (_, simulatorLog) = try await withSimulator(trace) { port in
        let endpoint = "127.0.0.1:\(port)"
        // fleet-follow with a fixed token, then with tokens minted from the key.
        for tokenFlags in [["--token", Self.token], ["--service-account-key", key.keyFile]] {
          let follow = try await FleetFollowProcess.run(
            [
              "--endpoint", endpoint, "--plaintext",
              "--trip-name", "providers/sim-provider/trips/trip-1", "--poll-interval", "0.2",
              "--max-seconds", "1", "--json",
            ] + tokenFlags + traceThroughProxy)
          #expect(follow.status == 0, "\(follow)")
          #expect(follow.stderr.contains("polling"), "\(follow.stderr)")
          logs.append(("fleet-follow \(tokenFlags[0])", follow.stderr))
        }
        // fleet-load: raw calls with the token as metadata, then followed trips.
        for shape in [["-n", "20"], ["--trips", "2", "-z", "1", "--poll-interval", "0.2"]] {
          let load = try await ToolProcess.run(
            "fleet-load",
            [
              "--target", endpoint, "--plaintext", "--trips-to-create", "2", "-m",
              "authorization=Bearer \(Self.token)",
            ]
              + shape + traceThroughProxy, timeout: .seconds(60))
          #expect(load.status == 0, "\(load)")
          // Connection and call events; with --trips, the polls too.
          for event in ["connection ready", "call ended"] + (shape[0] == "--trips" ? ["polling"] : []) {
            #expect(load.stderr.contains(event), "no \(event) from fleet-load \(shape[0]):\n\(load.stderr)")
          }
          logs.append(("fleet-load \(shape[0])", load.stderr))
        }
        // fleet-share: a link made and watched, so that the trip is followed.
        let share = try ToolProcess.start(
          "fleet-share",
          [
            "--endpoint", endpoint, "--plaintext", "--provider", "sim-provider",
            "--token", Self.token, "--admin-token", Self.admin, "--link-secret", Self.linkSecret,
            "--port", "0", "--poll-interval", "0.2",
          ] + traceThroughProxy)
        do {
          let (sharePort, _) = try await share.waitForPort(.listeningOn, timeout: .seconds(30))
          let made = try await PythonPeer.run(
            "http_request.py",
            [
              "POST", "http://127.0.0.1:\(sharePort)/links", "--header",
              "Authorization: Bearer \(Self.admin)", "--data",
              #"{"tripName": "providers/sim-provider/trips/trip-2", "ttlSeconds": 120}"#,
            ], timeout: .seconds(30))
          let body = try #require(
            try JSONSerialization.jsonObject(with: Data(made.stdout)) as? [String: Any])
          let link = try #require(
            (body["body"] as? String).flatMap {
              try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }?["url"] as? String, "\(body)")
          // One event: the trip as it is (at --time-scale 600 it may have ended already).
          let events = try await PythonPeer.run(
            "http_request.py", ["GET", link + "/events", "--sse", "1"], timeout: .seconds(30))
          #expect(events.status == 0, "\(events.stderr)")
          await share.stop()
          for event in ["connection ready", "call ended", "polling"] {
            #expect(share.stderr.contains(event), "no \(event) from fleet-share:\n\(share.stderr)")
          }
          let linkToken = String(try #require(link.split(separator: "/").last))
          #expect(!share.stderr.contains(linkToken), "the share link is in fleet-share's log")
          logs.append(("fleet-share", share.stderr))
        } catch {
          await share.stop()
          throw error
        }
      }
      for event in ["connection accepted", "call handled"] {
        #expect(simulatorLog.contains(event), "no \(event) from fleet-sim:\n\(simulatorLog)")
      }
      logs.append(("fleet-sim", simulatorLog))
      // Two fleet-follows, two fleet-loads and fleet-share, each through its own tunnel at least.
      let tunnels = try await proxy.waitForRequests(5)
      #expect(tunnels.allSatisfy { $0.hasPrefix("CONNECT 127.0.0.1:") }, "\(proxy.log)")
      for (tool, log) in logs {
        #expect(log.contains(" trace ") || log.contains(" debug "), "\(tool) logged nothing:\n\(log)")
        let found = try secrets(in: log, key: key)
        #expect(found.isEmpty, "\(tool) logged \(found):\n\(log)")
      }
    }
  }
}
