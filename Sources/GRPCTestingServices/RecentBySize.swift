internal import FleetSync

/// The last few values made for a size, shared by the calls that ask for the same size.
///
/// Responses of the grpc.testing services are zeros of a requested size. Made per call, a
/// client opening a thousand calls of 1 MiB that it never reads would hold a thousand copies
/// in the server; shared (arrays are copy-on-write), it holds one.
final class RecentBySize<Value: Sendable>: Sendable {
  private let entries = PosixMutex<[(size: Int, value: Value)]>([])
  private let capacity: Int
  private let make: @Sendable (Int) -> Value

  init(capacity: Int = 4, make: @escaping @Sendable (Int) -> Value) {
    self.capacity = capacity
    self.make = make
  }

  func value(size: Int) -> Value {
    if let hit = entries.withLock({ $0.first { $0.size == size }?.value }) { return hit }
    let made = make(size)
    entries.withLock {
      if $0.count == capacity { $0.removeFirst() }
      $0.append((size, made))
    }
    return made
  }
}
