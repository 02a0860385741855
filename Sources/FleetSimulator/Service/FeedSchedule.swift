/// When a `WatchTrip` stream next has something new to send, so that it renders its trip
/// only then and sleeps in between.
///
/// In continuous time a trip changes in steps (its phase ends, the traffic period turns:
/// ``TripRenderer/nextChange(of:)``), each due at its moment, and, while the vehicle drives,
/// at every instant: there the feed samples the movement, at most once an `interval` (the
/// ``SimulatorOptions/feedInterval``) after the last look. A standing trip is not looked at
/// again until its next step, however long that is; an update of its record comes through
/// the ``TripWatch`` instead.
///
/// With a stepped clock (``SimulationClock/step``) the world changes only at step boundaries,
/// but then in every field — the stream counts the remaining durations and timestamps as news
/// there, as a poller would — so a trip that has not ended is due at the first boundary at or
/// after the earlier of its next step and `interval` after the last look.
struct FeedSchedule: Sendable {
  let renderer: TripRenderer
  /// The shortest spacing of looks at a trip that changes at every instant, in nanoseconds.
  let interval: Int64

  init(renderer: TripRenderer, interval: Duration) {
    self.renderer = renderer
    let (seconds, attoseconds) = interval.components
    self.interval = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }

  /// The wall time (nanoseconds since 1970) at which a trip created at `createdAt`, shown in
  /// `state` at wall time `wall`, next looks different; `Int64.max` once it has ended.
  func due(after state: TripState, createdAt: Int64, renderedAt wall: Int64) -> Int64 {
    guard !state.phase.isTerminal else { return .max }
    let clock = renderer.clock
    let next = renderer.nextChange(of: state)
    var due = next.isFinite ? clock.wallTime(at: next, createdAt: createdAt) : .max
    let changesEveryInstant = clock.step == nil ? state.isMoving : true
    if changesEveryInstant { due = min(due, wall + interval) }
    // Always after the look it follows: a step that rounding to wall nanoseconds puts at that
    // very moment was not shown, and must not be looked for again and again at the same time.
    due = max(due, wall + 1)
    guard let step = clock.step, step > 0, due < .max - step else { return due }
    let remainder = due % step
    return remainder == 0 ? due : due - remainder + step
  }
}
