import GRPCWire

/// Every connectivity state a channel reports through `connectivityStates`, with the time it
/// arrived, recorded by a task of its own from creation until the channel shuts down.
final class ConnectivityLog: Sendable {
  struct Entry: Sendable, CustomStringConvertible {
    var state: ConnectivityState
    var at: ContinuousClock.Instant

    var description: String { "\(state)" }
  }

  /// The states so far, and whether the stream has ended (it ends at SHUTDOWN).
  struct History: Sendable, CustomStringConvertible {
    var entries: [Entry] = []
    var finished = false

    var states: [ConnectivityState] { entries.map(\.state) }

    /// The first entry at `index` or later whose state is `state`.
    func first(_ state: ConnectivityState, from index: Int = 0) -> (index: Int, entry: Entry)? {
      guard index < entries.count else { return nil }
      return entries.indices[index...].first { entries[$0].state == state }
        .map { ($0, entries[$0]) }
    }

    var description: String {
      states.map(\.description).joined(separator: " → ") + (finished ? " (ended)" : "")
    }
  }

  let history = Observed(History())
  private let reader: Task<Void, Never>

  init(_ channel: GRPCChannel) {
    let history = self.history
    let states = channel.connectivityStates
    reader = Task {
      for await state in states {
        let now = ContinuousClock.now
        history.update { $0.entries.append(Entry(state: state, at: now)) }
      }
      history.update { $0.finished = true }
    }
  }

  deinit {
    reader.cancel()
  }

  var count: Int { history.value.entries.count }

  /// Waits until `state` has been reported at index `from` or later; returns that entry.
  @discardableResult
  func wait(
    for state: ConnectivityState, from index: Int = 0, timeout: Duration = .seconds(10)
  ) async throws -> (index: Int, entry: Entry) {
    let history = try await history.wait(for: "connectivity \(state)", timeout: timeout) {
      $0.first(state, from: index) != nil
    }
    return history.first(state, from: index)!
  }

  /// Waits until the stream has ended (after SHUTDOWN).
  func waitForEnd(timeout: Duration = .seconds(5)) async throws {
    try await history.wait(for: "the connectivity stream to end", timeout: timeout) {
      $0.finished
    }
  }

  /// The states from `index` on, each with its time relative to `origin`, for the printout.
  func timeline(from index: Int = 0, since origin: ContinuousClock.Instant) -> String {
    history.value.entries.dropFirst(index).map {
      "\($0.state)@\((origin.duration(to: $0.at)).milliseconds)ms"
    }.joined(separator: " → ")
  }
}
