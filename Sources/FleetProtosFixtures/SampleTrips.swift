public import FleetProtos

/// Realistic Fleet Engine messages for benchmarks and tests: not part of the library's API.
public enum SampleTrips {
  /// A trip as `GetTrip` returns it mid-journey, with every one of Trip's fields set: the
  /// vehicle is driving to the pickup, with a 24-point route, two remaining waypoints with
  /// their paths and traffic, one intermediate destination, and a full last location.
  public static let fullyPopulated: FleetEngine.Trip = {
    var trip = FleetEngine.Trip()
    trip.name = "providers/fleet-sample/trips/trip-000042"
    trip.vehicleID = "vehicle-7"
    trip.tripStatus = .enrouteToPickup
    trip.tripType = .exclusive
    trip.pickupPoint = terminal(37.4221, -122.0841, trip: "trip-000042", type: .pickupWaypointType)
    trip.actualPickupPoint = stop(37.42212, -122.08405, at: 1_763_713_200)
    trip.actualPickupArrivalPoint = stop(37.42215, -122.08401, at: 1_763_713_080)
    trip.pickupTime = time(1_763_713_230, 500_000_000)
    trip.intermediateDestinations = [
      terminal(37.4302, -122.0955, trip: "trip-000042", type: .intermediateDestinationWaypointType)
    ]
    trip.intermediateDestinationsVersion = time(1_763_712_900, 0)
    trip.intermediateDestinationIndex = 0
    trip.actualIntermediateDestinationArrivalPoints = [stop(37.43019, -122.09549, at: 1_763_713_500)]
    trip.actualIntermediateDestinations = [stop(37.43021, -122.09551, at: 1_763_713_560)]
    trip.dropoffPoint = terminal(37.4419, -122.1430, trip: "trip-000042", type: .dropOffWaypointType)
    trip.actualDropoffPoint = stop(37.44188, -122.14297, at: 1_763_714_400)
    trip.dropoffTime = time(1_763_714_410, 250_000_000)
    let toPickup = path(from: (37.4050, -122.0700), to: (37.4221, -122.0841), points: 12)
    let toDropoff = path(from: (37.4221, -122.0841), to: (37.4419, -122.1430), points: 12)
    trip.remainingWaypoints = [
      waypoint(toPickup, type: .pickupWaypointType, meters: 2_350, eta: 1_763_713_190),
      waypoint(toDropoff, type: .dropOffWaypointType, meters: 6_120, eta: 1_763_714_380),
    ]
    trip.vehicleWaypoints = trip.remainingWaypoints
    trip.route = toPickup + toDropoff
    trip.currentRouteSegment = "ozvcFdjyhVcAjBsBnCyAbBeBxAwBtA}AbAcBp@kBd@wB^yBTiBFoB?gBQ"
    trip.currentRouteSegmentVersion = time(1_763_712_960, 125_000_000)
    trip.currentRouteSegmentTraffic = traffic(points: toPickup.count)
    trip.currentRouteSegmentTrafficVersion = time(1_763_712_960, 125_000_000)
    trip.currentRouteSegmentEndPoint = trip.remainingWaypoints[0]
    trip.remainingDistanceMeters = 2_350
    trip.etaToFirstWaypoint = time(1_763_713_190, 0)
    var remaining = GoogleProtobuf.Duration()
    remaining.seconds = 230
    trip.remainingTimeToFirstWaypoint = remaining
    trip.remainingWaypointsVersion = time(1_763_712_960, 0)
    trip.remainingWaypointsRouteVersion = time(1_763_712_960, 0)
    trip.numberOfPassengers = 2
    trip.lastLocation = vehicleLocation()
    trip.lastLocationSnappable = true
    trip.view = .sdk
    trip.attributes = [
      attribute("fare_class", .stringValue("standard")),
      attribute("wheelchair", .boolValue(false)),
      attribute("quoted_fare", .numberValue(18.75)),
    ]
    return trip
  }()

  static func latLng(_ latitude: Double, _ longitude: Double) -> GoogleType.LatLng {
    var p = GoogleType.LatLng()
    p.latitude = latitude
    p.longitude = longitude
    return p
  }

  static func time(_ seconds: Int64, _ nanos: Int32) -> GoogleProtobuf.Timestamp {
    var t = GoogleProtobuf.Timestamp()
    t.seconds = seconds
    t.nanos = nanos
    return t
  }

  static func path(from a: (Double, Double), to b: (Double, Double), points: Int)
    -> [GoogleType.LatLng]
  {
    (0..<points).map { i in
      let f = Double(i) / Double(points - 1)
      // A little sideways wobble so the points look like streets, not a ruler line.
      let wobble = (i % 2 == 0 ? 1.0 : -1.0) * 0.0004
      return latLng(a.0 + (b.0 - a.0) * f + wobble, a.1 + (b.1 - a.1) * f)
    }
  }

