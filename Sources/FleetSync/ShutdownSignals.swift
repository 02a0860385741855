import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// SIGTERM and SIGINT as a graceful-shutdown request, for the servers' executables.
///
/// Create it BEFORE announcing that the server listens: from then on those signals are
/// caught (a test that signals as soon as it reads the announcement cannot kill the process
/// before it is ready). Then ``wait(orParentExit:)`` until one arrives.
public final class ShutdownSignals: @unchecked Sendable {
  // @unchecked Sendable: `sources` are only kept alive, never touched after init; the stream
  // and its continuation are Sendable.
  private let signals: AsyncStream<Int32>
  private let continuation: AsyncStream<Int32>.Continuation
  private let sources: [any DispatchSourceSignal]

  public init() {
    // Some launchers start children with these signals blocked; unblock them first.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGTERM)
    sigaddset(&set, SIGINT)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
    self.signals = signals
    self.continuation = continuation
    sources = [SIGTERM, SIGINT].map { number in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { continuation.yield(number) }
      source.resume()
      return source
    }
  }

  /// Waits for SIGTERM or SIGINT; with `orParentExit`, also returns when the parent process
  /// dies (a test server must not outlive the test run that started it).
  public func wait(orParentExit: Bool = false) async {
    let parent = getppid()
    let watcher = Task { [continuation] in
      guard orParentExit else { return }
      // Orphans are re-parented (to init or a subreaper): the parent ID changes.
      while !Task.isCancelled, getppid() == parent {
        try? await Task.sleep(for: .seconds(1))
      }
      continuation.yield(0)
    }
    for await _ in signals { break }
    watcher.cancel()
  }
}
