import FleetProtos
import FleetProtosFixtures

@testable import GRPCWire

/// Real messages the seed corpora are encoded from: the sample Trip of the benchmarks and
/// requests and errors as a client and a server exchange them.
enum SeedMessages {
  static let trip = SampleTrips.fullyPopulated

  static let getTripRequest: FleetEngine.GetTripRequest = {
    var header = FleetEngine.RequestHeader()
    header.languageCode = "en-US"
    header.regionCode = "US"
    header.sdkVersion = "5.2.1"
    header.sdkType = .consumer
    header.platform = .android
    var request = FleetEngine.GetTripRequest()
    request.header = header
    request.name = trip.name
    request.view = .sdk
    request.currentRouteSegmentVersion = trip.currentRouteSegmentVersion
    request.remainingWaypointsVersion = trip.remainingWaypointsVersion
    return request
  }()

  /// One detail of every type ErrorDetail knows, as a server would send them.
  static let details: [ErrorDetail] = {
    var info = GoogleRPC.ErrorInfo()
    info.reason = "RATE_LIMIT_EXCEEDED"
    info.domain = "fleetengine.googleapis.com"
    info.metadata = ["service": "fleetengine.googleapis.com", "quota_limit": "GetTrip"]
    var retry = GoogleRPC.RetryInfo()
    retry.retryDelay = GoogleProtobuf.Duration(.milliseconds(1_500))
    var debug = GoogleRPC.DebugInfo()
    debug.stackEntries = ["TripService.GetTrip", "TripStore.read"]
    debug.detail = "replica lag"
    var quotaViolation = GoogleRPC.QuotaFailure.Violation()
    quotaViolation.subject = "project:fleet-sample"
    quotaViolation.description = "per-minute GetTrip quota"
    quotaViolation.quotaDimensions = ["region": "us-west1"]
    quotaViolation.futureQuotaValue = 600
    var quota = GoogleRPC.QuotaFailure()
    quota.violations = [quotaViolation]
    var preconditionViolation = GoogleRPC.PreconditionFailure.Violation()
    preconditionViolation.type = "TOS"
    preconditionViolation.subject = "google.com/cloud"
    var precondition = GoogleRPC.PreconditionFailure()
    precondition.violations = [preconditionViolation]
    var fieldViolation = GoogleRPC.BadRequest.FieldViolation()
    fieldViolation.field = "name"
    fieldViolation.description = "must be providers/{provider}/trips/{trip}"
    var localized = GoogleRPC.LocalizedMessage()
    localized.locale = "fr-FR"
    localized.message = "Le trajet n’existe pas"
    fieldViolation.localizedMessage = localized
    var badRequest = GoogleRPC.BadRequest()
    badRequest.fieldViolations = [fieldViolation]
    var requestInfo = GoogleRPC.RequestInfo()
    requestInfo.requestID = "5f0c3b2a-trip-000042"
    var resource = GoogleRPC.ResourceInfo()
    resource.resourceType = "maps.fleetengine.v1.Trip"
    resource.resourceName = trip.name
    var link = GoogleRPC.Help.Link()
    link.description = "Trip names"
    link.url = "https://developers.google.com/maps/documentation/mobility/fleet-engine"
    var help = GoogleRPC.Help()
    help.links = [link]
    return [
      .errorInfo(info), .retryInfo(retry), .debugInfo(debug), .quotaFailure(quota),
      .preconditionFailure(precondition), .badRequest(badRequest), .requestInfo(requestInfo),
      .resourceInfo(resource), .help(help), .localizedMessage(localized),
    ]
  }()

  /// `grpc-status-details-bin`'s bytes for `code` with `details`, as our server encodes them.
  static func statusDetails(_ code: StatusCode, _ details: [ErrorDetail]) -> [UInt8] {
    var error = RPCError(code: code, message: "trip \(trip.name) failed")
    error.details = details
    return error.status.detailsBytes ?? []
  }
}
