/// What `fleet-load` calls: one case per `--call` name. The names are an interface (the
/// benchmark package passes them); keep them stable.
enum Workload: String, CaseIterable {
  /// `maps.fleetengine.v1.TripService/GetTrip`, unary, round-robin over the trips.
  case getTrip = "GetTrip"
  /// `fleetconsumer.v1.TripFeed/WatchTrip`: each worker watches a trip until it ends, then
  /// the next one.
  case watchTrip = "WatchTrip"
  /// `grpc.testing.BenchmarkService/UnaryCall`.
  case unaryCall = "grpc.testing.BenchmarkService/UnaryCall"
  /// `grpc.testing.BenchmarkService/StreamingCall`: each worker keeps one stream open and
  /// plays ping-pong on it (send one request, await its response, repeat).
  case streamingCall = "grpc.testing.BenchmarkService/StreamingCall"
  /// `grpc.testing.BenchmarkService/StreamingFromServer`: each worker opens one stream and
  /// counts the responses the server sends continuously, until the run stops.
  case streamingFromServer = "grpc.testing.BenchmarkService/StreamingFromServer"
  /// `grpc.testing.TestService/StreamingOutputCall`: calls asking for `--stream-messages`
  /// responses each.
  case streamingOutputCall = "grpc.testing.TestService/StreamingOutputCall"

  /// What the report counts.
  enum Unit: String {
    /// One call, or one round trip of a ping-pong stream.
    case rpc
    /// One response message of a stream.
    case message
    /// One trip update delivered to a subscriber (`--trips`).
    case update
  }

  var unit: Unit {
    switch self {
    case .getTrip, .unaryCall, .streamingCall: .rpc
    case .watchTrip, .streamingFromServer, .streamingOutputCall: .message
    }
  }

  /// Whether it calls trips (and so needs trips to exist on the server).
  var callsTrips: Bool {
    switch self {
    case .getTrip, .watchTrip: true
    case .unaryCall, .streamingCall, .streamingFromServer, .streamingOutputCall: false
    }
  }

  /// Whether it uses `--request-size` and `--response-size`.
  var hasPayloads: Bool { !callsTrips }
}
