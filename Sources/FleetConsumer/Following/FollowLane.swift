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

  deinit {
    channel.close()
    // On the loop itself (the last model let go there) this stops it after the tick.
    loop.shutdown()
  }
}
