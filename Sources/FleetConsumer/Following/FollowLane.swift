internal import FleetSync
internal import GRPCWire
internal import Synchronization

/// One event loop of a ``TripService``, with the channel whose connections it owns and its
/// schedule of due polls. A model is given one lane for its life: its polls, responses and
/// feed streams all happen on that lane's loop.
///
/// A service starts one lane and more as it follows more trips (up to
/// ``TripService/Options/eventLoops``, a lane per ``TripService/Options/tripsPerEventLoop``
/// trips), so that tens of thousands of trips need not all wait for one thread; the lanes
/// share the service's token cache, callback executor, connections and registry of models.
final class FollowLane: Sendable {
  /// The thread of the lane's connections, poll timers and response handling.
  let loop: EventLoop
  let channel: GRPCChannel
  /// When each followed trip of the lane calls next; batches callbacks per loop tick.
  let scheduler: FollowScheduler
  /// Feed streams decided on (being made, or open) on the lane and not yet ended.
  private let openFeeds = Atomic<Int>(0)
  /// The models given this lane and not yet deinitialized, per phase bucket (see
  /// ``ServiceCore/laneForNewModel(at:)``).
  private let models = PosixMutex([Int](repeating: 0, count: ServiceCore.phaseBuckets))
  /// The models backing off after a network failure, told when the channel has a ready
  /// connection again (``wakeWhenReady(_:generation:)``); one entry a model, held weakly so
  /// that a model let go while the network is down is not kept alive by its wait.
  private let readyWaiters = PosixMutex<[ObjectIdentifier: ReadyWaiter]>([:])
  private struct ReadyWaiter {
    weak var model: TripModel?
    let generation: UInt64
  }
  /// Per method path, the call last prepared for a model of this lane, with the token it
  /// carries (a model calls two methods: GetTrip and the feed's WatchTrip).
  private let lastPrepared = PosixMutex<
    [(path: String, token: AccessToken, prepared: PreparedCall)]
  >([])

  /// A lane named `name`, with a channel of `options` to `endpoint`; callback batches go
  /// through `deliver`.
  init(
    name: String, endpoint: TripService.Endpoint, options: ChannelOptions,
    pollInterval: Duration, deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) {
    // The lane's own loop, not the channel's: it outlives a closed channel, so models that
    // follow after shutdown() still run and report UNAVAILABLE.
    loop = EventLoop(name: name)
    channel = GRPCChannel(
      host: endpoint.host, port: endpoint.port, options: options, eventLoop: loop)
    scheduler = FollowScheduler(loop: loop, pollInterval: pollInterval, deliver: deliver)
  }

  /// The call to `path` carrying `token`: the one made last for `path` when it carries the
  /// same token, else a new one from `make`. Models that follow with one token (a backend's
  /// server token serves every trip) then share one set of header fields instead of a copy
  /// each: about 0.3 KB a polled trip, and as much again a streamed one, whose stream keeps
  /// its fields while it lasts. Everything else a model prepares is the same for the whole
  /// service.
  func prepared(
    _ path: String, token: AccessToken, _ make: () throws(RPCError) -> PreparedCall
  ) throws(RPCError) -> PreparedCall {
    let last = lastPrepared.withLock { calls in calls.first { $0.path == path } }
    if let last, last.token == token { return last.prepared }
    // Laid out whole once: every model polling with this token sends the same fields.
    let prepared = try make().laidOut()
    lastPrepared.withLock { calls in
      calls.removeAll { $0.path == path }
      calls.append((path, token, prepared))
    }
    return prepared
  }

  /// Tells `model` (loop `generation`) when the lane's channel next has a ready connection,
  /// and keeps the channel connecting until then: one wait on the channel for all the
  /// lane's models, however many fail together.
  func wakeWhenReady(_ model: TripModel, generation: UInt64) {
    let first = readyWaiters.withLock { waiters in
      defer { waiters[ObjectIdentifier(model)] = ReadyWaiter(model: model, generation: generation) }
      return waiters.isEmpty
    }
    guard first else { return }
    channel.whenReady { [weak self] in self?.channelReady() }
  }

  /// The channel has a ready connection: every waiting model may call now.
  private func channelReady() {
    let waiters = readyWaiters.withLock { waiters in
      defer { waiters.removeAll() }
      return Array(waiters.values)
    }
    for waiter in waiters { waiter.model?.channelReady(generation: waiter.generation) }
  }

  /// Whether another trip may follow through a feed stream on this loop.
  enum FeedRoom {
    /// It may: the stream will get a place on a connection.
    case room
    /// The connections are full: the trip polls, and asks again at its next poll.
    case full
    /// Not known yet: no connection has told the server's stream limit. Ask again shortly.
    case unknown
  }

  /// The room for another feed stream: the streams of the lane's channel (its connections
  /// times the server's stream limit: Google's front ends allow 100, the simulator 1,000)
  /// less a tenth, at least one per connection, kept for calls that end — the polls of the
  /// trips that do not fit. Until a connection has told the limit, one stream per
  /// connection (the least a server allows): trips after those wait for the limit, rather
  /// than pile onto the first connection where streams beyond its limit would wait for
  /// others to end. Loop-only.
  func feedRoom() -> FeedRoom {
    let open = openFeeds.load(ordering: .relaxed)
    guard let capacity = channel.streamCapacity else {
      return open < channel.options.maxConnections ? .room : .unknown
    }
    let reserve = max(capacity / 10, channel.options.maxConnections)
    return open < capacity - reserve ? .room : .full
  }

  var modelCount: Int { models.withLock { $0.reduce(0, +) } }

  /// The models of the lane, in all and in phase bucket `bucket`.
  func modelCounts(inBucket bucket: Int) -> (total: Int, inBucket: Int) {
    models.withLock { ($0.reduce(0, +), $0[bucket]) }
  }

  /// A model was given this lane in phase bucket `bucket`.
  func modelAdded(inBucket bucket: Int) { models.withLock { $0[bucket] += 1 } }

  /// A model of this lane, given it in phase bucket `bucket`, is gone.
  func modelEnded(inBucket bucket: Int) { models.withLock { $0[bucket] -= 1 } }

  /// A trip of the lane decided to open a feed stream.
  func feedOpened() { openFeeds.add(1, ordering: .relaxed) }

  /// A feed stream of the lane ended, or was never made after all.
  func feedEnded() { openFeeds.subtract(1, ordering: .relaxed) }

  deinit {
    channel.close()
    // On the loop itself (the last model let go there) this stops it after the tick.
    loop.shutdown()
  }
}
