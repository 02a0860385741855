import FleetConsumer
import Foundation
import PeerSupport
import Testing

/// fleet-share's street-map page (`--tiles`) in Debian's headless chromium
/// (`Tests/Python/share_map_browser.py`), over tiles from a loopback tile server
/// (`Tests/Python/tile_server.py`, PNGs that draw their own z/x/y), following a trip of the
/// Python fake Fleet Engine whose vehicle drives, stops reporting for 10 s, and drives on.
@Suite("Share page on a street map in headless Chromium", .timeLimit(.minutes(4)))
struct ShareMapBrowserTests {
  /// The drive: 40 points from a start south-west of the pickup (index 19) to the drop-off
  /// (index 39), near Zurich.
  static let path: [(Double, Double)] = (0..<40).map { index in
    let (start, pickup, dropoff) = ((47.3700, 8.5300), (47.3760, 8.5400), (47.3800, 8.5480))
    let (from, to, t) =
      index <= 19
      ? (start, pickup, Double(index) / 19) : (pickup, dropoff, Double(index - 19) / 20)
    return (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t)
  }
  static let frozenAt = 10

  static func point(_ index: Int) -> [String: Any] {
    FakeScript.point(path[index].0, path[index].1)
  }

  /// The trip with the vehicle at `index`, stamped by the fake with the time it last moved.
  static func step(_ name: String, vehicleAt index: Int, eta: Date) -> FakeScript.Step {
    let toPickup = index < 19
    let stopIndex = toPickup ? 19 : 39
    var trip: [String: Any] = [
      "name": name, "tripStatus": toPickup ? "ENROUTE_TO_PICKUP" : "ENROUTE_TO_DROPOFF",
      "pickupPoint": ["point": point(19)], "dropoffPoint": ["point": point(39)],
      "lastLocation": ["location": point(index), "heading": 45],
      "route": (index...stopIndex).map(point),
      "currentRouteSegmentTraffic": [
        "speedReadingInterval": [
          ["startPolylinePointIndex": 0, "endPolylinePointIndex": 3, "speed": "NORMAL"],
          ["startPolylinePointIndex": 3, "endPolylinePointIndex": 6, "speed": "SLOW"],
        ]
      ],
      "etaToFirstWaypoint": FakeScript.time(Int(eta.timeIntervalSince1970)),
      "remainingDistanceMeters": (stopIndex - index) * 60,
    ]
    let tripID = String(name.split(separator: "/").last ?? "")
    var waypoints: [[String: Any]] = []
    if toPickup {
      waypoints.append([
        "tripId": tripID, "waypointType": "PICKUP_WAYPOINT_TYPE",
        "location": ["point": point(19)], "pathToWaypoint": (index...19).map(point),
      ])
    }
    waypoints.append([
      "tripId": tripID, "waypointType": "DROP_OFF_WAYPOINT_TYPE",
      "location": ["point": point(39)], "pathToWaypoint": ((toPickup ? 19 : index)...39).map(point),
    ])
    trip["remainingWaypoints"] = waypoints
    var step = FakeScript.Step.trip(trip)
    step.json["stampLocation"] = true
    return step
  }

  /// Polled every 0.5 s: 10 moves, 20 polls at the same place (10 s, so stale after 5 s),
  /// then on to the drop-off in steps of two, and COMPLETE.
  static func steps(_ name: String) -> [FakeScript.Step] {
    let start = Date()
    let indices =
      Array(0...frozenAt) + Array(repeating: frozenAt, count: 20)
      + Array(stride(from: frozenAt + 1, through: 39, by: 2))
    var steps = indices.enumerated().map { poll, index in
      step(name, vehicleAt: index, eta: start.addingTimeInterval(40 + Double(poll) * 0.2))
    }
    steps.append(
      .trip(["name": name, "tripStatus": "COMPLETE", "lastLocation": ["location": point(39)]]))
    return steps
  }

  /// The tiles (x, y) covering pixel bounds at a zoom, as Leaflet's tile layer computes them.
  static func tiles(min: (Double, Double), max: (Double, Double)) -> Set<[Int]> {
    let (x0, y0) = (Int((min.0 / 256).rounded(.down)), Int((min.1 / 256).rounded(.down)))
    let (x1, y1) = (Int((max.0 / 256).rounded(.up)) - 1, Int((max.1 / 256).rounded(.up)) - 1)
    return Set((x0...x1).flatMap { x in (y0...y1).map { y in [x, y] } })
  }

