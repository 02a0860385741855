import FleetSync

@testable import GRPCWire

extension EventLoop {
  /// `body`'s answer, computed on the loop after what is queued there; nil when the loop has
  /// not answered within `timeout` — work queued to a stopped loop never runs, so a test that
  /// asked one would otherwise wait for good.
  func answer<T: Sendable>(
    within timeout: Duration, _ body: @escaping @Sendable () -> T
  ) async -> T? {
    // Resumed once: by the loop's answer or by the timeout, whichever comes first.
    let waiter = PosixMutex<CheckedContinuation<T?, Never>?>(nil)
    return await withCheckedContinuation { continuation in
      waiter.withLock { $0 = continuation }
      let timeout = Task {
        try? await Task.sleep(for: timeout)
        waiter.withLock { $0.take() }?.resume(returning: nil)
      }
      execute {
        let answer = body()
        // Taken before the timeout is cancelled, which would otherwise take it first.
        waiter.withLock { $0.take() }?.resume(returning: answer)
        timeout.cancel()
      }
    }
  }
}
