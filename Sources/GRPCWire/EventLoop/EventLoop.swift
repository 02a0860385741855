internal import CGRPCSystem
internal import Glibc
internal import FleetSync
internal import Synchronization

/// One thread that owns sockets, nghttp2 sessions and timers, driven by epoll.
///
/// Work from other threads arrives through ``execute(_:)``: a queue plus an eventfd wake-up.
/// Everything registered with the loop (file descriptors, timers, end-of-tick hooks) is only
/// touched on the loop thread; the public loop-only functions check that in every build
/// (``preconditionInEventLoop(_:file:line:)``), and so do the internal ones
/// (``checkInLoop(_:_:)``). The loop runs until ``shutdown()``.
///
/// The loop is also a Swift `TaskExecutor`. A task that prefers it
/// (`Task(executorPreference: loop)`, `withTaskExecutorPreference(loop)`,
/// `group.addTask(executorPreference: loop)`) runs on the loop thread, so a gRPC call it makes
/// on a channel or server of this loop starts and completes with no thread hop and no
/// wake-up: the call is handed to the connection and the task resumed within the same loop
/// tick. Such code must not block; it shares the thread with every socket of the loop.
public final class EventLoop: TaskExecutor, @unchecked Sendable {
  // @unchecked Sendable: `pending` is behind a Mutex, `pendingAnnounced` and `shutDown` are
  // atomic; every other stored property is only read or written on the loop thread (checked
  // by `checkInLoop`, in every build), except `thread`, written once before the loop is shared
  // and then only joined or detached (the thread check reads a thread-local, not `thread`).

  /// The epoll descriptor and the eventfd that wakes the loop.
  private let epollFD: Int32
  private let wakeFD: Int32
  private let pending = PosixMutex(Pending())
  /// `pending.wakeSent`, readable without the lock: the loop looks at `pending` (takes its
  /// lock) only when another thread has queued something since it last did, or the eventfd
  /// woke it (`wakeRead`). Written only with the lock held.
  private let pendingAnnounced = Atomic<Bool>(false)
  /// The loop read the eventfd and has not looked at `pending` since (loop only). Whatever
  /// the atomic's read says, the lock is taken after a wake-up: an item whose queueing wrote
  /// the eventfd is seen, since that write came after the item went in under the lock.
  @exclusivity(unchecked) private var wakeRead = false
  private var thread = pthread_t()
  private var handlers: [Int32: any EventHandler] = [:]
  /// The loop's timers and end-of-tick hooks (EventLoop+Timers.swift); loop only.
  var timers = TimerHeap()
  var tickEnd: [any TickEndHandler] = []
  private var running = true
  /// Work and jobs queued from the loop thread itself: no lock, no wake-up (the loop drains it
  /// before it waits again).
  @exclusivity(unchecked) private var local: [Item] = []
  /// `local`'s twin: the batch being run while new items go to `local`.
  @exclusivity(unchecked) private var runningBatch: [Item] = []
  /// Whether ``shutdown()`` was called: it acts once.
  private let shutDown = Atomic<Bool>(false)
  /// Whether the thread has been detached (stopped from its own thread; nobody joins it).
  private var detached = false
  /// The buffer every connection of this loop reads its socket into (loop only). A read is
  /// handed to nghttp2 at once, which copies what it keeps, and its DATA to the connection
  /// before the next read (``withReadBuffer(size:_:)``), so one buffer serves all
  /// connections: an idle connection holds no read buffer of its own.
  let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
  /// Whether `readBuffer` is lent: set only by ``withReadBuffer(size:_:)``
  /// (EventLoop+ReadBuffer.swift). Loop only.
  @exclusivity(unchecked) var readBufferLent = false
  @exclusivity(unchecked) private var flushRoundsLeft = 0  // of this poll's ``flushRounds``

  /// One thing to run on the loop: a closure, an object's ``LoopTask/runOnLoop()``, or a job
  /// of a task that prefers this loop.
  private enum Item {
    case work(@Sendable () -> Void)
    case task(any LoopTask)
    case job(UnownedJob)
  }