  /// Web Mercator's global pixel of a point at `zoom` (256-pixel tiles).
  static func pixel(_ point: (Double, Double), zoom: Int) -> (Double, Double) {
    let scale = 256 * pow(2, Double(zoom))
    let sine = sin(point.0 * .pi / 180)
    let y = 0.5 - log((1 + sine) / (1 - sine)) / (4 * .pi)
    return ((point.1 + 180) / 360 * scale, y * scale)
  }

  /// A vehicle sample's `[lat, lng]`.
  static func position(_ sample: [String: Any]) -> [Double]? {
    guard let lat = sample["lat"] as? Double, let lng = sample["lng"] as? Double else { return nil }
    return [lat, lng]
  }

  @Test(
    "tiles from the tile server only, at one zoom, under the trip; the car moves, goes stale, comes back, completes; a drag stops following"
  )
  func streetMap() async throws {
    let engine = try await FakeFleetEngine.start(quiet: false)
    let tileServer = try await PeerServer.start("tile_server.py")
    let name = FakeScript.tripName("street-map")
    try engine.add([name: Self.steps(name)])
    let tileOrigin = "http://127.0.0.1:\(tileServer.port)"
    let arguments = [
      "--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--provider",
      FleetTest.provider,
      "--token", "t", "--port", "0", "--admin-token", "admin", "--poll-interval", "0.5",
      "--tiles", tileOrigin + "/{z}/{x}/{y}.png", "--tiles-attribution", "Test tiles © nobody",
      "--tiles-max-zoom", "18", "--stale-after", "5",
    ]
    try await withTool("fleet-share", arguments) { share in
      let first = try await share.waitForLine(timeout: .seconds(30), "its first line") { _ in true }
      let origin = String(first.dropFirst("listening on ".count))
      let made = try await PythonPeer.run(
        "http_request.py",
        [
          "POST", origin + "/links", "--header", "Authorization: Bearer admin", "--data",
          #"{"tripName": "\#(name)"}"#,
        ])
      let response = try #require(
        try JSONSerialization.jsonObject(with: Data(made.stdout)) as? [String: Any],
        "\(made.stderr)")
      let body = try #require(
        try JSONSerialization.jsonObject(with: Data((response["body"] as? String ?? "").utf8))
          as? [String: Any], "\(response)")
      let link = try #require(body["url"] as? String)

