/// Follows Fleet Engine trips for one provider: hands out one ``TripModel`` per trip name,
/// all sharing the service's event loop (one HTTP/2 connection until the server's stream
/// limit is reached; another loop per ``Options/tripsPerEventLoop`` trips, up to
/// ``Options/eventLoops``) and one per-trip token cache.
///
/// ```swift
/// let service = try TripService(configuration: .init(
///   endpoint: try .init("fleetengine.example.com:443"), providerID: "my-project",
///   accessTokenProvider: HTTPAccessTokenProvider(url: "https://backend/token/{tripID}")))
/// let model = try service.tripModel(forTripName: "providers/my-project/trips/trip-42")
/// model.register(subscriber)
/// ```
///
/// Thread-safe; use it from any task. Models keep the shared connections open while any of
/// them is alive; ``shutdown()`` stops them all at once.
public final class TripService: Sendable {
  /// The configuration it was made with.
  public let configuration: Configuration
  let core: ServiceCore

  /// A service for `configuration`; nothing is connected until a model starts following.
  ///
  /// Throws ``ConfigurationError`` when the configuration cannot work: an invalid provider
  /// ID, a poll interval under 100 ms, a call timeout that is not positive, fewer than one
  /// event loop or connection, or plaintext to a host that is not loopback without
  /// ``Options/allowsTokensOverPlaintext``.
  public init(configuration: Configuration) throws(ConfigurationError) {
    do {
      _ = try TripName(providerID: configuration.providerID, tripID: "check")
    } catch {
      throw ConfigurationError("invalid provider ID: \(error.message)")
    }
    let options = configuration.options
    guard options.pollInterval >= .milliseconds(100) else {
      throw ConfigurationError(
        "the poll interval must be at least 100 ms, not \(options.pollInterval)")
    }
    guard options.callTimeout > .zero else {
      throw ConfigurationError("the call timeout must be positive, not \(options.callTimeout)")
    }
    guard options.eventLoops >= 1 else {
      throw ConfigurationError(
        "the service needs at least 1 event loop, not \(options.eventLoops)")
    }
    guard options.tripsPerEventLoop >= 1 else {
      throw ConfigurationError(
        "an event loop takes at least 1 trip before the next starts, not \(options.tripsPerEventLoop)")
    }
    guard options.maxConnections >= 1 else {
      throw ConfigurationError(
        "the service needs at least 1 connection, not \(options.maxConnections)")
    }
    let endpoint = configuration.endpoint
    if case .plaintext = configuration.transportSecurity, !endpoint.isLoopback,
      !options.allowsTokensOverPlaintext
    {
      // GRPCWire refuses such calls too (numeric hosts at once, names once connected); saying
      // so here fails at configuration time, before any model is made.
      throw ConfigurationError(
        "plaintext to \(endpoint) would send access tokens unencrypted over the network; "
          + "use TLS, or set options.allowsTokensOverPlaintext if the network is trusted")
    }
    self.configuration = configuration
    core = ServiceCore(configuration: configuration)
  }

  /// The model of trip `name` (`providers/{provider_id}/trips/{trip_id}`): the same instance
  /// for the same name as long as it is alive.
  ///
  /// Throws INVALID_ARGUMENT (category `.client`, domain `io.grpc`) when `name` is malformed
  /// or names another provider's trip; nothing is sent then.
  public func tripModel(forTripName name: String) throws(RPCError) -> TripModel {
    let tripName = try TripName(name)
    guard tripName.providerID == configuration.providerID else {
      throw RPCError(
        code: .invalidArgument,
        message: "trip name \"\(name)\" belongs to provider \"\(tripName.providerID)\", "
          + "but this service follows trips of provider \"\(configuration.providerID)\"")
    }
    return core.model(for: tripName)
  }

  /// Every model of this service that is alive (held by someone), following or not, in no
  /// particular order.
  public var tripModels: [TripModel] { core.liveModels }

  /// The models that are following their trips now.
  public var activeTripModels: [TripModel] { core.liveModels.filter { $0.state == .active } }

  /// Whether a model of trip `name` is alive; false for a name that is malformed or of
  /// another provider. Asking makes no model.
  public func hasTripModel(forTripName name: String) -> Bool {
    guard let tripName = try? TripName(name), tripName.providerID == configuration.providerID
    else { return false }
    return core.existingModel(for: tripName) != nil
  }

  /// Stops every model of this service and closes its channel. Models that get a subscriber
  /// afterwards report UNAVAILABLE on every update.
  public func shutdown() {
    for model in core.liveModels { model.stopFollowing() }
    core.closeChannels()
  }
}
