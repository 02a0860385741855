import Testing

@testable import GRPCWire

/// A server connection's budget of queued response bytes: writers wait for room before they
/// serialise, are let in one at a time in arrival order, and a cancelled call's writer stops
/// waiting.
@Suite("Server send budget", .timeLimit(.minutes(1)))
struct SendBudgetTests {
  struct Aborted: Error {}

  /// Records the order in which writers got in.
  actor Order {
    var entered: [Int32] = []
    func enter(_ id: Int32) { entered.append(id) }
  }

  @Test("under the limit a writer goes ahead without waiting")
  func room() async throws {
    let budget = SendBudget(limit: 100)
    budget.queued(99)
    try await budget.waitForRoom(stream: 1) { nil }
  }

  @Test("over the limit writers wait, and each release lets the first one in, in arrival order")
  func waitInOrder() async throws {
    let budget = SendBudget(limit: 100)
    budget.queued(150)
    let order = Order()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for id: Int32 in 1...3 {
        group.addTask {
          try await budget.waitForRoom(stream: id) { nil }
          await order.enter(id)
          budget.queued(60)  // over the limit again: the next waits for another release
        }
        // Each writer is waiting before the next one comes.
        while budget.waiterCount < Int(id) { await Task.yield() }
      }
      for expected in 1...3 {
        budget.released(budget.queued - 50)
        while await order.entered.count < expected { await Task.yield() }
      }
      try await group.waitForAll()
    }
    #expect(await order.entered == [1, 2, 3])
  }

  @Test("a writer that queues nothing passes its turn to the next")
  func passOn() async throws {
    let budget = SendBudget(limit: 100)
    budget.queued(100)
    let order = Order()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for id: Int32 in 1...2 {
        group.addTask {
          try await budget.waitForRoom(stream: id) { nil }
          await order.enter(id)
          budget.queued(0)
        }
        while budget.waiterCount < Int(id) { await Task.yield() }
      }
      budget.released(10)
      try await group.waitForAll()
    }
    #expect(await order.entered == [1, 2])
  }

  @Test("cancelling a call throws into its waiting writer; an aborted call does not wait")
  func cancel() async throws {
    let budget = SendBudget(limit: 10)
    budget.queued(10)
    let waiting = Task { try await budget.waitForRoom(stream: 7) { nil } }
    while budget.waiterCount < 1 { await Task.yield() }
    budget.cancel(stream: 7, Aborted())
    await #expect(throws: Aborted.self) { try await waiting.value }
    await #expect(throws: Aborted.self) { try await budget.waitForRoom(stream: 8) { Aborted() } }
    #expect(budget.waiterCount == 0)
  }
}
