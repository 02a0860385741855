import Foundation
import GRPCWire
import RouteGuideCommon
import RouteGuideProtos
import Synchronization

/// routeguide.RouteGuide: the generated `ServiceProtocol`, implemented over a list of features.
final class RouteGuideService: Routeguide.RouteGuide.ServiceProtocol {
  let features: [Routeguide.Feature]
  /// Every note received by RouteChat so far, by location.
  private let notes = Mutex<[Location: [Routeguide.RouteNote]]>([:])

  struct Location: Hashable {
    var latitude: Int32
    var longitude: Int32

    init(_ point: Routeguide.Point?) {
      latitude = point?.latitude ?? 0
      longitude = point?.longitude ?? 0
    }
  }

  init(features: [Routeguide.Feature]) {
    self.features = features
  }

  /// The feature at `point`, or a feature with an empty name and that location.
  func getFeature(_ request: Routeguide.Point, context: ServerContext) async throws
    -> Routeguide.Feature
  {
    if let feature = feature(at: request) { return feature }
    var unnamed = Routeguide.Feature()
    unnamed.location = request
    return unnamed
  }

  /// Every named feature inside the rectangle (corners in either order), in database order.
  func listFeatures(
    _ request: Routeguide.Rectangle, responses: ResponseWriter<Routeguide.Feature>,
    context: ServerContext
  ) async throws {
    let lo = request.lo ?? Routeguide.Point()
    let hi = request.hi ?? Routeguide.Point()
    let latitudes = min(lo.latitude, hi.latitude)...max(lo.latitude, hi.latitude)
    let longitudes = min(lo.longitude, hi.longitude)...max(lo.longitude, hi.longitude)
    for feature in features where !feature.name.isEmpty {
      guard let location = feature.location, latitudes.contains(location.latitude),
        longitudes.contains(location.longitude)
      else { continue }
      try await responses.write(feature)
    }
  }

  /// The points of a route: how many, how many are named features, the distance along them
  /// and the seconds from the first point to the end of the stream.
  func recordRoute(_ requests: RequestStream<Routeguide.Point>, context: ServerContext)
    async throws -> Routeguide.RouteSummary
  {
    var summary = Routeguide.RouteSummary()
    var previous: Routeguide.Point?
    let start = ContinuousClock.now
    for try await point in requests {
      summary.pointCount += 1
      if feature(at: point) != nil { summary.featureCount += 1 }
      if let previous { summary.distance += previous.distance(to: point) }
      previous = point
    }
    summary.elapsedTime = Int32((ContinuousClock.now - start).components.seconds)
    return summary
  }

  /// Answers each note with the notes received earlier at its location (on any call).
  func routeChat(
    _ requests: RequestStream<Routeguide.RouteNote>,
    responses: ResponseWriter<Routeguide.RouteNote>,
    context: ServerContext
  ) async throws {
    for try await note in requests {
      let earlier = notes.withLock { notes in
        defer { notes[Location(note.location), default: []].append(note) }
        return notes[Location(note.location)] ?? []
      }
      for earlierNote in earlier { try await responses.write(earlierNote) }
    }
  }

  private func feature(at point: Routeguide.Point) -> Routeguide.Feature? {
    features.first { feature in
      !feature.name.isEmpty && feature.location?.latitude == point.latitude
        && feature.location?.longitude == point.longitude
    }
  }
}
