import FleetSync
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What two threads of its own learn about one ``ChildProcess``: its stdout, line by line, and
/// its exit; and the waits for either, each a continuation resumed when the state satisfies it.
///
/// The exit thread first waits with `WNOWAIT` (the child stays a zombie and its PID cannot be
/// reused), then reaps it inside the lock that ``signal(_:)`` also takes, so a signal reaches
/// our child or nobody. Once the child has exited, the stdout thread reads what is left in the
/// pipe and stops, even when a grandchild still holds the pipe open.
///
/// The threads hold this object, not the ``ChildProcess``: the owner can go away (and kill the
/// child) while they still reap it.
final class ChildWatch: Sendable {
  struct State: Sendable {
    /// Every byte of stdout so far.
    var stdout: [UInt8] = []
    /// Every stdout line, in order, without the newline.
    var lines: [String] = []
    /// Set once no more stdout will come: EOF, or the child exited and the pipe was drained.
    var stdoutClosed = false
    /// Set once the child has exited (just before it is reaped).
    var exit: ChildProcess.Exit?
    fileprivate var waiters: [UInt64: Waiter] = [:]
    fileprivate var cancelled: Set<UInt64> = []
    fileprivate var nextWaiter: UInt64 = 0
    /// The threads still using `exited`; the last one closes it (closed earlier, a write to it
    /// would raise SIGPIPE in the test process, a poll of it would race a reuse of the fd).
    fileprivate var threadsUsingExitPipe = 2

    /// It has exited and all it printed is in `stdout`.
    var finished: Bool { exit != nil && stdoutClosed }
  }

  fileprivate struct Waiter: Sendable {
    /// Returns what to do (outside the lock) when the wait is over, or nil to keep waiting.
    var evaluate: @Sendable (State) -> (@Sendable () -> Void)?
    var fail: @Sendable (any Error) -> Void
  }

  let pid: pid_t
  /// The file stderr goes to, or nil when it goes into stdout.
  let stderrURL: URL?
  private let state = PosixMutex(State())
  /// Written to once the child has exited, to wake the stdout thread.
  private let exited: (read: Int32, write: Int32)

  /// Starts watching child `pid`, whose stdout is the read end `stdout` (this takes it over).
  init(pid: pid_t, stdout: Int32, stderrURL: URL?) throws {
    self.pid = pid
    self.stderrURL = stderrURL
    var fds: [Int32] = [-1, -1]
    guard GNU.pipeCloseOnExec(&fds) == 0 else {
      let code = errno
      close(stdout)
      throw ChildProcessError.spawnFailed("pipe", code)
    }
    exited = (fds[0], fds[1])
    Thread.detachNewThread { [self] in readLines(from: stdout) }
    Thread.detachNewThread { [self] in awaitExit() }
  }

  /// What the child has written to stderr so far.
  var stderr: String {
    guard let stderrURL else { return "" }
    return String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
  }

  var snapshot: State { state.withLock { $0 } }

  /// Sends `signal` unless the child has exited; returns whether it was sent.
  @discardableResult
  func signal(_ signal: Int32) -> Bool {
    // Under the lock the exit thread reaps in, so `pid` is still our child (maybe a zombie).
    state.withLock { state in
      guard state.exit == nil else { return false }
      return kill(pid, signal) == 0
    }
  }

  /// Waits until `check` returns a result for the state (checked now and after every change),
  /// for at most `timeout`. Errors carry the child's stderr and, once known, its exit.
  func wait<T: Sendable>(
    for what: String, timeout: Duration,
    _ check: @escaping @Sendable (State) -> Result<T, ChildProcessError>?
  ) async throws -> T {
    do {
      return try await waitWithoutTranscript(for: what, timeout: timeout, check)
    } catch let error as ChildProcessError {
      throw completed(error)
    }
  }