  private struct Pending {
    var items: [Item] = []
    /// Whether the loop has been woken since it last drained `items`: saves eventfd writes
    /// when many tasks arrive in one tick.
    var wakeSent = false
    /// The loop has stopped: nothing queued would run, and its eventfd's number is (about
    /// to be) free for another owner.
    var stopped = false
  }

  /// Starts a loop on a new thread named `name`.
  public init(name: String) {
    epollFD = fleet_epoll_create()
    wakeFD = fleet_eventfd()
    precondition(epollFD >= 0 && wakeFD >= 0, "cannot create epoll or eventfd: errno \(errno)")
    precondition(fleet_epoll_ctl(epollFD, 1, wakeFD, UInt32(FLEET_EPOLL_IN)) == 0)
    let box = Unmanaged.passRetained(LoopStart(loop: self, name: name))
    precondition(pthread_create(&thread, nil, loopThreadMain, box.toOpaque()) == 0)
  }

  deinit { readBuffer.deallocate() }

  /// Runs `work` on the loop thread, soon; callable from any thread, including the loop's
  /// (then it runs later in the same tick, never inside the caller).
  ///
  /// Returns false, and `work` never runs, once the loop has stopped (``shutdown()``): what
  /// `work` would have done (resume a waiter, end a call) is then the caller's to do. Work
  /// queued while the loop stops runs if it came before the stop, else it is dropped.
  @discardableResult
  public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
    enqueue(.work(work))
  }

  /// Runs `task.runOnLoop()` on the loop thread, soon, in order with ``execute(_:)``'s work:
  /// the same as executing a closure that calls it, without allocating one. False, as
  /// ``execute(_:)``, once the loop has stopped.
  @discardableResult
  func execute(_ task: any LoopTask) -> Bool {
    enqueue(.task(task))
  }

  /// Runs a job of a task that prefers this loop (`TaskExecutor`).
  public func enqueue(_ job: consuming ExecutorJob) {
    enqueue(.job(UnownedJob(job)))
  }

  private func enqueue(_ item: Item) -> Bool {
    if inEventLoop {
      local.append(item)
      return true
    }
    let mustWake = pending.withLock { p -> Bool? in
      // Checked under the lock the loop takes to stop: no eventfd write after that.
      guard !p.stopped else { return nil }
      p.items.append(item)
      defer {
        p.wakeSent = true
        pendingAnnounced.store(true, ordering: .releasing)
      }
      return !p.wakeSent
    }
    guard let mustWake else { return false }
    // A stop between the unlock and this write (the loop ending and its owner closing the
    // eventfd) would need this thread held off for all of it; not guarded against.
    if mustWake {
      var one: UInt64 = 1
      _ = write(wakeFD, &one, 8)
    }
    return true
  }

  /// Stops the loop after the work queued so far and waits for its thread to end. Handlers
  /// still registered are closed first. Not callable on the loop itself.
  ///
  /// Called on the loop itself (by a task that prefers the loop), it cannot wait for its own
  /// thread: the loop stops once the current tick is done and its thread ends by itself.
  ///
  /// Only the first call acts; a later one (from any thread) returns at once. Acting twice
  /// would join or detach an ended thread and close descriptor numbers another owner may
  /// have been given since.
  public func shutdown() {
    guard !shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
    if inEventLoop {
      running = false
      detached = true
      pthread_detach(thread)
      for handler in handlers.values { handler.loopClosing() }
      return
    }
    execute { [self] in
      running = false
      for handler in handlers.values { handler.loopClosing() }
    }
    pthread_join(thread, nil)
    close(epollFD)
    close(wakeFD)
  }

  /// Whether the loop thread is inside `nghttp2_session_mem_recv` or `mem_send` of one of its
  /// sessions (loop only). nghttp2's callbacks only record (``HTTP2Session``):
  /// ``checkOutsideCallbacks(_:_:)`` stops the process if role code runs there.
  @exclusivity(unchecked) var insideNGHTTP2 = false

  // MARK: File descriptors (loop only)

  struct Interest: OptionSet {
    let rawValue: UInt32
    static let read = Interest(rawValue: UInt32(FLEET_EPOLL_IN | FLEET_EPOLL_RDHUP))
    static let write = Interest(rawValue: UInt32(FLEET_EPOLL_OUT))
  }

  func register(_ fd: Int32, _ interest: Interest, _ handler: any EventHandler) {
    checkInLoop()
    handlers[fd] = handler
    let result = fleet_epoll_ctl(epollFD, 1, fd, interest.rawValue)
    precondition(result == 0, "epoll_ctl(ADD, \(fd)) failed: errno \(errno)")
  }

  func modify(_ fd: Int32, _ interest: Interest) {
    checkInLoop()
    let result = fleet_epoll_ctl(epollFD, 3, fd, interest.rawValue)
    precondition(result == 0, "epoll_ctl(MOD, \(fd)) failed: errno \(errno)")
  }

  /// Moves `fd` from `current` to `wanted` interest: registers, modifies or unregisters it as
  /// the two require, and then sets `current` to `wanted`.
  func changeInterest(
    _ fd: Int32, from current: inout Interest, to wanted: Interest, _ handler: any EventHandler
  ) {
    guard wanted != current else { return }
    if current.isEmpty {
      register(fd, wanted, handler)
    } else if wanted.isEmpty {
      unregister(fd)
    } else {
      modify(fd, wanted)
    }
    current = wanted
  }

  /// Forgets `fd` (before the caller closes it).
  func unregister(_ fd: Int32) {
    checkInLoop()
    handlers[fd] = nil
    _ = fleet_epoll_ctl(epollFD, 2, fd, 0)
  }

  // MARK: The loop

  fileprivate func run() {
    let capacity = 64
    let events = UnsafeMutablePointer<fleet_epoll_ready>.allocate(capacity: capacity)
    defer { events.deallocate() }
    while running {
      flushRoundsLeft = Self.flushRounds
      // Work queued on the loop itself, and flushes a step left for later, are not announced
      // by the eventfd: do not sleep on them.
      let timeout = local.isEmpty && tickEnd.isEmpty ? timers.millisecondsUntilNext(now: .now) : 0
      let count = fleet_epoll_wait(epollFD, events, Int32(capacity), timeout)
      if count < 0 {
        precondition(errno == EINTR, "epoll_wait failed: errno \(errno)")
        continue
      }
      for i in 0..<Int(count) {
        let event = events[i]
        let fd = event.fd
        if fd == wakeFD {
          var value: UInt64 = 0
          _ = read(wakeFD, &value, 8)
          wakeRead = true
          continue
        }
        // A handler may unregister itself or others while handling; look each up afresh.
        if event.events & Self.readableEvents != 0 { handlers[fd]?.readable() }
        if event.events & UInt32(FLEET_EPOLL_OUT) != 0 { handlers[fd]?.writable() }
        // Finish this socket's part before the next socket's: the tasks its data started
        // run, and what they answered goes out now. Left to the end of the tick, every
        // answer would wait for every other socket's work, and a busy loop settles into
        // ever larger bursts (each side's long tick making the other's next one longer).
        finishStep()
      }
      // Work queued from other threads (announced by the wake-up) runs before the timers.
      finishStep()
      let now = MonotonicInstant.now
      while let due = timers.popDue(now: now) { due.run() }
      finishStep()
    }
    // Stopped: let go of everything registered. Timer bodies and handlers hold connections
    // that hold this loop; keeping them would leak the whole graph.
    handlers.removeAll()
    timers.removeAll()
    tickEnd.removeAll()
    local.removeAll()
    runningBatch.removeAll()
    pending.withLock {
      $0.items.removeAll()
      $0.stopped = true
    }
    if detached {
      close(epollFD)
      close(wakeFD)
    }
  }

  /// Runs the work queued so far and the end-of-step hooks (flushes), and what the flushes
  /// resumed: callers waiting on the loop run now, and what they send goes out in the next
  /// flush of this same step — while the poll has ``flushRounds`` left. A writer refilling its
  /// queue at each flush would otherwise keep the loop from its sockets (a client's RST_STREAM,
  /// its WINDOW_UPDATEs, a new connection); the flushes owed run after a poll that won't sleep.
  private func finishStep() {
    runPendingWork()
    while flushRoundsLeft > 0, !tickEnd.isEmpty {
      flushRoundsLeft -= 1
      let due = tickEnd
      tickEnd.removeAll(keepingCapacity: true)
      for handler in due { handler.tickEnded() }
      runPendingWork()
    }
  }

  /// Flush rounds per poll, shared by its steps (per step, a few endless streams and ready
  /// sockets wrote megabytes between polls): with writers that queue 64 KiB before they give
  /// way (``ServerStream/loopWriteLimit``), 256 KiB per stream between two polls.
  static let flushRounds = 4

  private static let readableEvents = UInt32(
    FLEET_EPOLL_IN | FLEET_EPOLL_RDHUP | FLEET_EPOLL_HUP
      | FLEET_EPOLL_ERR)

  /// Runs what was queued, and what that queues, for a few rounds: work that keeps queueing
  /// more (a task that only yields) cannot starve the sockets; the rest waits for the next
  /// tick, which then polls without sleeping.
  private func runPendingWork() {
    for _ in 0..<8 {
      var ran = false
      if !local.isEmpty {
        swap(&local, &runningBatch)
        run(runningBatch)
        runningBatch.removeAll(keepingCapacity: true)
        ran = true
      }
      // Nothing announced and no wake-up read: nothing queued from another thread, and no
      // lock taken (a loop whose work is its own runs several steps a tick, each calling
      // this). An item queued after this read comes with an eventfd write (`wakeSent` was
      // false), which wakes the loop, and then `wakeRead` takes the lock.
      guard wakeRead || pendingAnnounced.load(ordering: .acquiring) else {
        if !ran { return }
        continue
      }
      wakeRead = false
      let items = pending.withLock { p -> [Item] in
        p.wakeSent = false
        pendingAnnounced.store(false, ordering: .relaxed)
        return p.items.isEmpty ? [] : p.items.exchange([])
      }
      if !items.isEmpty {
        run(items)
        ran = true
      }
      if !ran { return }
    }
  }

  private func run(_ items: [Item]) {
    for item in items {
      switch item {
      case .work(let work): work()
      case .task(let task): task.runOnLoop()
      case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
      }
    }
  }
}