      let screenshot =
        ProcessInfo.processInfo.environment["FLEET_SCREENSHOT_DIR"].map {
          URL(fileURLWithPath: $0).appendingPathComponent("share-page-map.png")
        }
        ?? FileManager.default.temporaryDirectory.appendingPathComponent(
          "share-map-\(UUID().uuidString).png")
      defer {
        if ProcessInfo.processInfo.environment["FLEET_SCREENSHOT_DIR"] == nil {
          try? FileManager.default.removeItem(at: screenshot)
        }
      }
      let output = try await PythonPeer.run(
        "share_map_browser.py", [link, tileOrigin, screenshot.path, "--seconds", "90"],
        timeout: .seconds(150))
      #expect(output.status == 0, "\(output.stderr)")
      let report = try #require(
        try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any],
        "no report: \(output.stdoutText) \(output.stderr)")
      #expect(report["error"] == nil, "\(report["error"] ?? "")")

      // Requests: fleet-share's origin and the tile server's only; the CSP says as much.
      let requests = report["requests"] as? [String] ?? []
      #expect(requests.contains { $0.hasPrefix(origin + "/assets/leaflet/") }, "\(requests)")
      #expect(!requests.contains { $0.hasSuffix("/favicon.ico") }, "the favicon was fetched")
      #expect(
        requests.allSatisfy { $0.hasPrefix(origin + "/") || $0.hasPrefix(tileOrigin + "/") },
        "requests elsewhere: \(requests.filter { !$0.hasPrefix(origin + "/") && !$0.hasPrefix(tileOrigin + "/") })"
      )
      let policy = try #require(report["csp"] as? String, "no Content-Security-Policy header")
      #expect(policy.contains("img-src 'self' data: \(tileOrigin);"), "\(policy)")
      #expect(
        policy.contains("default-src 'self'") && policy.contains("script-src 'self';"), "\(policy)")
      #expect(!policy.contains("*"), "\(policy)")

      // Tiles: one zoom, covering the trip's bounding box and the viewport, first and last.
      let tiles = report["tiles"] as? [[Int]] ?? []
      #expect(!tiles.isEmpty, "no tile was requested")
      let zooms = Set(tiles.map { $0[0] })
      #expect(zooms.count == 1, "tiles at several zoom levels: \(zooms)")
      let requested = Set(tiles.map { [$0[1], $0[2]] })
      let viewports = report["viewports"] as? [[String: Any]] ?? []
      #expect(viewports.count == 2, "\(viewports)")
      for viewport in viewports {
        let zoom = try #require(viewport["zoom"] as? Int)
        #expect(zooms == [zoom], "the map is at zoom \(zoom), the tiles at \(zooms)")
        let low = try #require(viewport["min"] as? [Double])
        let high = try #require(viewport["max"] as? [Double])
        let missing = Self.tiles(min: (low[0], low[1]), max: (high[0], high[1])).subtracting(
          requested)
        #expect(missing.isEmpty, "viewport tiles never requested: \(missing)")
      }
      if let fitted = viewports.first, let zoom = fitted["zoom"] as? Int,
        let low = fitted["min"] as? [Double], let high = fitted["max"] as? [Double]
      {
        // The first fit holds the whole trip (start, pickup, drop-off) inside the viewport.
        for corner in [Self.path[0], Self.path[19], Self.path[39]] {
          let (x, y) = Self.pixel(corner, zoom: zoom)
          #expect(
            x > low[0] && x < high[0] && y > low[1] && y < high[1],
            "\(corner) outside the first view")
        }
        // The trip's bounding box runs from the start (south-west) to the drop-off (north-east).
        let (southWest, northEast) = (Self.path[0], Self.path[39])
        let box = Self.tiles(
          min: Self.pixel((northEast.0, southWest.1), zoom: zoom),
          max: Self.pixel((southWest.0, northEast.1), zoom: zoom))
        #expect(
          box.isSubset(of: requested),
          "bounding-box tiles never requested: \(box.subtracting(requested))")
      }

      // The car over the tiles, where the map projects it, moving; COMPLETE reached.
      let samples = report["vehicle"] as? [[String: Any]] ?? []
      let positions = Set(samples.compactMap(Self.position))
      #expect(positions.count >= 5, "the vehicle hardly moved: \(positions.count) positions")
      let overTiles = Set(
        samples.filter { $0["onTile"] as? Bool == true }.compactMap(Self.position))
      #expect(
        overTiles.count >= 5, "the vehicle was over loaded tiles at \(overTiles.count) positions")
      #expect(
        samples.allSatisfy { ($0["offsetPx"] as? Double ?? 99) < 2 },
        "a marker off its point: \(samples)")
      let statuses = report["statuses"] as? [String] ?? []
      #expect(statuses.last == "COMPLETE", "\(statuses)")
      #expect(
        statuses.contains("ENROUTE_TO_PICKUP") && statuses.contains("ENROUTE_TO_DROPOFF"),
        "\(statuses)")
      #expect(report["routeSegments"] as? Int ?? 0 >= 2, "\(report["routeSegments"] ?? "")")
      let hooks = report["routeHooks"] as? [[String]] ?? []
      #expect(hooks.contains(["active", "NORMAL"]), "route hooks: \(hooks)")
      #expect(
        report["followingBeforeDrag"] as? Bool == true, "the map stopped following without a user")
      #expect(
        report["followingAfterDrag"] as? Bool == false, "the map kept following after a drag")

      // Stale: within 2 s of the frozen location's age passing 5 s, and fresh on the next move.
      let stamps = engine.requests(for: name).compactMap {
        $0.event["located"].flatMap(Double.init)
      }
      let frozen = try #require(
        Dictionary(grouping: stamps, by: { $0 }).max { $0.value.count < $1.value.count }?.key)
      let moved = try #require(stamps.first { $0 > frozen }, "the vehicle never moved again")
      let staleSample = try #require(
        samples.first { $0["stale"] as? Bool == true },
        "the vehicle was never shown stale: \(samples)")
      let staleAt = try #require(staleSample["t"] as? Double)
      #expect(
        staleAt >= frozen + 5 - 0.2, "stale too early: \(staleAt - frozen) s after the last move")
      #expect(
        staleAt <= frozen + 5 + 2, "stale too late: \(staleAt - frozen) s after the last move")
      let label = staleSample["label"] as? String ?? ""
      #expect(label.hasPrefix("last seen ") && label.hasSuffix(" s ago"), "\(label)")
      let fresh = try #require(
        samples.first { ($0["t"] as? Double ?? 0) > staleAt && $0["stale"] as? Bool == false },
        "the vehicle never came back from stale")
      let freshAt = try #require(fresh["t"] as? Double)
      #expect(freshAt - moved <= 2, "fresh \(freshAt - moved) s after the vehicle moved again")

      let shot = try #require(report["screenshot"] as? [String: Int], "no screenshot taken")
      let bytes = try Data(contentsOf: screenshot)
      #expect(bytes.count == shot["bytes"] && bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
      #expect(shot["distinctBytes"] ?? 0 >= 32, "the screenshot looks blank: \(shot)")
    }
    await tileServer.stop()
    await engine.stop()
  }
}
