internal import GRPCWire

extension TripModel {
  /// A loop to launch once the lock is released.
  struct Start {
    let generation: UInt64
    /// The previous loop, which the new one waits for so that their polls never overlap.
    let previous: Task<Void, Never>?
    let schedulesDrain: Bool
  }

  /// Inside the lock: starts following if not yet (queuing the state change).
  func startIfNeeded(_ state: inout Protected) -> Start? {
    guard case .startLoop(let generation, let events) = state.follower.start() else { return nil }
    let drain = enqueue(events, &state)
    return Start(generation: generation, previous: state.stoppedLoop, schedulesDrain: drain)
  }

  /// Inside the lock: stops following; returns the loop task to cancel outside it.
  func stopLoop(_ state: inout Protected) -> Task<Void, Never>? {
    guard case .stopLoop(let generation) = state.follower.stop(),
      let loop = state.loop, loop.generation == generation
    else { return nil }
    state.loop = nil
    state.stoppedLoop = loop.task
    return loop.task
  }

  /// Outside the lock: runs the loop `start` decided on.
  func launch(_ start: Start) {
    if start.schedulesDrain { scheduleDrain() }
    let task = Task { await follow(generation: start.generation, after: start.previous) }
    let superseded = protected.withLock { state in
      guard state.follower.generation == start.generation else { return true }
      state.loop = (start.generation, task)
      return false
    }
    // Stopped between the decision and now: the loop would exit at its first step anyway.
    if superseded { task.cancel() }
  }

  /// The follow loop of `generation`: poll, hand the outcome to the follower, wait, repeat
  /// until the follower says to exit.
  private func follow(generation: UInt64, after previous: Task<Void, Never>?) async {
    await previous?.value
    while true {
      let feedAvailable = core.feedAvailable
      let (due, stopped) = protected.withLock { state in
        guard state.pruneSubscribers() else {
          // Every subscriber was deallocated: stop as if the last one had unregistered.
          return (TripFollower.OnPollDue.exit, stopLoop(&state))
        }
        return (state.follower.pollDue(generation: generation, feedAvailable: feedAvailable), nil)
      }
      stopped?.cancel()
      let wait: Duration?
      switch due {
      case .exit:
        return
      case .poll(let versions):
        switch await poll(sending: versions) {
        case .success(let trip): wait = received(trip, generation: generation)
        case .failure(let failure): wait = failed(failure, generation: generation)
        }
      case .watch(let versions):
        wait = await watch(sending: versions, generation: generation)
      }
      guard let wait else { return }
      if wait > .zero { try? await Task.sleep(for: wait) }
    }
  }

  /// Hands a response to the follower; returns how long to wait, or nil to exit.
  private func received(_ trip: FleetEngine.Trip, generation: UInt64) -> Duration? {
    let (action, drain) = protected.withLock { state in
      let action = state.follower.received(trip, generation: generation)
      switch action {
      case .deliver(let events, _), .finish(let events): return (action, enqueue(events, &state))
      case .ignore: return (action, false)
      }
    }
    if drain { scheduleDrain() }
    switch action {
    case .deliver(_, let nextPollIn): return nextPollIn
    case .finish, .ignore: return nil
    }
  }

  /// Hands a failure to the follower; drops a refused token; returns how long to wait, or nil
  /// to exit.
  private func failed(_ failure: PollFailure, generation: UInt64) -> Duration? {
    let random = Double.random(in: 0..<1)
    let (action, drain) = protected.withLock { state in
      let action = state.follower.failed(
        failure.error, generation: generation, tokenFetchFailed: failure.token == nil,
        random: random)
      switch action {
      case .report(let error, _, _): return (action, enqueue([.updateFailed(error)], &state))
      case .ignore: return (action, false)
      }
    }
    if drain { scheduleDrain() }
    switch action {
    case .report(_, let dropToken, let retryIn):
      if dropToken, let token = failure.token {
        core.tokens.invalidate(token, for: tripName.tripID)
      }
      return retryIn
    case .ignore:
      return nil
    }
  }

  /// A failed poll: the error, and the token the call carried (nil when getting the token
  /// failed and nothing was sent).
  struct PollFailure: Error {
    let error: RPCError
    let token: AccessToken?
  }

