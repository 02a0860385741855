#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A value guarded by a `pthread_mutex_t`: decide inside ``withLock(_:)``, act outside it.
///
/// We use this rather than the standard library's `Synchronization.Mutex` because on Linux
/// that one locks with raw futex system calls, which ThreadSanitizer cannot see: every access
/// it guards shows up as a race, burying real ones. pthread mutexes are intercepted by TSan,
/// and uncontended they cost about what a futex lock does. Not reentrant.
public final class PosixMutex<Value>: @unchecked Sendable {
  // @unchecked Sendable: `value` is only touched between lock and unlock of `mutex`.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var value: Value

  public init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    let result = pthread_mutex_init(mutex, nil)
    precondition(result == 0, "pthread_mutex_init failed: \(result)")
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Runs `body` with the lock held; keep it short and never call out to user code or block.
  @inlinable
  public func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock()
    defer { unlock() }
    return try body(&valueStorage)
  }

  @usableFromInline
  var valueStorage: Value {
    get { value }
    _modify { yield &value }
  }

  @usableFromInline
  func lock() {
    pthread_mutex_lock(mutex)
  }

  @usableFromInline
  func unlock() {
    pthread_mutex_unlock(mutex)
  }
}
