import FleetConsumer
import Foundation

/// Turns a trip model's events into `fleet-follow`'s output: JSON lines (`--json`) or a
/// readable live view.
///
/// The JSON contract: per update, one `trip` line listing exactly the events printed for it,
/// then those events in a fixed order; an event is printed only when its value differs from
/// the last one printed (a list when its content does, even at the same length); a value the
/// trip does not have prints nothing. The model already reports only changed properties;
/// this printer compares the printed values themselves, so, for instance, a pickup time that
/// moved by less than a second prints nothing, since the line shows whole seconds.
struct EventPrinter {
  private let json: Bool
  private var lastPrinted: [String: AnyHashable]

  init(json: Bool) {
    self.json = json
    lastPrinted = [:]
    for property in Self.properties {
      if let baseline = property.baseline { lastPrinted[property.name] = baseline }
    }
  }

  /// The lines to print for `event`, in order; none for events the contract does not show.
  mutating func lines(for event: TripModelEvent) -> [String] {
    switch event {
    case .tripUpdated(let trip, _):
      return lines(for: trip)
    case .updateFailed(let error):
      return [Self.errorLine(error, json: json)]
    case .tripStatus, .activeRouteRemainingDistance, .activeRoute, .vehicleLocation,
      .pickupLocation, .dropoffLocation, .pickupETA, .dropoffETA, .remainingWaypoints,
      .intermediateDestinations, .activeRouteTraffic, .etaToNextWaypoint, .tripName,
      .vehicleID, .tripType, .numberOfPassengers, .intermediateDestinationIndex,
      .remainingRoute, .remainingRouteDistance, .remainingRouteTraffic:
      // Derived from the trip of the `tripUpdated` that precedes them.
      return []
    case .stateChanged, .refreshed:
      // Not part of the stdout contract (the state goes to stderr).
      return []
    }
  }

  private mutating func lines(for trip: FleetEngine.Trip) -> [String] {
    var changed: [Property] = []
    for property in Self.properties {
      guard let value = property.value(trip), value != lastPrinted[property.name] else {
        continue
      }
      lastPrinted[property.name] = value
      changed.append(property)
    }
    guard !changed.isEmpty else { return [] }
    if json {
      var header = JSONLine()
      header.add("event", "trip")
      header.add("fields", changed.map(\.name))
      return [header.line]
        + changed.map { property in
          var line = JSONLine()
          line.add("event", property.name)
          property.json(trip, &line)
          return line.line
        }
    }
    let parts = changed.map { "\($0.label) \($0.text(trip))" }
    return ["\(Self.clock())  " + parts.joined(separator: "  ·  ")]
  }

  /// The line of a failed update: the contract's `error` object with `json`.
  static func errorLine(_ error: RPCError, json: Bool) -> String {
    let category =
      switch error.category {
      case .serverOrNetwork: "serverOrNetwork"
      case .client: "client"
      case .other: "other"
      }
    guard json else {
      let advice =
        switch error.category {
        case .serverOrNetwork: "recovering by itself"
        case .client: "fix the cause; still retrying"
        case .other: "retrying slowly; report it if it persists"
        }
      return "\(Self.clock())  error \(error.code.name): \(error.message)  (\(advice))"
    }
    var line = JSONLine()
    line.add("event", "error")
    line.add("domain", RPCError.errorDomain)
    line.add("code", error.code.rawValue)
    line.add("status", error.code.name)
    line.add("category", category)
    line.add("message", error.message)
    return line.line
  }

  private static func clock() -> String {
    let seconds = Int(Date().timeIntervalSince1970) % 86_400
    return String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
  }

  // MARK: The printed properties, in output order

  private struct Property {
    /// The event name.
    let name: String
    /// Its name in the readable view.
    let label: String
    /// What "nothing printed yet" compares as: nil, or an empty list.
    let baseline: AnyHashable?
    /// The value compared with the last one printed; nil when the trip has none.
    let value: (FleetEngine.Trip) -> AnyHashable?
    /// Adds the event's fields to its JSON line.
    let json: (FleetEngine.Trip, inout JSONLine) -> Void
    /// The value in the readable view.
    let text: (FleetEngine.Trip) -> String
  }

