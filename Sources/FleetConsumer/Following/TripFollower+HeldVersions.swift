internal import FleetProtos

extension TripFollower {
  /// The versions of the parts of the trip already held, for the next `GetTrip` request.
  ///
  /// Made, compared with the poll template's and copied on every poll: each version is kept
  /// as its two numbers, not as a `Timestamp` message, whose unknown fields would cost a
  /// retain and a release per version at each step.
  struct HeldVersions: Equatable {
    var currentRouteSegment: Version?
    var remainingWaypoints: Version?
    var currentRouteSegmentTraffic: Version?
    var remainingWaypointsRoute: Version?

    init(
      currentRouteSegment: GoogleProtobuf.Timestamp? = nil,
      remainingWaypoints: GoogleProtobuf.Timestamp? = nil,
      currentRouteSegmentTraffic: GoogleProtobuf.Timestamp? = nil,
      remainingWaypointsRoute: GoogleProtobuf.Timestamp? = nil
    ) {
      self.currentRouteSegment = currentRouteSegment.map(Version.init)
      self.remainingWaypoints = remainingWaypoints.map(Version.init)
      self.currentRouteSegmentTraffic = currentRouteSegmentTraffic.map(Version.init)
      self.remainingWaypointsRoute = remainingWaypointsRoute.map(Version.init)
    }

    /// The versions of the parts `trip` holds, read field by field (no message copied).
    init(held trip: FleetEngine.Trip) {
      currentRouteSegment = Version(trip.currentRouteSegmentVersion?.seconds, trip.currentRouteSegmentVersion?.nanos)
      remainingWaypoints = Version(trip.remainingWaypointsVersion?.seconds, trip.remainingWaypointsVersion?.nanos)
      currentRouteSegmentTraffic = Version(
        trip.currentRouteSegmentTrafficVersion?.seconds, trip.currentRouteSegmentTrafficVersion?.nanos)
      remainingWaypointsRoute = Version(
        trip.remainingWaypointsRouteVersion?.seconds, trip.remainingWaypointsRouteVersion?.nanos)
    }

    /// A part's version: a `Timestamp`'s seconds and nanoseconds.
    struct Version: Equatable {
      let seconds: Int64
      let nanos: Int32

      init(_ timestamp: GoogleProtobuf.Timestamp) {
        seconds = timestamp.seconds
        nanos = timestamp.nanos
      }

      /// A version when both numbers are there (the timestamp is), else nil.
      init?(_ seconds: Int64?, _ nanos: Int32?) {
        guard let seconds, let nanos else { return nil }
        self.seconds = seconds
        self.nanos = nanos
      }

      /// The version as the request sends it.
      var timestamp: GoogleProtobuf.Timestamp {
        var timestamp = GoogleProtobuf.Timestamp()
        timestamp.seconds = seconds
        timestamp.nanos = nanos
        return timestamp
      }
    }
  }
}
