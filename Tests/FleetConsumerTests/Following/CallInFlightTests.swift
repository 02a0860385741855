import Testing

@testable import FleetConsumer
@testable import GRPCWire

/// The loop's record of a model's call in flight, as a stop (generation G) and the next
/// start (G+1) reach the loop in either order: G's call is cancelled either way.
@Suite("The call in flight across loop generations")
struct CallInFlightTests {
  /// A call handle whose cancellation can be read: a task that lasts until it is cancelled
  /// (its sleep ends with the cancellation; no test waits on it).
  private static func call() -> (LoopCall, Task<Void, Never>) {
    let task = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
    return (LoopCall(task: task), task)
  }

  @Test("the stop's cancel first: G's call is taken and cancelled, G+1's recorded after")
  func stopFirst() {
    var onLoop = TripModel.OnLoop()
    let (first, firstTask) = Self.call()
    let (second, secondTask) = Self.call()
    #expect(onLoop.record(first, of: 1) == nil)
    onLoop.takeCall(stopped: 1)?.cancel()
    #expect(firstTask.isCancelled)
    #expect(onLoop.record(second, of: 2) == nil)
    #expect(!secondTask.isCancelled)
    #expect(onLoop.call?.generation == 2)
    secondTask.cancel()
  }

  @Test("G+1's start first: it cancels G's call, and G's late cancel leaves G+1's alone")
  func startFirst() {
    var onLoop = TripModel.OnLoop()
    let (first, firstTask) = Self.call()
    let (second, secondTask) = Self.call()
    #expect(onLoop.record(first, of: 1) == nil)
    onLoop.record(second, of: 2)?.cancel()
    #expect(firstTask.isCancelled)
    #expect(onLoop.takeCall(stopped: 1) == nil)
    #expect(!secondTask.isCancelled)
    #expect(onLoop.call?.generation == 2)
    secondTask.cancel()
  }

  @Test("a stop's cancel also takes an older generation's call still recorded")
  func olderRecorded() {
    var onLoop = TripModel.OnLoop()
    let (first, firstTask) = Self.call()
    #expect(onLoop.record(first, of: 1) == nil)
    onLoop.takeCall(stopped: 2)?.cancel()
    #expect(firstTask.isCancelled)
    #expect(onLoop.call == nil)
  }
}
