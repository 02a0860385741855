internal import FleetSync
internal import GRPCWire

/// One event loop of a ``TripService``, with the channel whose connections it owns and its
/// schedule of due polls. A model is given one lane for its life: its polls, responses and
/// feed streams all happen on that lane's loop.
///
/// A service has one lane by default and more with ``TripService/Options/eventLoops``, so
/// that tens of thousands of trips need not all wait for one thread; the lanes share the
/// service's token cache, callback executor and registry of models.
final class FollowLane: Sendable {
  /// The thread of the lane's connections, poll timers and response handling.
  let loop: EventLoop
  let channel: GRPCChannel
  /// When each followed trip of the lane calls next; batches callbacks per loop tick.
  let scheduler: FollowScheduler
  /// Per method path, the call last prepared for a model of this lane, with the token it
  /// carries (a model calls two methods: GetTrip and the feed's WatchTrip).
  private let lastPrepared = PosixMutex<
    [(path: String, token: AccessToken, prepared: PreparedCall)]
  >([])

  /// A lane named `name`, with a channel of `options` to `endpoint`; callback batches go
  /// through `deliver`.
  init(
    name: String, endpoint: TripService.Endpoint, options: ChannelOptions,
    deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) {
    // The lane's own loop, not the channel's: it outlives a closed channel, so models that
    // follow after shutdown() still run and report UNAVAILABLE.
    loop = EventLoop(name: name)
    channel = GRPCChannel(
      host: endpoint.host, port: endpoint.port, options: options, eventLoop: loop)
    scheduler = FollowScheduler(loop: loop, deliver: deliver)
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
    let prepared = try make()
    lastPrepared.withLock { calls in
      calls.removeAll { $0.path == path }
      calls.append((path, token, prepared))
    }
    return prepared
  }

  deinit {
    channel.close()
    // On the loop itself (the last model let go there) this stops it after the tick.
    loop.shutdown()
  }
}
