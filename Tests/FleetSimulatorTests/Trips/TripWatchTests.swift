import Testing

@testable import FleetSimulator

/// A stream's wait for its trip: ended by its deadline, by a change to the trip's record, or
/// by cancellation. A broken wait hangs, so each test has a time limit instead of a sleep.
@Suite("Trip watches", .timeLimit(.minutes(1)))
struct TripWatchTests {
  let core = SimulatorCore(options: fastOptions())
  let name = "providers/p/trips/t"
  static let never = ContinuousClock.now + .seconds(3600)

  func insertTrip() throws {
    let record = try core.makeRecord(try TripName(parsing: name), fastTrip(), now: 0)
    _ = try core.store.insert([record])
  }

  @Test("a wait ends at its deadline")
  func deadline() async {
    let start = ContinuousClock.now
    await TripWatch(timer: WatchTimer()).wait(until: start + .milliseconds(30))
    #expect(ContinuousClock.now - start >= .milliseconds(30))
  }

  @Test("a change to the record ends the wait, and counts a revision")
  func change() async throws {
    try insertTrip()
    let watch = core.store.watch(name)
    let waiting = Task { await watch.wait(until: Self.never) }
    let record = try core.store.modify(named: name) { $0.numberOfPassengers = 3 }
    await waiting.value
    #expect(record.revision == 1 && core.store.record(named: name)?.revision == 1)
  }

  @Test("removing the record ends the wait")
  func removal() async throws {
    try insertTrip()
    let watch = core.store.watch(name)
    let waiting = Task { await watch.wait(until: Self.never) }
    try core.store.remove(named: name) { _ in nil }
    await waiting.value
  }

  @Test("a change while nobody waits ends the next wait at once")
  func changeKept() async throws {
    try insertTrip()
    let watch = core.store.watch(name)
    _ = try core.store.modify(named: name) { $0.numberOfPassengers = 3 }
    await watch.wait(until: Self.never)
  }

  @Test("a watch given back hears no more; another trip's change does not reach it")
  func ended() async throws {
    try insertTrip()
    let watch = core.store.watch(name)
    let other = core.store.watch("providers/p/trips/other")
    core.store.endWatch(watch, of: name)
    _ = try core.store.modify(named: name) { $0.numberOfPassengers = 3 }
    let start = ContinuousClock.now
    await watch.wait(until: start + .milliseconds(30))
    await other.wait(until: start + .milliseconds(30))
    #expect(ContinuousClock.now - start >= .milliseconds(30))
  }

  @Test("an earlier deadline does not wait for a later one, nor a later for an earlier")
  func earlierDeadline() async {
    let timer = WatchTimer()
    let late = TripWatch(timer: timer)
    let lateWait = Task { await late.wait(until: .now + .milliseconds(300)) }
    let start = ContinuousClock.now
    await TripWatch(timer: timer).wait(until: start + .milliseconds(20))
    let early = ContinuousClock.now - start
    await lateWait.value
    #expect(early >= .milliseconds(20))
    #expect(ContinuousClock.now - start >= early)
  }

  @Test("many waits on one timer each end at their own deadline, none early")
  func manyWaits() async {
    let timer = WatchTimer()
    let start = ContinuousClock.now
    let ended = await withTaskGroup(of: (Duration, Duration).self) { group in
      for index in 0..<200 {
        let deadline = Duration.milliseconds((index * 37) % 100)
        group.addTask {
          await TripWatch(timer: timer).wait(until: start + deadline)
          return (deadline, ContinuousClock.now - start)
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(ended.count == 200)
    #expect(ended.allSatisfy { $0.1 >= $0.0 })
  }

  @Test("cancelling the waiting task ends the wait")
  func cancellation() async {
    let watch = TripWatch(timer: WatchTimer())
    let waiting = Task {
      await watch.wait(until: Self.never)
      return Task.isCancelled
    }
    waiting.cancel()
    #expect(await waiting.value)
  }
}