  private func waitWithoutTranscript<T: Sendable>(
    for what: String, timeout: Duration,
    _ check: @escaping @Sendable (State) -> Result<T, ChildProcessError>?
  ) async throws -> T {
    let id = state.withLock { state in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<T, any Error>) in
        let finish: @Sendable (Result<T, ChildProcessError>) -> @Sendable () -> Void = { result in
          { continuation.resume(with: result.mapError { $0 as any Error }) }
        }
        let now: (@Sendable () -> Void)? = state.withLock { state in
          if state.cancelled.remove(id) != nil {
            return { continuation.resume(throwing: CancellationError()) }
          }
          if let result = check(state) { return finish(result) }
          state.waiters[id] = Waiter(
            evaluate: { state in check(state).map(finish) },
            fail: { continuation.resume(throwing: $0) })
          return nil
        }
        if let now {
          now()
          return
        }
        Task { [weak self] in
          try? await Task.sleep(for: timeout)
          guard let self else { return }
          let lines = self.snapshot.lines
          self.fail(
            id,
            ChildProcessError.timedOut(waitingFor: what, after: timeout, stdout: lines, stderr: ""))
        }
      }
    } onCancel: {
      let registered = state.withLock { state in
        if state.waiters[id] != nil { return true }
        state.cancelled.insert(id)
        return false
      }
      if registered { fail(id, CancellationError()) }
    }
  }

  /// Errors are made inside the state lock, where stderr is not read and the exit may not
  /// have been seen yet; fills both in.
  private func completed(_ error: ChildProcessError) -> ChildProcessError {
    let stderr = self.stderr
    let exit = snapshot.exit
    switch error {
    case .exitedBeforeListening(let name, let status, let stdout, _):
      return .exitedBeforeListening(name, exit ?? status, stdout: stdout, stderr: stderr)
    case .badListeningLine(let name, let line, let expected, _):
      return .badListeningLine(name, line, expected: expected, stderr: stderr)
    case .exited(let what, let status, let stdout, _):
      return .exited(waitingFor: what, exit ?? status, stdout: stdout, stderr: stderr)
    case .timedOut(let what, let after, let stdout, _):
      return .timedOut(waitingFor: what, after: after, stdout: stdout, stderr: stderr)
    case .notFound, .spawnFailed:
      return error
    }
  }

  private func fail(_ id: UInt64, _ error: any Error) {
    let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
    waiter?.fail(error)
  }

  /// Applies `change` and resumes the waiters it satisfies (outside the lock).
  private func update(_ change: @Sendable (inout State) -> Void) {
    let actions = state.withLock { state -> [@Sendable () -> Void] in
      change(&state)
      var ready: [@Sendable () -> Void] = []
      for (id, waiter) in state.waiters {
        if let action = waiter.evaluate(state) {
          state.waiters[id] = nil
          ready.append(action)
        }
      }
      return ready
    }
    for action in actions { action() }
  }

  // MARK: The two threads

  private func readLines(from fd: Int32) {
    defer {
      close(fd)
      doneWithExitPipe()
    }
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var childExited = false
    while true {
      var fds = [
        pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: exited.read, events: Int16(POLLIN), revents: 0),
      ]
      // Until the exit, block for output or the exit; after it, take only what is there: the
      // child's writes are all in the pipe by now, and a grandchild may hold it open for good.
      let ready = poll(&fds, childExited ? 1 : 2, childExited ? 0 : -1)
      if ready < 0 && errno == EINTR { continue }
      if ready <= 0 { break }
      if !childExited && fds[1].revents != 0 {
        childExited = true
        continue
      }
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      let bytes = buffer[0..<count]
      pending.append(contentsOf: bytes)
      var lines: [String] = []
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        lines.append(String(decoding: pending[..<newline], as: UTF8.self))
        pending.removeSubrange(...newline)
      }
      let chunk = Array(bytes)
      let batch = lines
      update { state in
        state.stdout.append(contentsOf: chunk)
        state.lines.append(contentsOf: batch)
      }
    }
    let last = pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    update { state in
      if let last { state.lines.append(last) }
      state.stdoutClosed = true
    }
  }

  private func awaitExit() {
    var info = siginfo_t()
    // WNOWAIT: learn of the exit but leave the zombie, so the PID stays ours until we reap.
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
    update { state in
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      // The <sys/wait.h> macros do not import: low 7 bits = terminating signal, else the
      // exit code is in bits 8–15.
      let signal = status & 0x7f
      state.exit = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
    var byte: UInt8 = 1
    _ = write(exited.write, &byte, 1)
    doneWithExitPipe()
  }

  private func doneWithExitPipe() {
    let last = state.withLock { state in
      state.threadsUsingExitPipe -= 1
      return state.threadsUsingExitPipe == 0
    }
    if last {
      close(exited.read)
      close(exited.write)
    }
  }
}