  // Computed: a table of closures is not Sendable, and building it costs nothing next to I/O.
  private static var properties: [Property] {
    [
      Property(
        name: "tripStatus", label: "status", baseline: nil,
        value: { $0.tripStatus == .unknownTripStatus ? nil : $0.tripStatus },
        json: { trip, line in line.add("status", trip.tripStatus.description) },
        text: { $0.tripStatus.description }),
      Property(
        name: "remainingDistance", label: "distance left", baseline: nil,
        value: { $0.remainingDistanceMeters },
        json: { trip, line in line.add("meters", Int(trip.remainingDistanceMeters ?? 0)) },
        text: { "\($0.remainingDistanceMeters ?? 0) m" }),
      Property(
        name: "activeRoute", label: "route", baseline: [GoogleType.LatLng](),
        value: { $0.route },
        json: { trip, line in line.add("points", trip.route.count) },
        text: { "\($0.route.count) points" }),
      Property(
        name: "vehicleLocation", label: "vehicle at", baseline: nil,
        value: { $0.lastLocation?.location },
        json: { trip, line in latLng(trip.lastLocation?.location, into: &line) },
        text: { describe($0.lastLocation?.location) }),
      Property(
        name: "pickupLocation", label: "pickup at", baseline: nil,
        value: { $0.pickupPoint?.point },
        json: { trip, line in latLng(trip.pickupPoint?.point, into: &line) },
        text: { describe($0.pickupPoint?.point) }),
      Property(
        name: "dropoffLocation", label: "drop-off at", baseline: nil,
        value: { $0.dropoffPoint?.point },
        json: { trip, line in latLng(trip.dropoffPoint?.point, into: &line) },
        text: { describe($0.dropoffPoint?.point) }),
      Property(
        name: "pickupETA", label: "pickup ETA", baseline: nil,
        value: { $0.pickupTime?.seconds },
        json: { trip, line in line.add("seconds", trip.pickupTime?.seconds ?? 0) },
        text: { describe($0.pickupTime) }),
      Property(
        name: "dropoffETA", label: "drop-off ETA", baseline: nil,
        value: { $0.dropoffTime?.seconds },
        json: { trip, line in line.add("seconds", trip.dropoffTime?.seconds ?? 0) },
        text: { describe($0.dropoffTime) }),
      Property(
        name: "remainingWaypoints", label: "waypoints left", baseline: [FleetEngine.TripWaypoint](),
        value: { $0.remainingWaypoints },
        json: { trip, line in line.add("count", trip.remainingWaypoints.count) },
        text: { "\($0.remainingWaypoints.count)" }),
      Property(
        name: "intermediateDestinations", label: "intermediate destinations",
        baseline: [FleetEngine.TerminalLocation](),
        value: { $0.intermediateDestinations },
        json: { trip, line in line.add("count", trip.intermediateDestinations.count) },
        text: { "\($0.intermediateDestinations.count)" }),
      Property(
        name: "activeRouteTraffic", label: "traffic segments",
        baseline: [FleetEngine.SpeedReadingInterval](),
        value: { $0.currentRouteSegmentTraffic?.speedReadingInterval ?? [] },
        json: { trip, line in
          line.add("segments", trip.currentRouteSegmentTraffic?.speedReadingInterval.count ?? 0)
        },
        text: { "\($0.currentRouteSegmentTraffic?.speedReadingInterval.count ?? 0)" }),
      // Added later, so after the first eleven: their order is part of the contract.
      Property(
        name: "vehicleID", label: "vehicle", baseline: nil,
        value: { $0.vehicleID.isEmpty ? nil : $0.vehicleID },
        json: { trip, line in line.add("id", trip.vehicleID) },
        text: { $0.vehicleID }),
      Property(
        name: "tripType", label: "type", baseline: nil,
        value: { $0.tripType == .unknownTripType ? nil : $0.tripType },
        json: { trip, line in line.add("type", trip.tripType.description) },
        text: { $0.tripType.description }),
      Property(
        name: "numberOfPassengers", label: "passengers", baseline: nil,
        value: { $0.numberOfPassengers == 0 ? nil : $0.numberOfPassengers },
        json: { trip, line in line.add("count", Int(trip.numberOfPassengers)) },
        text: { "\($0.numberOfPassengers)" }),
      Property(
        name: "intermediateDestinationIndex", label: "intermediate destination", baseline: nil,
        value: { $0.intermediateDestinations.isEmpty ? nil : $0.intermediateDestinationIndex },
        json: { trip, line in line.add("index", Int(trip.intermediateDestinationIndex)) },
        text: { "#\($0.intermediateDestinationIndex)" }),
      Property(
        name: "remainingRoute", label: "remaining route", baseline: [GoogleType.LatLng](),
        value: { $0.remainingRoute },
        json: { trip, line in line.add("points", trip.remainingRoute.count) },
        text: { "\($0.remainingRoute.count) points" }),
      Property(
        name: "remainingRouteDistance", label: "remaining route distance", baseline: nil,
        value: { $0.remainingRouteDistanceMeters },
        json: { trip, line in line.add("meters", Int(trip.remainingRouteDistanceMeters ?? 0)) },
        text: { "\($0.remainingRouteDistanceMeters ?? 0) m" }),
      Property(
        name: "remainingRouteTraffic", label: "remaining traffic segments",
        baseline: [FleetEngine.SpeedReadingInterval](),
        value: { $0.remainingRouteTraffic },
        json: { trip, line in line.add("segments", trip.remainingRouteTraffic.count) },
        text: { "\($0.remainingRouteTraffic.count)" }),
      Property(
        name: "etaToNextWaypoint", label: "next stop ETA", baseline: nil,
        value: { $0.etaToFirstWaypoint?.seconds },
        json: { trip, line in line.add("seconds", trip.etaToFirstWaypoint?.seconds ?? 0) },
        text: { describe($0.etaToFirstWaypoint) }),
    ]
  }

  private static func latLng(_ point: GoogleType.LatLng?, into line: inout JSONLine) {
    line.add("lat", point?.latitude ?? 0)
    line.add("lng", point?.longitude ?? 0)
  }

  private static func describe(_ point: GoogleType.LatLng?) -> String {
    guard let point else { return "?" }
    return String(format: "%.6f,%.6f", point.latitude, point.longitude)
  }

  private static func describe(_ time: GoogleProtobuf.Timestamp?) -> String {
    guard let time else { return "?" }
    let seconds = Int(time.seconds) % 86_400
    return String(format: "%02d:%02d:%02d UTC", seconds / 3600, seconds / 60 % 60, seconds % 60)
  }
}
