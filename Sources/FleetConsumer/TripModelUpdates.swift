/// The events of a ``TripModel`` as an `AsyncSequence`, for code that prefers
/// `for await event in model.updates` to a subscriber object.
///
/// Each iteration is a subscriber of its own: it registers when the iterator is made and
/// unregisters when the loop ends or its task is cancelled, and following starts and stops
/// accordingly. The sequence ends after a terminal status has been delivered (the last
/// element is `.stateChanged(.inactive)`); iterated after that, it ends at once. Elements
/// are buffered without bound while the loop body runs, so keep it short.
public struct TripModelUpdates: AsyncSequence, Sendable {
  public typealias Element = TripModelEvent
  public typealias Failure = Never

  let model: TripModel
  /// Whether ``TripModelEvent/refreshed(_:)`` is yielded too.
  let includesRefreshes: Bool

  /// Registers a new subscriber and returns its iterator.
  public func makeAsyncIterator() -> Iterator {
    let (stream, continuation) = AsyncStream.makeStream(of: TripModelEvent.self)
    let id = model.registerStream(continuation, refreshes: includesRefreshes)
    // Runs when the stream finishes or when the iterator goes away (the loop ended, or its
    // task was cancelled).
    continuation.onTermination = { [weak model] _ in model?.unregister(.stream(id)) }
    return Iterator(base: stream.makeAsyncIterator())
  }

  /// Yields the model's events in order.
  public struct Iterator: AsyncIteratorProtocol {
    public typealias Element = TripModelEvent
    public typealias Failure = Never

    var base: AsyncStream<TripModelEvent>.Iterator

    /// The next event, or nil once the sequence has ended.
    public mutating func next() async -> TripModelEvent? {
      await base.next()
    }

    /// The next event, or nil once the sequence has ended.
    public mutating func next(isolation actor: isolated (any Actor)?) async -> TripModelEvent? {
      await base.next(isolation: actor)
    }
  }
}

extension TripModel {
  /// This model's events as an `AsyncSequence`; see ``TripModelUpdates``. Changes only: no
  /// ``TripModelEvent/refreshed(_:)``.
  public var updates: TripModelUpdates { updates(includingRefreshes: false) }

  /// This model's events as an `AsyncSequence`, with a ``TripModelEvent/refreshed(_:)``
  /// after every successful poll when `includingRefreshes`.
  public func updates(includingRefreshes: Bool) -> TripModelUpdates {
    TripModelUpdates(model: self, includesRefreshes: includingRefreshes)
  }
}
