import FleetConsumer
import FleetShare
import FleetSimulator
import FleetSync
import JourneySharing
import Foundation
import Hummingbird
import Logging
import PeerSupport
import Testing

/// fleet-share's HTTP side in this process, on a port the OS picks, against the simulator,
/// with Python's HTTP client as the browser: the admin endpoint, the link tokens, the page,
/// the snapshot and the event stream.
@Suite("Share server", .timeLimit(.minutes(2)))
struct ShareServerTests {
  static let secret = Array("share server test secret".utf8)
  static let admin = "admin-secret"

  /// A running share server over a simulator with one demo trip.
  final class Running: Sendable {
    let base: String
    let trip: String
    let links: ShareLinks
    let simulator: FleetSimulator
    let service: TripService
    let task: Task<Void, any Error>

    init(base: String, trip: String, links: ShareLinks, simulator: FleetSimulator, service: TripService, task: Task<Void, any Error>) {
      (self.base, self.trip, self.links, self.simulator, self.service, self.task) = (base, trip, links, simulator, service, task)
    }

    func stop() async {
      task.cancel()
      _ = await task.result
      service.shutdown()
      await simulator.shutdown(gracePeriod: .seconds(1))
    }
  }

  /// A service polling `simulator`'s demo-provider trips every 200 ms.
  static func service(_ simulator: FleetSimulator) throws -> TripService {
    var options = TripService.Options()
    options.pollInterval = .milliseconds(200)
    return try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
        options: options))
  }

  static func start(page: SharePageOptions = .init()) async throws -> Running {
    let simulator = try await FleetSimulator.start()
    let trip = try simulator.createDemoTrip(providerID: "demo-provider", tripID: "shared-ride")
    let service = try ShareServerTests.service(simulator)
    let links = try ShareLinks(secret: secret)
    let base = PosixMutex("")
    let server = ShareServer(
      fanOut: TripFanOut(service: service), links: links, adminToken: admin,
      providerID: "demo-provider", defaultTTLSeconds: 600, baseURL: { base.withLock { $0 } },
      page: page)
    let (ready, readyContinuation) = AsyncStream.makeStream(of: Int.self)
    let application = Application(
      router: server.router(),
      configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
      onServerRunning: { channel in readyContinuation.yield(channel.localAddress?.port ?? 0) },
      logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    let task = Task { try await application.run() }
    var iterator = ready.makeAsyncIterator()
    let port = try #require(await iterator.next())
    base.withLock { $0 = "http://127.0.0.1:\(port)" }
    return Running(
      base: "http://127.0.0.1:\(port)", trip: trip, links: links, simulator: simulator,
      service: service, task: task)
  }

  /// One request through `Tests/Python/http_request.py`.
  static func request(_ arguments: [String]) async throws -> [String: Any] {
    let output = try await PythonPeer.run("http_request.py", arguments, timeout: .seconds(30))
    #expect(output.status == 0, "\(output.stderr)")
    return try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any])
  }

  @Test("POST /links: 401 without or with a wrong admin token, 400 for a bad body or another provider, else 201")
  func adminEndpoint() async throws {
    let running = try await Self.start()
    let url = running.base + "/links"
    let body = #"{"tripName": "\#(running.trip)", "ttlSeconds": 120}"#
    let none = try await Self.request(["POST", url, "--data", body])
    #expect(none["status"] as? Int == 401)
    let wrong = try await Self.request(["POST", url, "--header", "Authorization: Bearer nope", "--data", body])
    #expect(wrong["status"] as? Int == 401)
    let auth = ["--header", "Authorization: Bearer \(Self.admin)"]
    let bad = try await Self.request(["POST", url] + auth + ["--data", "not json"])
    #expect(bad["status"] as? Int == 400)
    let other = try await Self.request(
      ["POST", url] + auth + ["--data", #"{"tripName": "providers/elsewhere/trips/x"}"#])
    #expect(other["status"] as? Int == 400)
    let made = try await Self.request(["POST", url] + auth + ["--data", body])
    #expect(made["status"] as? Int == 201)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data((made["body"] as? String ?? "").utf8)) as? [String: Any])
    let link = try #require(json["url"] as? String)
    #expect(link.hasPrefix(running.base + "/s/"))
    let expiresAt = try #require(json["expiresAt"] as? Int)
    #expect(abs(expiresAt - Int(Date().timeIntervalSince1970) - 120) <= 5)
    let page = try await Self.request(["GET", link])
    #expect(page["status"] as? Int == 200)
    #expect((page["body"] as? String)?.contains("data-trip-status=\"") == true)
    await running.stop()
  }

  @Test("a tampered or unknown token is 404, an expired one 410, another provider's trip 404; no body names the trip")
  func tokens() async throws {
    let running = try await Self.start()
    let now = Int64(Date().timeIntervalSince1970)
    let good = try running.links.token(for: running.trip, expiresAt: now + 600)
    var tampered = good
    tampered.replaceSubrange(tampered.index(tampered.startIndex, offsetBy: 30)...tampered.index(tampered.startIndex, offsetBy: 30), with: good.dropFirst(30).first == "A" ? "B" : "A")
    let expired = try running.links.token(for: running.trip, expiresAt: now - 1)
    let elsewhere = try running.links.token(for: "providers/elsewhere/trips/secret-ride", expiresAt: now + 600)
    let forged = try ShareLinks(secret: Array("another".utf8)).token(for: running.trip, expiresAt: now + 600)
    for (token, status) in [(tampered, 404), ("nonsense", 404), (forged, 404), (expired, 410), (elsewhere, 404)] {
      for suffix in ["", "/map.svg", "/events"] {
        let answer = try await Self.request(["GET", "\(running.base)/s/\(token)\(suffix)"])
        #expect(answer["status"] as? Int == status, "\(suffix) \(answer)")
        let text = answer["body"] as? String ?? ""
        #expect(!text.contains("shared-ride") && !text.contains("secret-ride") && !text.contains("providers/"), "\(text)")
      }
    }
    await running.stop()
  }

  @Test("a valid link: the page, the SVG snapshot, and events carrying the trip's status and map")
  func liveLink() async throws {
    let running = try await Self.start()
    let token = try running.links.token(for: running.trip, expiresAt: Int64(Date().timeIntervalSince1970) + 600)
    let link = "\(running.base)/s/\(token)"
    let snapshot = try await Self.request(["GET", link + "/map.svg"])
    #expect(snapshot["status"] as? Int == 200)
    #expect((snapshot["headers"] as? [String: String])?["content-type"] == "image/svg+xml")
    let svg = snapshot["body"] as? String ?? ""
    #expect(svg.hasPrefix("<svg ") && svg.contains(#"data-role="pickup""#) && svg.contains("data-trip-status="))
    let events = try await Self.request(["GET", link + "/events", "--sse", "2"])
    #expect((events["headers"] as? [String: String])?["content-type"] == "text/event-stream")
    let received = try #require(events["events"] as? [[String: Any]])
    #expect(received.count == 2)
    for event in received {
      #expect(event["status"] is String)
      #expect((event["svg"] as? String)?.contains(#"data-role="vehicle""#) == true, "\(event)")
      // The simulator's vehicle reports as it moves: fresh, and the map only with --tiles.
      #expect(event["stale"] as? Bool == false, "\(event)")
      #expect(event["map"] == nil)
    }
    let page = try await Self.request(["GET", link])
    let html = page["body"] as? String ?? ""
    #expect(html.contains(#"id="status""#) && html.contains(#"id="eta""#) && html.contains("EventSource"))
    let policy = (page["headers"] as? [String: String])?["content-security-policy"]
    #expect(policy == "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:")
    // The favicon is inline (a data: URL), so no visit asks for /favicon.ico.
    let favicon = try #require(html.firstMatch(of: /<link rel="icon" href="data:image\/svg\+xml,[^"]*">/))
    // Self-contained: no script, style sheet, image or font loaded from anywhere.
    let rest = html.replacingOccurrences(of: String(favicon.output), with: "")
    for reference in ["src=", "href=", "<link", "@import", "url("] {
      #expect(!rest.contains(reference), "the page references something: \(reference)")
    }
    await running.stop()
  }
}

/// The street-map page of `--tiles`, over HTTP: Leaflet and the page's script from the server
/// itself, the tile origin in the Content-Security-Policy, the rendering in each event.
@Suite("Share server with a street map", .timeLimit(.minutes(2)))
struct ShareServerStreetMapTests {
  @Test("the page loads Leaflet from its own origin, its CSP adds the tile origin only, events carry the map")
  func streetMap() async throws {
    let tiles = try TileLayer(
      urlTemplate: "https://{s}.tiles.example.net/{z}/{x}/{y}.png", attribution: "<b>Tiles</b> & co",
      maxZoom: 17)
    let running = try await ShareServerTests.start(
      page: SharePageOptions(streetMap: StreetMap(tiles: tiles, leaflet: try LeafletAssets())))
    let token = try running.links.token(for: running.trip, expiresAt: Int64(Date().timeIntervalSince1970) + 600)
    let link = "\(running.base)/s/\(token)"
    let page = try await ShareServerTests.request(["GET", link])
    let html = page["body"] as? String ?? ""
    let policy = try #require((page["headers"] as? [String: String])?["content-security-policy"])
    #expect(
      policy.contains(
        "img-src 'self' data: https://a.tiles.example.net https://b.tiles.example.net https://c.tiles.example.net;"),
      "\(policy)")
    #expect(policy.contains("script-src 'self';") && policy.contains("connect-src 'self'"), "\(policy)")
    // Everything the page loads, but the inline favicon: from its own origin.
    let sources = html.matches(of: /(?:src|href)="([^"]*)"/).map { String($0.output.1) }
      .filter { !$0.hasPrefix("data:image/svg+xml,") }
    #expect(
      sources.sorted() == ["/assets/leaflet/leaflet.css", "/assets/leaflet/leaflet.js", "/assets/share-map.js"],
      "\(sources)")
    // The attribution is text, never markup; the first paint is the SVG snapshot.
    #expect(!html.contains("<b>Tiles</b>") && html.contains("data-trip-status="))
    for (path, type) in [
      ("/assets/leaflet/leaflet.js", "text/javascript; charset=utf-8"),
      ("/assets/leaflet/leaflet.css", "text/css; charset=utf-8"),
      ("/assets/share-map.js", "text/javascript; charset=utf-8"),
    ] {
      let asset = try await ShareServerTests.request(["GET", running.base + path])
      #expect(asset["status"] as? Int == 200, "\(path)")
      #expect((asset["headers"] as? [String: String])?["content-type"] == type, "\(path)")
    }
    let events = try await ShareServerTests.request(["GET", link + "/events", "--sse", "1"])
    let event = try #require((events["events"] as? [[String: Any]])?.first)
    let map = try #require(event["map"] as? [String: Any], "\(event)")
    #expect((map["bounds"] as? [[Double]])?.count == 2)
    let markers = map["markers"] as? [[String: Any]] ?? []
    #expect(markers.contains { $0["role"] as? String == "vehicle" && ($0["svg"] as? String)?.contains(#"data-role="vehicle""#) == true })
    #expect(markers.contains { $0["role"] as? String == "pickup" })
    await running.stop()
  }
}

