internal import GRPCWire
internal import FoundationEssentials

// What a model's calls send: the metadata, the GetTrip and WatchTrip requests for the versions
// it holds, and the poll's template, which keeps the framed request between polls.

extension TripModel {
  /// The metadata of every call: the token and Fleet Engine's routing header.
  func metadata(_ token: AccessToken) -> Metadata {
    var metadata = Metadata()
    metadata.add("authorization", "Bearer \(token.token)")
    metadata.add("x-goog-request-params", core.routingHeader)
    return metadata
  }

  /// The `GetTrip` request: header, name, view, the point-list route format, held versions.
  func request(sending versions: TripFollower.HeldVersions) -> FleetEngine.GetTripRequest {
    let options = core.options
    var header = FleetEngine.RequestHeader()
    header.regionCode = options.regionCode
    header.languageCode = options.languageCode
    header.sdkType = .consumer
    header.sdkVersion = TripService.sdkVersion
    var request = FleetEngine.GetTripRequest()
    request.header = header
    request.name = tripName.description
    request.view = options.tripView
    request.routeFormatType = .latLngListType
    request.currentRouteSegmentVersion = versions.currentRouteSegment?.timestamp
    request.remainingWaypointsVersion = versions.remainingWaypoints?.timestamp
    request.currentRouteSegmentTrafficVersion = versions.currentRouteSegmentTraffic?.timestamp
    request.remainingWaypointsRouteVersion = versions.remainingWaypointsRoute?.timestamp
    return request
  }

  /// The `WatchTrip` request of the trip feed: name, view, route format, held versions.
  func watchRequest(sending versions: TripFollower.HeldVersions)
    -> FleetFeed.WatchTripRequest
  {
    var request = FleetFeed.WatchTripRequest()
    request.name = tripName.description
    request.view = core.options.tripView
    request.routeFormatType = .latLngListType
    request.currentRouteSegmentVersion = versions.currentRouteSegment?.timestamp
    request.remainingWaypointsVersion = versions.remainingWaypoints?.timestamp
    request.currentRouteSegmentTrafficVersion = versions.currentRouteSegmentTraffic?.timestamp
    request.remainingWaypointsRouteVersion = versions.remainingWaypointsRoute?.timestamp
    return request
  }
}

extension TripService {
  /// Sent as `RequestHeader.sdk_version`.
  public static let sdkVersion = "FleetConsumer/0.1.0"
}

/// What a poll sends, kept by its model for the next poll: the request for the versions
/// held, framed, and the checked fields carrying the token (dropped when the server refuses
/// the token). Immutable, so reading it from
/// the model costs one retain.
final class PollTemplate: Sendable {
  let versions: TripFollower.HeldVersions
  let framed: [UInt8]
  let token: AccessToken
  /// Until when the token cache would hand `token` out (nil: while it is not invalidated):
  /// the next poll reuses it without asking the cache.
  let tokenReusableUntil: Date?
  let prepared: PreparedCall

  init(
    versions: TripFollower.HeldVersions, framed: [UInt8], token: AccessToken,
    tokenReusableUntil: Date?, prepared: PreparedCall
  ) {
    self.versions = versions
    self.framed = framed
    self.token = token
    self.tokenReusableUntil = tokenReusableUntil
    self.prepared = prepared
  }
}
