internal import FleetSync
internal import GRPCWire
internal import Synchronization
internal import FoundationEssentials

/// One trip, followed for its subscribers: get it from
/// ``TripService/tripModel(forTripName:)``, then ``register(_:)`` a ``TripModelSubscriber``
/// or iterate ``updates``.
///
/// Following starts with the first subscriber and stops when the last one leaves (a class
/// subscriber that is deallocated leaves by itself) or once a terminal status (COMPLETE,
/// CANCELED) has been delivered; then no further `GetTrip` is sent. While following, the
/// model polls `GetTrip` every ``TripService/Options/pollInterval`` (a poll is due one
/// interval after the previous one was due, or at once if that one took longer; polls never
/// overlap), sends back the versions it holds so unchanged route data is not resent, merges
/// each possibly partial response into the last known trip, and calls back only for the
/// properties that changed. Failures are reported and retried as ``RetryPolicy`` says.
///
/// A model following its trip holds no task, timer or continuation of its own: its next due
/// time is an entry in its service's heap of due polls, on the service's event loop, which
/// also makes the call and merges the response. Thread-safe. Callbacks of one model run one
/// at a time, in order, on the service's ``CallbackExecutor``; the models updated in one loop
/// tick are called back from one job.
public final class TripModel: Sendable {
  /// The trip's name, `providers/{provider_id}/trips/{trip_id}`.
  public let tripName: TripName
  let core: ServiceCore
  /// The event loop this model follows on, with its channel and schedule.
  let lane: FollowLane
  /// The tenth of the poll interval the model was made in, as its lane counts it.
  let phaseBucket: Int
  let protected: PosixMutex<Protected>
  /// Bumped, inside the lock, whenever a subscriber arrives or leaves: a drain delivering
  /// from its snapshot of the subscribers checks this instead of taking the lock per
  /// callback.
  let membership = Atomic<UInt64>(0)
  /// Whether a drain job is scheduled or running, and whether events were queued since it
  /// last took them (``DrainState``): a drain that found nothing new after delivering ends
  /// on this atomic, not in another hold of the lock.
  let drainState = Atomic<UInt8>(DrainState.idle)
  /// What only the lane's loop touches, as a poll is made and answered: no lock per poll.
  let onLoop: OnLoopBox

  /// ``OnLoop`` in a box of its own, so that the model's stored properties are all constants
  /// and the compiler checks that the model is `Sendable`.
  final class OnLoopBox: @unchecked Sendable {
    // @unchecked Sendable: `bound` is a LoopBound, whose thread is checked on every access,
    // in every build.
    private var bound: LoopBound<OnLoop>

    init(on loop: EventLoop) {
      bound = LoopBound(OnLoop(), on: loop)
    }

    /// The state; only on the loop's thread.
    var value: OnLoop {
      get { bound.value }
      _modify { yield &bound.value }
    }
  }

  /// The state of the loop's side of following.
  struct OnLoop {
    /// The call in flight (a poll, or a feed stream) and its loop generation, cancelled
    /// when following stops.
    var call: (generation: UInt64, call: LoopCall)?
    /// What the last poll sent, reused while the versions and the token stay.
    var pollTemplate: PollTemplate?

    /// Forgets the call in flight once it has ended, if it belongs to `generation`.
    mutating func clearCall(of generation: UInt64) {
      if call?.generation == generation { call = nil }
    }

    /// Records `made` as loop `generation`'s call in flight; returns the recorded call it
    /// replaces if that belongs to an older (stopped) generation, for the caller to cancel:
    /// the stop's ``TripModel/cancelCall(of:)`` may run after this, and then finds only the
    /// new call.
    mutating func record(_ made: LoopCall, of generation: UInt64) -> LoopCall? {
      let replaced = call
      call = (generation, made)
      guard let replaced, replaced.generation < generation else { return nil }
      return replaced.call
    }

    /// Takes the call in flight if it belongs to stopped loop `generation` or an older one
    /// (never cancelled if a newer one recorded first); nil if none, or a newer one's.
    mutating func takeCall(stopped generation: UInt64) -> LoopCall? {
      guard let recorded = call, recorded.generation <= generation else { return nil }
      call = nil
      return recorded.call
    }
  }

  /// What the lock guards: the follow machine, the subscribers, the callback queue.
  struct Protected {
    var follower: TripFollower
    var subscribers: [Registration] = []
    var nextStreamID: UInt64 = 0
    /// Events not yet delivered.
    var pending: [TripModelEvent] = []
    /// How many registrations want ``TripModelEvent/refreshed(_:)``: none usually, and then
    /// no such event is made.
    var refreshSubscribers = 0
    /// When the last good response arrived.
    var lastRefreshed: Date?
    /// Tasks awaiting ``TripModel/completion``, by ID.
    var completionWaiters: [UInt64: CheckedContinuation<Result<FleetEngine.Trip, RPCError>, Never>] =
      [:]
    var nextWaiterID: UInt64 = 0
    /// Whether the terminal update has been delivered to the subscribers.
    var finalDelivered = false

    /// Drops subscribers that were deallocated; returns whether any is left.
    mutating func pruneSubscribers() -> Bool {
      // Every poll asks; usually all are alive, and looking costs no write to the array.
      guard subscribers.contains(where: { !$0.isAlive }) else { return !subscribers.isEmpty }
      subscribers.removeAll { registration in
        guard !registration.isAlive else { return false }
        if registration.receivesRefreshes { refreshSubscribers -= 1 }
        return true
      }
      return !subscribers.isEmpty
    }