/// A shared ride's link shows its own rider's stops only.
@Suite("Share server privacy", .timeLimit(.minutes(1)))
struct ShareServerPrivacyTests {
  /// Every `data-lat`/`data-lng` pair in `svg`.
  static func positions(_ svg: String) -> [(Double, Double)] {
    let lats = svg.matches(of: /data-lat="(-?[0-9.]+)"/).compactMap { Double($0.1) }
    let lngs = svg.matches(of: /data-lng="(-?[0-9.]+)"/).compactMap { Double($0.1) }
    return Array(zip(lats, lngs))
  }

  @Test("a shared ride's map never shows the other rider's pickup or drop-off")
  func sharedRide() async throws {
    let simulator = try await FleetSimulator.start()
    let names = try simulator.createTrips(count: 2, providerID: "demo-provider", kind: .shared)
    let service = try ShareServerTests.service(simulator)
    let fanOut = TripFanOut(service: service)
    let other = try #require(simulator.trip(named: names[1]))
    let otherStops = [other.pickupPoint?.point, other.dropoffPoint?.point].compactMap { $0 }
    #expect(otherStops.count == 2)
    // What the page, the snapshot and the events are drawn from: the fan-out's trip, as the
    // server renders it.
    var checked = 0
    for await event in try fanOut.view(names[0]) {
      guard case .trip(let trip) = event else { continue }
      let svg = SVGRenderer(width: 800, height: 600, showsCaption: false).render(TripRendering(trip: trip))
      let drawn = Self.positions(svg)
      #expect(drawn.count >= 2, "no markers drawn")
      for stop in otherStops {
        #expect(
          !drawn.contains { abs($0.0 - stop.latitude) < 1e-6 && abs($0.1 - stop.longitude) < 1e-6 },
          "the other rider's stop \(stop.latitude),\(stop.longitude) is drawn")
      }
      checked += 1
      if checked == 5 { break }
    }
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
  }
}
