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
///
/// One allocation holds both the value and the mutex (a `ManagedBuffer`: the value as its
/// header, the `pthread_mutex_t` as its one element), and the value is reached through
/// pointers, so no run-time exclusivity check is made: a mutex is made for every call and
/// every followed trip, and taken several times per update.
///
/// A struct over that shared buffer: copies of a `PosixMutex` are the same lock and value.
public struct PosixMutex<Value>: @unchecked Sendable {
  // @unchecked Sendable: the value is only touched between lock and unlock of the mutex.
  @usableFromInline let storage: Storage

  // Inlinable, like `make`: specialised in the module that makes the mutex, which then finds
  // `Storage<Value>`'s metadata in a cache of its own. Not inlinable, the generic init asked
  // the runtime for that metadata (a locked hash-map lookup) on every call (perf: ~1 % of the
  // server's CPU per GetTrip, which makes a mutex per request).
  @inlinable
  public init(_ value: consuming Value) {
    storage = Storage.make(value)
  }

  /// Runs `body` with the lock held; keep it short and never call out to user code or block.
  @inlinable
  public func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    try storage.withUnsafeMutablePointers { (value, mutex) throws(Failure) -> Result in
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return try body(&value.pointee)
    }
  }

  /// The value and its mutex in one object.
  @usableFromInline
  final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
    @inlinable
    static func make(_ value: consuming Value) -> Storage {
      // Moved in, not copied: a copy of a value holding references would retain each of
      // them and release them again (a mutex is made for every call).
      var moving = Optional(value)
      let buffer = Storage.create(minimumCapacity: 1) { _ in moving.take()! }
      buffer.withUnsafeMutablePointerToElements { mutex in
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
      }
      // `create` makes an instance of the class it is called on.
      return unsafeDowncast(buffer, to: Storage.self)
    }

    deinit {
      withUnsafeMutablePointerToElements { mutex in
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
      }
    }
  }
}