    /// Adds `registration`.
    mutating func add(_ registration: Registration) {
      subscribers.append(registration)
      if registration.receivesRefreshes { refreshSubscribers += 1 }
    }

    /// Removes the registration `id`, if present.
    mutating func remove(_ id: Registration.ID) {
      subscribers.removeAll { registration in
        guard registration.id == id else { return false }
        if registration.receivesRefreshes { refreshSubscribers -= 1 }
        return true
      }
    }

    /// Resumes every ``TripModel/completion`` waiter with `error`.
    mutating func failCompletionWaiters(_ error: RPCError) {
      guard !completionWaiters.isEmpty else { return }
      for waiter in completionWaiters.values { waiter.resume(returning: .failure(error)) }
      completionWaiters = [:]
    }
  }

  /// One subscriber: a class held weakly, or the continuation of an ``updates`` iteration.
  struct Registration {
    enum ID: Hashable {
      case object(ObjectIdentifier)
      case stream(UInt64)
    }

    enum Target {
      case subscriber(WeakSubscriber)
      case stream(AsyncStream<TripModelEvent>.Continuation)
    }

    let id: ID
    let target: Target
    /// Whether it hears ``TripModelEvent/refreshed(_:)``.
    let receivesRefreshes: Bool

    var isAlive: Bool {
      switch target {
      case .subscriber(let box): box.subscriber != nil
      case .stream: true
      }
    }
  }

  /// A class rather than a struct, to keep weak references out of enum payloads: Swift 6.3
  /// at -Onone miscompiles some Optionals of structs holding one (see ServiceCore).
  final class WeakSubscriber {
    weak var subscriber: (any TripModelSubscriber)?

    init(_ subscriber: any TripModelSubscriber) {
      self.subscriber = subscriber
    }
  }

  init(name: TripName, core: ServiceCore) {
    tripName = name
    self.core = core
    (lane, phaseBucket) = core.laneForNewModel()
    onLoop = OnLoopBox(on: lane.loop)
    protected = PosixMutex(
      Protected(
        follower: TripFollower(
          settings: core.followSettings)))
  }

  deinit {
    lane.modelEnded(inBucket: phaseBucket)
    core.modelDeinitialized(tripName, id: ObjectIdentifier(self))
  }

  /// The latest known trip: every response so far merged; nil before the first one.
  ///
  /// It may be ahead of the callbacks still queued for delivery.
  public var currentTrip: FleetEngine.Trip? {
    protected.withLock { $0.follower.trip }
  }

  /// Whether the model is following its trip now.
  public var state: TripModelState {
    protected.withLock { $0.follower.isFollowing ? .active : .inactive }
  }

  /// Adds `subscriber` (held weakly); the first subscriber starts following. Registering the
  /// same object twice has no effect. A model that has finished (terminal status delivered)
  /// stays finished: the subscriber is kept but hears nothing more.
  public func register(_ subscriber: any TripModelSubscriber) {
    let id = Registration.ID.object(ObjectIdentifier(subscriber))
    let start = protected.withLock { state -> Start? in
      _ = state.pruneSubscribers()
      guard !state.subscribers.contains(where: { $0.id == id }) else { return nil }
      state.add(
        Registration(
          id: id, target: .subscriber(WeakSubscriber(subscriber)),
          receivesRefreshes: subscriber.receivesRefreshes))
      membership.add(1, ordering: .releasing)
      return startIfNeeded(&state)
    }
    if let start { launch(start) }
  }

  /// Removes `subscriber`. Once this returns, no callback to it starts (one already running
  /// on another thread finishes); called from inside a callback, that callback is its last.
  /// When no subscriber is left the model stops following, and a call in flight is
  /// cancelled.
  public func unregisterSubscriber(_ subscriber: any TripModelSubscriber) {
    unregister(.object(ObjectIdentifier(subscriber)))
  }

  /// Stops following as if every subscriber had left, keeping them registered; used by
  /// ``TripService/shutdown()``. A later ``register(_:)`` starts again.
  func stopFollowing() {
    let stopped = protected.withLock { state in stopLoop(&state) }
    if let stopped { cancelCall(of: stopped) }
  }

  func unregister(_ id: Registration.ID) {
    let stopped = protected.withLock { state -> UInt64? in
      state.remove(id)
      membership.add(1, ordering: .releasing)
      guard !state.pruneSubscribers() else { return nil }
      return stopLoop(&state)
    }
    if let stopped { cancelCall(of: stopped) }
  }

  /// Registers a stream's continuation; finishes it at once if the model already finished.
  func registerStream(
    _ continuation: AsyncStream<TripModelEvent>.Continuation, refreshes: Bool
  ) -> UInt64 {
    let (streamID, start, finished) = protected.withLock { state in
      state.nextStreamID += 1
      let id = state.nextStreamID
      if case .finished = state.follower.state { return (id, Start?.none, true) }
      state.add(
        Registration(id: .stream(id), target: .stream(continuation), receivesRefreshes: refreshes))
      membership.add(1, ordering: .releasing)
      return (id, startIfNeeded(&state), false)
    }
    if finished { continuation.finish() }
    if let start { launch(start) }
    return streamID
  }
}
