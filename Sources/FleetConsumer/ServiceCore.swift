internal import Dispatch
internal import Logging
internal import FleetSync
internal import GRPCWire
internal import Synchronization

/// What the models of one ``TripService`` share: the lanes (event loops with their
/// channels), the token cache, the callback queue, the settings, and the registry of live
/// models.
///
/// Each model holds it strongly, so models keep working when the `TripService` object itself
/// is released; the channels close once the last of them is gone.
final class ServiceCore: Sendable {
  let providerID: String
  /// The configuration's logger, with the provider (`fleet.provider`).
  let logger: Logger
  let metrics: TripMetrics
  let options: TripService.Options
  /// The event loops started so far, each with its channel (see ``laneForNewModel(at:)``).
  private let startedLanes = PosixMutex(Lanes())
  /// The most lanes, and how the next is made.
  private let laneLimit: Int
  private let makeLane: @Sendable (Int) -> FollowLane

  private struct Lanes {
    var all: [FollowLane] = []
    /// Set by ``closeChannels()``: a lane started afterwards starts closed.
    var closed = false
  }
  let tokens: TokenCache
  /// The poll interval and retry policy every model's follower uses.
  let followSettings: TripFollower.Settings
  /// Runs a callback job on the configured executor.
  let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
  /// `x-goog-request-params`, Fleet Engine's routing header, the same for every call.
  let routingHeader: String
  /// The live models by trip ID. Not retained, nor weak: a weak reference would give every
  /// model a side table for good, which sends each retain and release of it (several a poll)
  /// down the runtime's slow path. A model's deinit removes its entry under this lock
  /// (``modelDeinitialized(_:id:)``), and entries are read only under it.
  private let models = PosixMutex<[String: UnretainedReference<TripModel>]>([:])
  /// Set once the server answered the trip feed with UNIMPLEMENTED.
  private let feedUnimplemented = PosixMutex(false)

  init(configuration: TripService.Configuration) {
    var logger = configuration.logger
    logger[metadataKey: "fleet.provider"] = "\(configuration.providerID)"
    self.logger = logger
    metrics = TripMetrics(factory: configuration.metricsFactory)
    providerID = configuration.providerID
    options = configuration.options
    followSettings = TripFollower.Settings(
      pollInterval: configuration.options.pollInterval,
      retryPolicy: configuration.options.retryPolicy,
      hidesOtherTrips: configuration.options.hidesOtherTrips)
    tokens = TokenCache(
      provider: configuration.accessTokenProvider,
      refreshMargin: configuration.options.tokenRefreshMargin, logger: logger)
    let schedule = configuration.options.callbackExecutor.scheduler(
      serviceQueue: DispatchQueue(label: "FleetConsumer.TripService.callbacks"))
    self.schedule = schedule
    // Every lane needs a connection of its own: no more lanes than connections. Each may
    // open its first; the rest are shared, so a lane that needs many (feed streams) may have
    // them while the others need one.
    let options = configuration.options
    laneLimit = max(1, min(options.eventLoops, options.maxConnections))
    var channelOptions = Self.channelOptions(configuration)
    if laneLimit > 1 {
      channelOptions.sharedConnections = SharedConnections(
        places: options.maxConnections - laneLimit)
    }
    let endpoint = configuration.endpoint
    let pollInterval = options.pollInterval
    makeLane = { [channelOptions] index in
      FollowLane(
        name: "FleetConsumer-\(index)", endpoint: endpoint, options: channelOptions,
        pollInterval: pollInterval, deliver: schedule)
    }
    routingHeader = "provider_id=providers/\(configuration.providerID)"
  }

  /// The channel's settings: transport security, the plaintext-token opt-in, the most
  /// connections, the proxy, keepalive and the reconnect backoff. Calls fail fast while the connection
  /// is down, so subscribers hear of an outage and the model's own backoff paces the retries.
  private static func channelOptions(_ configuration: TripService.Configuration)
    -> ChannelOptions
  {
    var options = ChannelOptions()
    options.allowInsecureCredentials = configuration.options.allowsTokensOverPlaintext
    options.maxConnections = configuration.options.maxConnections
    options.proxy = configuration.options.proxy
    options.interceptors = configuration.options.interceptors
    options.logger = configuration.logger
    // Never without calls: an idle service sends nothing, and servers count idle PINGs as
    // abuse (gRPC's A8).
    options.keepalive = configuration.options.keepalive.map {
      ChannelOptions.Keepalive(interval: $0.interval, timeout: $0.timeout)
    }
    // After a failed attempt the channel fails calls fast until the backoff has passed: with
    // gRPC's 120 s maximum, a path that healed after a long outage would go unused for up to
    // two minutes more. At 5 s (6 s with jitter) a follower's next call after the path heals
    // finds the channel trying again. An attempt into a black hole takes the 20 s connect
    // timeout anyway, and the models' own backoff paces the calls.
    options.backoff.maximum = .seconds(5)
    switch configuration.transportSecurity {
    case .plaintext:
      options.transportSecurity = .plaintext
    case .tls(let tls):
      options.transportSecurity = .tls(
        TLSConfiguration(
          trustRoots: tls.trustedCertificatesFile.map { .pemFile($0) } ?? .system,
          serverHostnameOverride: tls.serverHostnameOverride))
    }
    return options
  }

