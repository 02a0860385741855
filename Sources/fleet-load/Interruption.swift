import Synchronization

/// Set once SIGINT or SIGTERM arrived: the run stops issuing calls and reports what it has.
final class Interruption: Sendable {
  private let flag = Atomic<Bool>(false)
  var happened: Bool { flag.load(ordering: .relaxed) }
  func signal() { flag.store(true, ordering: .relaxed) }
}