  /// One `GetTrip` call: token, request with the held versions, metadata.
  private func poll(sending versions: TripFollower.HeldVersions) async
    -> Result<FleetEngine.Trip, PollFailure>
  {
    let token: AccessToken
    do {
      token = try await core.tokens.token(for: AuthorizationContext(tripName: tripName))
    } catch {
      return .failure(PollFailure(error: error, token: nil))
    }
    do {
      let response = try await core.channel.unary(
        FleetEngine.TripService.getTrip, request(sending: versions),
        options: CallOptions(timeout: core.options.callTimeout, metadata: metadata(token)))
      return .success(response.message)
    } catch let error as RPCError {
      return .failure(PollFailure(error: error, token: token))
    } catch {
      let wrapped = RPCError(code: .unknown, message: "GetTrip failed: \(error)", cause: error)
      return .failure(PollFailure(error: wrapped, token: token))
    }
  }

  /// One `WatchTrip` stream of the trip feed: each update is handled as a poll's response
  /// would be, while the stream stays open. Returns how long to wait before the next call,
  /// or nil to exit (a terminal status, or a stopped loop).
  private func watch(sending versions: TripFollower.HeldVersions, generation: UInt64) async
    -> Duration?
  {
    let token: AccessToken
    do {
      token = try await core.tokens.token(for: AuthorizationContext(tripName: tripName))
    } catch {
      return failed(PollFailure(error: error, token: nil), generation: generation)
    }
    var request = FleetFeed.WatchTripRequest()
    request.name = tripName.description
    request.view = core.options.tripView
    request.routeFormatType = .latLngListType
    request.currentRouteSegmentVersion = versions.currentRouteSegment
    request.remainingWaypointsVersion = versions.remainingWaypoints
    request.currentRouteSegmentTrafficVersion = versions.currentRouteSegmentTraffic
    request.remainingWaypointsRouteVersion = versions.remainingWaypointsRoute
    do {
      // No deadline: the stream lasts as long as the trip; cancelling the loop resets it.
      let keepGoing = try await core.channel.serverStreaming(
        FleetFeed.TripFeed.watchTrip, request, options: CallOptions(metadata: metadata(token))
      ) { updates in
        for try await update in updates {
          guard let trip = update.trip else { continue }
          if received(trip, generation: generation) == nil { return false }
        }
        return true
      }
      guard keepGoing else { return nil }
      return protected.withLock { $0.follower.watchEnded(generation: generation) }
    } catch let error as RPCError where error.code == .unimplemented {
      core.markFeedUnimplemented()
      return protected.withLock { $0.follower.feedUnimplemented(generation: generation) }
    } catch let error as RPCError {
      return failed(PollFailure(error: error, token: token), generation: generation)
    } catch {
      let wrapped = RPCError(code: .unknown, message: "WatchTrip failed: \(error)", cause: error)
      return failed(PollFailure(error: wrapped, token: token), generation: generation)
    }
  }

  /// The metadata of every call: the token and Fleet Engine's routing header.
  private func metadata(_ token: AccessToken) -> Metadata {
    var metadata = Metadata()
    metadata.add("authorization", "Bearer \(token.token)")
    metadata.add("x-goog-request-params", core.routingHeader)
    return metadata
  }

  /// The `GetTrip` request: header, name, view, the point-list route format, held versions.
  func request(sending versions: TripFollower.HeldVersions) -> FleetEngine.GetTripRequest {
    let options = core.options
    var header = FleetEngine.RequestHeader()
    header.regionCode = options.regionCode
    header.languageCode = options.languageCode
    header.sdkType = .consumer
    header.sdkVersion = TripService.sdkVersion
    var request = FleetEngine.GetTripRequest()
    request.header = header
    request.name = tripName.description
    request.view = options.tripView
    request.routeFormatType = .latLngListType
    request.currentRouteSegmentVersion = versions.currentRouteSegment
    request.remainingWaypointsVersion = versions.remainingWaypoints
    request.currentRouteSegmentTrafficVersion = versions.currentRouteSegmentTraffic
    request.remainingWaypointsRouteVersion = versions.remainingWaypointsRoute
    return request
  }
}

extension TripService {
  /// Sent as `RequestHeader.sdk_version`.
  public static let sdkVersion = "FleetConsumer/0.1.0"
}
