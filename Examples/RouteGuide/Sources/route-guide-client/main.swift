import Foundation
import GRPCWire
import RouteGuideCommon
import RouteGuideProtos

// route-guide-client [--port N] [--features FILE]
//
// Calls every RPC of routeguide.RouteGuide on 127.0.0.1:N (default 10000) through the
// generated client, and prints what came back, one line per answer:
//   GetFeature <lat>,<lon>: <name> | no feature
//   ListFeatures <lat>,<lon>: <name>          (each feature in the rectangle)
//   RecordRoute: <points> points, <features> features, <metres> m
//   RouteChat: <message> at <lat>,<lon>       (each note the server sent back)
// The route recorded is the first ten locations of FILE (default route_guide_db.json).

let options = Options.parse(tool: "route-guide-client")

func show(_ point: Routeguide.Point?) -> String {
  "\(point?.latitude ?? 0),\(point?.longitude ?? 0)"
}

let channel = GRPCChannel(host: "127.0.0.1", port: options.port)
let client = Routeguide.RouteGuide.Client(channel: channel)
let callOptions = CallOptions(timeout: .seconds(10))
do {
  // Unary: a point with a feature, and one without.
  for point in [Routeguide.Point.at(409_146_138, -746_188_906), .at(0, 0)] {
    let feature = try await client.getFeature(point, options: callOptions).message
    print("GetFeature \(show(point)): \(feature.name.isEmpty ? "no feature" : feature.name)")
  }

  // Server streaming: the features in a rectangle.
  var rectangle = Routeguide.Rectangle()
  rectangle.lo = .at(400_000_000, -750_000_000)
  rectangle.hi = .at(420_000_000, -730_000_000)
  try await client.listFeatures(rectangle, options: callOptions) { features in
    for try await feature in features {
      print("ListFeatures \(show(feature.location)): \(feature.name)")
    }
  }

  // Client streaming: a route through the first ten locations of the database.
  let route = try Features.load(options.featuresPath).prefix(10).compactMap(\.location)
  let summary = try await client.recordRoute(options: callOptions) { points in
    for point in route { try await points.write(point) }
  }.message
  print(
    "RecordRoute: \(summary.pointCount) points, \(summary.featureCount) features, "
      + "\(summary.distance) m")

  // Bidirectional: notes at a few places; the server answers each with the earlier notes
  // left at its place.
  let notes = [
    ("First message", Routeguide.Point.at(0, 0)), ("Second message", .at(0, 1)),
    ("Third message", .at(1, 0)), ("Fourth message", .at(0, 0)),
  ]
  try await client.routeChat(options: callOptions) { requests, responses in
    for (message, location) in notes {
      var note = Routeguide.RouteNote()
      note.message = message
      note.location = location
      try await requests.write(note)
    }
    requests.finish()
    for try await note in responses {
      print("RouteChat: \(note.message) at \(show(note.location))")
    }
  }
} catch {
  FileHandle.standardError.write(Data("route-guide-client: \(error)\n".utf8))
  channel.close()
  exit(1)
}
channel.close()