  static func terminal(
    _ latitude: Double, _ longitude: Double, trip: String, type: FleetEngine.WaypointType
  ) -> FleetEngine.TerminalLocation {
    var t = FleetEngine.TerminalLocation()
    t.point = latLng(latitude, longitude)
    var id = FleetEngine.TerminalPointId()
    id.id = .placeID("ChIJ2eUgeAK6j4ARbn5u_wAGqWA")
    id.value = "ChIJ2eUgeAK6j4ARbn5u_wAGqWA"
    t.terminalPointID = id
    t.accessPointID = "access-1"
    t.tripID = trip
    t.terminalLocationType = type
    return t
  }

  static func stop(_ latitude: Double, _ longitude: Double, at seconds: Int64)
    -> FleetEngine.StopLocation
  {
    var s = FleetEngine.StopLocation()
    s.point = latLng(latitude, longitude)
    s.timestamp = time(seconds, 0)
    s.stopTime = time(seconds + 45, 0)
    return s
  }

  static func traffic(points: Int) -> FleetEngine.ConsumableTrafficPolyline {
    var t = FleetEngine.ConsumableTrafficPolyline()
    let speeds: [FleetEngine.SpeedReadingInterval.Speed] = [.normal, .slow, .trafficJam, .normal]
    let step = max(1, points / speeds.count)
    t.speedReadingInterval = speeds.enumerated().map { i, speed in
      var s = FleetEngine.SpeedReadingInterval()
      s.startPolylinePointIndex = Int32(i * step)
      s.endPolylinePointIndex = Int32(min(points - 1, (i + 1) * step))
      s.speed = speed
      return s
    }
    t.encodedPathToWaypoint = "ozvcFdjyhVcAjBsBnCyAbBeBxAwBtA}AbAcBp@"
    return t
  }

  static func waypoint(
    _ path: [GoogleType.LatLng], type: FleetEngine.WaypointType, meters: Int32, eta: Int64
  ) -> FleetEngine.TripWaypoint {
    var w = FleetEngine.TripWaypoint()
    let end = path[path.count - 1]
    w.location = terminal(end.latitude, end.longitude, trip: "trip-000042", type: type)
    w.tripID = "trip-000042"
    w.waypointType = type
    w.pathToWaypoint = path
    w.encodedPathToWaypoint = "ozvcFdjyhVcAjBsBnCyAbBeBxAwBtA"
    w.trafficToWaypoint = traffic(points: path.count)
    w.distanceMeters = meters
    w.eta = time(eta, 0)
    var d = GoogleProtobuf.Duration()
    d.seconds = 230
    d.nanos = 500_000_000
    w.duration = d
    return w
  }

  static func vehicleLocation() -> FleetEngine.VehicleLocation {
    var l = FleetEngine.VehicleLocation()
    l.location = latLng(37.4050, -122.0700)
    l.horizontalAccuracy = 4.5
    l.latlngAccuracy = 4.5
    l.heading = 312
    l.bearingAccuracy = 8
    l.headingAccuracy = 8
    l.altitude = 12.5
    l.verticalAccuracy = 3
    l.altitudeAccuracy = 3
    l.speedKmph = 42
    l.speed = 11.7
    l.speedAccuracy = 0.8
    l.updateTime = time(1_763_712_958, 900_000_000)
    l.serverTime = time(1_763_712_959, 100_000_000)
    l.locationSensor = .fusedLocationProvider
    l.isRoadSnapped = true
    l.isGpsSensorEnabled = true
    l.timeSinceUpdate = 1
    l.numStaleUpdates = 0
    l.rawLocation = latLng(37.40502, -122.07003)
    l.rawLocationTime = time(1_763_712_958, 800_000_000)
    l.rawLocationSensor = .gps
    l.rawLocationAccuracy = 6
    l.flpLocation = latLng(37.40501, -122.07001)
    l.flpUpdateTime = time(1_763_712_958, 850_000_000)
    l.flpLatlngAccuracyMeters = 5
    l.flpHeadingDegrees = 311
    l.supplementalLocation = latLng(37.40499, -122.06998)
    l.supplementalLocationTime = time(1_763_712_958, 700_000_000)
    l.supplementalLocationSensor = .customerSuppliedLocation
    l.supplementalLocationAccuracy = 10
    l.roadSnapped = true
    return l
  }

  static func attribute(_ key: String, _ value: FleetEngine.TripAttribute.TripAttributeValue)
    -> FleetEngine.TripAttribute
  {
    var a = FleetEngine.TripAttribute()
    a.key = key
    a.tripAttributeValue = value
    return a
  }
}
