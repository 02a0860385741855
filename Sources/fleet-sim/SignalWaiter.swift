import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// Waits for SIGTERM or SIGINT, so the server can shut down gracefully.
enum SignalWaiter {
  static func wait() async {
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
    for await _ in signals { break }
    withExtendedLifetime(sources) {}
  }
}
