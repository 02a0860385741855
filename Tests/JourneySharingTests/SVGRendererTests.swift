import FleetConsumer
import Foundation
import JourneySharing
import PeerSupport
import Testing

@Suite("SVG renderer")
struct SVGRendererTests {
  private typealias F = TripFixtures

  /// What check_svg.py found in a document (its `RESULT ok` report).
  struct Report: Decodable {
    struct Route: Decodable, Equatable {
      var tag: String
      var leg: String
      var speed: String
      var stroke: String
      var points: Int
    }
    struct Marker: Decodable, Equatable {
      var tag: String
      var role: String
      var lat: Double
      var lng: Double
    }
    var root: String
    var tripStatus: String
    var width: String
    var height: String
    var elements: Int
    var routes: [Route]
    var markers: [Marker]
    var texts: [String]
  }

  /// Parses `svg` with Python's XML parser; fails the test (never skips) without the peer.
  private func parsed(_ svg: String) async throws -> Report {
    let output = try await PythonPeer.run("check_svg.py", stdin: Array(svg.utf8))
    if output.status != 0 { output.attach(as: "check_svg") }
    try #require(output.status == 0, "check_svg.py failed:\n\(output.transcript)")
    let line = try #require(
      output.stdoutText.split(separator: "\n").first { $0.hasPrefix("RESULT ok ") },
      "\(output.transcript)")
    return try JSONDecoder().decode(Report.self, from: Data(line.dropFirst(10).utf8))
  }

  @Test("a trip on its way is valid SVG with every route segment and marker hook")
  func validSVG() async throws {
    let rendering = TripRendering(trip: F.enrouteToPickup(), now: F.now)
    let report = try await parsed(SVGRenderer(width: 640, height: 480).render(rendering))
    #expect(report.root == "{http://www.w3.org/2000/svg}svg")
    #expect(report.tripStatus == "ENROUTE_TO_PICKUP")
    #expect(report.width == "640" && report.height == "480")
    // Drawn by z-index: the remaining route (9) under the active route (10).
    #expect(
      report.routes == [
        .init(tag: "polyline", leg: "remaining", speed: "NO_DATA", stroke: "#9aa0a6", points: 4),
        .init(tag: "polyline", leg: "active", speed: "NORMAL", stroke: "#34a853", points: 3),
        .init(tag: "polyline", leg: "active", speed: "NO_DATA", stroke: "#1a73e8", points: 2),
        .init(tag: "polyline", leg: "active", speed: "TRAFFIC_JAM", stroke: "#d93025", points: 3),
      ])
    // Pickup, intermediate and drop-off (z 20) under the vehicle (z 30).
    #expect(report.markers.map(\.role) == ["pickup", "intermediate", "dropoff", "vehicle"])
    let vehicle = try #require(report.markers.last)
    #expect(vehicle.lat == 47.37 && vehicle.lng == 8.54)
    #expect(report.texts.contains("Trip ENROUTE_TO_PICKUP, 4 min · 1.2 km"))
    #expect(report.texts.contains("4 min · 1.2 km"))
  }

  @Test("an empty trip, a new trip and a finished one are valid SVG too")
  func validSVGWithoutRoutes() async throws {
    var new = FleetEngine.Trip()
    new.tripStatus = .new
    new.pickupPoint = F.terminal(47.37, 8.54)
    var done = F.enrouteToPickup()
    done.tripStatus = .complete
    done.route = []
    done.remainingWaypoints = []
    for (trip, status, markers) in [
      (FleetEngine.Trip(), "UNKNOWN_TRIP_STATUS", [String]()), (new, "NEW", ["pickup"]),
      (done, "COMPLETE", ["pickup", "intermediate", "dropoff", "vehicle"]),
    ] {
      let report = try await parsed(SVGRenderer().render(TripRendering(trip: trip, now: F.now)))
      #expect(report.tripStatus == status)
      #expect(report.routes.isEmpty)
      #expect(report.markers.map(\.role) == markers)
    }
  }

  @Test("text is escaped: a hostile status and caption stay text")
  func escaping() async throws {
    var rendering = TripRendering(trip: F.enrouteToPickup(), now: F.now)
    rendering.etaText = "<script>alert('x')</script> & \"more\""
    rendering.status = .unrecognized(42)
    let svg = SVGRenderer().render(rendering)
    #expect(!svg.contains("<script>"))
    #expect(
      svg.contains("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;more&quot;"))
    let report = try await parsed(svg)
    #expect(report.tripStatus == "42")
    #expect(report.texts.contains("<script>alert('x')</script> & \"more\" · 1.2 km"))
  }

  @Test("the same rendering gives the same bytes; numbers have no locale and no exponent")
  func deterministic() {
    let rendering = TripRendering(trip: F.enrouteToPickup(), now: F.now)
    let first = SVGRenderer().render(rendering)
    #expect(first == SVGRenderer().render(TripRendering(trip: F.enrouteToPickup(), now: F.now)))
    #expect(!first.contains(/[0-9][eE][-+][0-9]/))
    #expect(!first.contains("nan") && !first.contains("inf"))
    #expect(first.contains("data-lat=\"47.37\" data-lng=\"8.54\" data-heading=\"45\""))
  }

  @Test("the vehicle's heading turns its arrow; without a heading there is no arrow")
  func heading() {
    var trip = F.enrouteToPickup()
    #expect(SVGRenderer().render(TripRendering(trip: trip, now: F.now)).contains("rotate(45)"))
    trip.lastLocation?.heading = nil
    let svg = SVGRenderer().render(TripRendering(trip: trip, now: F.now))
    #expect(!svg.contains("rotate(") && !svg.contains("data-heading"))
  }

  @Test(
    "a stale vehicle is drawn dimmed, marked data-stale, with its last-seen text; a fresh one as before"
  )
  func staleVehicle() async throws {
    var style = JourneySharingStyle()
    style.staleLocationThreshold = .seconds(60)
    var trip = F.enrouteToPickup()
    trip.lastLocation?.updateTime = GoogleProtobuf.Timestamp(date: F.now.addingTimeInterval(-200))
    let svg = SVGRenderer().render(TripRendering(trip: trip, style: style, now: F.now))
    #expect(
      svg.contains(
        #"data-role="vehicle" data-lat="47.37" data-lng="8.54" data-heading="45" data-stale="true""#
      ))
    #expect(svg.contains(#"<g opacity="0.4">"#))
    let report = try await parsed(svg)
    #expect(report.texts.contains("last seen 3 min ago"))
    #expect(report.markers.map(\.role) == ["pickup", "intermediate", "dropoff", "vehicle"])

    trip.lastLocation?.updateTime = GoogleProtobuf.Timestamp(date: F.now)
    let fresh = SVGRenderer().render(TripRendering(trip: trip, style: style, now: F.now))
    #expect(
      !fresh.contains("data-stale") && !fresh.contains("<g opacity=") && !fresh.contains("last seen"))
    // Without a threshold the document is the one before the option existed.
    #expect(fresh == SVGRenderer().render(TripRendering(trip: trip, now: F.now)))
  }

  @Test("no external reference: nothing is fetched to show the map")
  func selfContained() {
    let svg = SVGRenderer().render(TripRendering(trip: F.enrouteToPickup(), now: F.now))
    #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    for reference in ["href", "url(", "@import", "<script", "<image", "<style"] {
      #expect(!svg.contains(reference), "\(reference)")
    }
  }
}