/// An object with one thing to run on its loop (``EventLoop/execute(_:)``): for work queued
/// on every call, which a closure would cost an allocation each time.
protocol LoopTask: AnyObject, Sendable {
  /// Runs on the loop thread.
  func runOnLoop()
}

/// How much a connection reads per readiness, into its loop's ``EventLoop/readBuffer``.
///
/// What a read costs the loop depends on what arrives: a server's 16 KiB of small requests
/// starts about 150 handlers, a client's 64 KiB holds a few dozen responses. Bounding the
/// reads bounds a step, and the answers of a step go out at its end.
struct ReadBudget {
  /// Bytes per read (at most the loop's buffer).
  var bytes: Int
  /// Reads per readiness.
  var reads: Int

  /// Responses: up to 4 reads of 64 KiB.
  static let client = ReadBudget(bytes: 64 << 10, reads: 4)
  /// Requests: one read of 16 KiB, since each request starts a handler.
  static let server = ReadBudget(bytes: 16 << 10, reads: 1)
}

/// Something the loop calls when its file descriptor is ready.
///
/// A readable handler reads a bounded amount (see ``ReadBudget``) and returns: the loop
/// reports the socket again while data is left (level-triggered), and meanwhile the other
/// sockets of the loop get their turn, so no connection makes the others wait long.
protocol EventHandler: AnyObject {
  /// Readable, or hung up, or in error: the handler reads and finds out which.
  func readable()
  func writable()
  /// The loop is shutting down: release the descriptor.
  func loopClosing()
}

private final class LoopStart {
  let loop: EventLoop
  let name: String
  init(loop: EventLoop, name: String) {
    self.loop = loop
    self.name = name
  }
}

private func loopThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  let start = Unmanaged<LoopStart>.fromOpaque(argument!).takeRetainedValue()
  fleet_set_thread_name(String(start.name.prefix(15)))
  // Every socket write happens on this thread; one to a reset peer must not kill the process.
  fleet_block_sigpipe_on_this_thread()
  fleet_set_current_loop(UnsafeRawPointer(Unmanaged.passUnretained(start.loop).toOpaque()))
  defer { fleet_set_current_loop(nil) }
  start.loop.run()
  return nil
}
