import GRPCWire
import Testing

@testable import FleetConsumer

/// The heap of due polls: entries come out in due order, only once due, and the queue
/// releases the models it held.
@Suite("Poll queue")
struct PollQueueTests {
  func model(_ id: String) throws -> TripModel {
    TripModel(name: try TripName("providers/p/trips/\(id)"), core: FleetTest.offlineCore())
  }

  @Test("entries come out in due order, and only those due by now")
  func order() throws {
    var queue = PollQueue()
    let models = try (0..<50).map { try model("t\($0)") }
    // Due times in a scrambled order; each model's index is its generation.
    var dues: [UInt64] = (0..<50).map { UInt64(($0 * 37) % 50) * 10 }
    for (index, model) in models.enumerated() {
      queue.insert(due: dues[index], model: model, generation: UInt64(index))
    }
    #expect(queue.earliest == 0)
    var popped: [UInt64] = []
    while let entry = queue.popDue(now: 245) { popped.append(dues[Int(entry.generation)]) }
    #expect(popped == stride(from: 0, through: 240, by: 10).map { UInt64($0) })
    #expect(queue.count == 25)
    while let entry = queue.popDue(now: .max) { popped.append(dues[Int(entry.generation)]) }
    dues.sort()
    #expect(popped == dues)
    #expect(queue.isEmpty)
  }

  @Test("popping hands the model back; removeAll releases what is left")
  func ownership() throws {
    var queue = PollQueue()
    weak var popped: TripModel?
    weak var left: TripModel?
    do {
      let first = try model("first")
      let second = try model("second")
      popped = first
      left = second
      queue.insert(due: 1, model: first, generation: 1)
      queue.insert(due: 2, model: second, generation: 1)
    }
    #expect(popped != nil && left != nil, "the queue keeps its models alive")
    do {
      let next = queue.popDue(now: 1)
      let entry = try #require(next)
      #expect(entry.model === popped)
    }
    #expect(popped == nil)
    #expect(left != nil)
    queue.removeAll()
    #expect(left == nil)
  }
}

/// When the next poll is due: one interval after the last was due, skipping whole intervals
/// already missed, never back to back.
@Suite("Next due time of a poll")
struct NextDueTests {
  func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: ms * 1_000_000) }

  @Test("one interval after the last due time, however long the call took, while in time")
  func onTime() {
    #expect(TripModel.nextDue(after: at(1_000), every: .seconds(1), now: at(1_400)) == at(2_000))
    #expect(TripModel.nextDue(after: at(1_000), every: .seconds(1), now: at(1_999)) == at(2_000))
  }

  @Test("missed intervals are skipped, keeping the phase")
  func missed() {
    #expect(TripModel.nextDue(after: at(1_000), every: .seconds(1), now: at(2_000)) == at(3_000))
    #expect(TripModel.nextDue(after: at(1_000), every: .seconds(1), now: at(4_300)) == at(5_000))
    #expect(
      TripModel.nextDue(after: at(1_000), every: .milliseconds(250), now: at(1_600)) == at(1_750))
  }

  @Test(
    "a poll may start a hundredth of its interval early, at most 100 ms",
    arguments: [
      (Duration.milliseconds(100), UInt64(1_000_000)), (.seconds(1), 10_000_000),
      (.seconds(5), 50_000_000), (.seconds(60), 100_000_000),
    ])
  func coalescingWindow(interval: Duration, window: UInt64) {
    #expect(FollowScheduler.coalescingWindow(pollInterval: interval) == window)
  }
}
