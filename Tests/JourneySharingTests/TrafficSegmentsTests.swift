import FleetConsumer
import JourneySharing
import Testing

@Suite("Route segments by traffic")
struct TrafficSegmentsTests {
  private typealias F = TripFixtures

  private func split(
    _ points: [GoogleType.LatLng], _ traffic: [FleetEngine.SpeedReadingInterval],
    style: PolylineStyleOptions = .activeRoute
  ) -> [RouteSegment] {
    RouteSegment.segments(of: points, traffic: traffic, leg: .active, style: style)
  }

  @Test("each run of equal speed is one segment, NO_DATA where no interval covers the route")
  func splitsBySpeed() {
    let points = F.path(8)
    let segments = split(
      points, [F.interval(0, 2, .normal), F.interval(2, 3, .slow), F.interval(4, 6, .trafficJam)])
    #expect(segments.map(\.speed) == [.normal, .slow, .noData, .trafficJam, .noData])
    let runs: [ClosedRange<Int>] = [0...2, 2...3, 3...4, 4...6, 6...7]
    let expected: [[GoogleType.LatLng]] = runs.map { Array(points[$0]) }
    #expect(segments.map(\.points) == expected)
    #expect(segments.allSatisfy { $0.leg == .active && $0.width == 6 && $0.zIndex == 10 })
  }

  @Test("segments join: each starts at the point where the one before it ends")
  func segmentsJoin() {
    let segments = split(F.path(10), [F.interval(1, 4, .slow), F.interval(6, 9, .normal)])
    for (before, after) in zip(segments, segments.dropFirst()) {
      #expect(before.points.last == after.points.first)
    }
    #expect(segments.first?.points.first == F.path(10).first)
    #expect(segments.last?.points.last == F.path(10).last)
  }

  @Test(
    "coloured by speed: green, orange, red, and the route's blue without data",
    arguments: [
      (FleetEngine.SpeedReadingInterval.Speed.normal, RGBColor.trafficGreen),
      (.slow, .trafficOrange), (.trafficJam, .trafficRed), (.unspecified, .routeBlue),
      (.unrecognized(9), .routeBlue),
    ])
  func colours(speed: FleetEngine.SpeedReadingInterval.Speed, colour: RGBColor) {
    let segments = split(F.path(3), [F.interval(0, 2, speed)])
    #expect(segments.count == 1)
    #expect(segments.first?.color == colour)
    #expect(segments.first?.speed == SpeedType(speed))
  }

  @Test("a route without traffic is one NO_DATA segment in the line's colour")
  func withoutTraffic() {
    let segments = split(F.path(5), [])
    #expect(segments.count == 1)
    #expect(segments.first?.speed == .noData)
    #expect(segments.first?.points.count == 5)
    #expect(segments.first?.color == .routeBlue)
  }

  @Test("traffic off in the style: the readings stay, every segment has the stroke colour")
  func trafficOff() {
    var off = PolylineStyleOptions.activeRoute
    off.isTrafficEnabled = false
    off.strokeColor = RGBColor(hex: 0x123456)
    let segments = split(
      F.path(6), [F.interval(0, 2, .normal), F.interval(2, 5, .trafficJam)], style: off)
    #expect(segments.map(\.speed) == [.normal, .trafficJam])
    #expect(segments.allSatisfy { $0.color == RGBColor(hex: 0x123456) })
  }

  @Test("a colour set per speed wins over the default; nil restores it")
  func customColours() {
    var custom = PolylineStyleOptions.activeRoute
    custom.setTrafficColor(RGBColor(hex: 0xABCDEF), for: .slow)
    #expect(custom.trafficColor(for: .slow) == RGBColor(hex: 0xABCDEF))
    #expect(custom.trafficColor(for: .normal) == .trafficGreen)
    custom.setTrafficColor(nil, for: .slow)
    #expect(custom.trafficColor(for: .slow) == .trafficOrange)
  }

  @Test("indices beyond the route are clamped; empty and reversed intervals are ignored")
  func badIndices() {
    let segments = split(
      F.path(4),
      [
        F.interval(-5, 1, .slow), F.interval(2, 2, .trafficJam), F.interval(3, 1, .trafficJam),
        F.interval(2, 99, .normal),
      ])
    #expect(segments.map(\.speed) == [.slow, .noData, .normal])
    #expect(segments.map { $0.points.count } == [2, 2, 2])
  }

  @Test("fewer than two points or an invisible style: no segment")
  func nothingToDraw() {
    #expect(split([], [F.interval(0, 1, .normal)]).isEmpty)
    #expect(split(F.path(1), []).isEmpty)
    var hidden = PolylineStyleOptions.activeRoute
    hidden.isVisible = false
    #expect(split(F.path(4), [], style: hidden).isEmpty)
  }
}
