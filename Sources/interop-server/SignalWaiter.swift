import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// Waits for SIGTERM or SIGINT, so the server can shut down gracefully — or for its parent to
/// die, so a test server cannot outlive the test run that started it.
enum SignalWaiter {
  static func waitForSignalOrOrphaning() async {
    // Some launchers start children with these signals blocked; unblock them first.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGTERM)
    sigaddset(&set, SIGINT)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
    let sources = [SIGTERM, SIGINT].map { number in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { continuation.yield(number) }
      source.resume()
      return source
    }
    let parent = getppid()
    let watcher = Task {
      // Orphans are re-parented (to init or a subreaper): the parent ID changes.
      while !Task.isCancelled, getppid() == parent {
        try? await Task.sleep(for: .seconds(1))
      }
      continuation.yield(0)
    }
    for await _ in signals { break }
    watcher.cancel()
    withExtendedLifetime(sources) {}
  }
}