  /// The lanes started so far, in order.
  var lanes: [FollowLane] { startedLanes.withLock { $0.all } }

  /// The poll interval is cut into this many phase buckets for ``laneForNewModel(at:)``.
  static let phaseBuckets = 10

  /// The lane for a new model made at `now`, and the phase bucket it is counted in as the
  /// lane's until ``FollowLane/modelEnded(inBucket:)``.
  ///
  /// A model is usually followed as soon as it is made, and then polls at that phase of the
  /// poll interval. A lane takes new models while it has fewer than a tenth of
  /// ``TripService/Options/tripsPerEventLoop`` in the new model's tenth of the interval;
  /// when every started lane has that many there, the next lane starts; once all have
  /// started, the lane with the fewest there (then the fewest in all) takes it. So trips
  /// spread over the interval stay on one loop (the cheapest) up to about
  /// `tripsPerEventLoop`, and trips that start together (a service following 30,000 at once,
  /// or all within a second, in order) are shared out among loops in each part of the
  /// interval, rather than one loop taking the first 12,000 and with them two fifths of
  /// each second at two and a half times its rate.
  func laneForNewModel(
    at now: UInt64 = MonotonicInstant.now.nanoseconds
  ) -> (lane: FollowLane, phaseBucket: Int) {
    // At least 100 ms (TripService checks it).
    let interval = MonotonicInstant(nanoseconds: 0).advanced(by: options.pollInterval).nanoseconds
    let bucket = Int(now % interval * UInt64(Self.phaseBuckets) / interval)
    let perBucket = max(1, (options.tripsPerEventLoop + Self.phaseBuckets - 1) / Self.phaseBuckets)
    let (lane, started) = startedLanes.withLock { lanes -> (FollowLane, Bool) in
      // Fewest in the bucket, then fewest in all; `min` keeps the first of equals.
      func leastLoaded(_ loads: [(lane: FollowLane, total: Int, inBucket: Int)]) -> FollowLane? {
        loads.min { ($0.inBucket, $0.total) < ($1.inBucket, $1.total) }?.lane
      }
      let loads = lanes.all.map { lane in
        let counts = lane.modelCounts(inBucket: bucket)
        return (lane: lane, total: counts.total, inBucket: counts.inBucket)
      }
      let chosen: FollowLane
      var started = false
      if let open = leastLoaded(loads.filter { $0.inBucket < perBucket }) {
        chosen = open
      } else if lanes.all.count < laneLimit {
        chosen = makeLane(lanes.all.count)
        lanes.all.append(chosen)
        started = lanes.closed
      } else {
        chosen = leastLoaded(loads)!
      }
      chosen.modelAdded(inBucket: bucket)
      return (chosen, started)
    }
    // A lane started after shutdown: its trips fail with UNAVAILABLE, as the others'.
    if started { lane.channel.close() }
    return (lane, bucket)
  }

  /// Closes every lane's channel: new calls fail with UNAVAILABLE.
  func closeChannels() {
    let lanes = startedLanes.withLock { lanes in
      lanes.closed = true
      return lanes.all
    }
    for lane in lanes { lane.channel.close() }
  }

  /// The live model for `name`, if there is one.
  func existingModel(for name: TripName) -> TripModel? {
    models.withLock { $0[name.tripID]?.retainedIfAlive }
  }

  /// The live model for `name`, or a new one registered for it.
  func model(for name: TripName) -> TripModel {
    // Keyed by the trip ID alone: every model of a service is of its provider, and the ID
    // is the string the name already holds (the full name would be a new string per trip).
    let key = name.tripID
    if let existing = existingModel(for: name) { return existing }
    // Made outside the lock: a model's init is ours, but its deinit (of a loser below)
    // takes this lock again.
    let fresh = TripModel(name: name, core: self)
    let chosen = models.withLock { models in
      if let existing = models[key]?.retainedIfAlive { return existing }
      models[key] = UnretainedReference(fresh)
      return fresh
    }
    return chosen
  }

  /// Whether models should try the streaming trip feed.
  var feedAvailable: Bool {
    options.followsTripFeed && !feedUnimplemented.withLock { $0 }
  }

  /// The server has no trip feed: every model polls from now on.
  func markFeedUnimplemented() {
    feedUnimplemented.withLock { $0 = true }
  }

  /// Every live model.
  var liveModels: [TripModel] {
    models.withLock { $0.values.compactMap(\.retainedIfAlive) }
  }

  /// Called by a model's deinit: forget it (unless another model took its name since) and
  /// its cached token.
  func modelDeinitialized(_ name: TripName, id: ObjectIdentifier) {
    let removed = models.withLock { models in
      guard let entry = models[name.tripID], entry.id == id else { return false }
      models[name.tripID] = nil
      return true
    }
    if removed { tokens.remove(tripID: name.tripID) }
  }
}
