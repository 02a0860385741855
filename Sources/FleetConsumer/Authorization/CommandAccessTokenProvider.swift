internal import FleetSync
internal import Foundation

/// A provider that runs a command line for each token: `/bin/sh -c <command>` with
/// `FLEET_TRIP_ID` (and `FLEET_PROVIDER_ID`, `FLEET_TRIP_NAME`) in its environment, reading
/// `{"token": "...", "expiresAt": <unix seconds>}` or
/// `{"token": "...", "expiresInSeconds": <seconds from now>}` from its standard output.
///
/// For tokens minted by a script or a CLI (`gcloud`, a signing tool). The command must exit
/// with status 0 within `timeout` (else it is killed) and print at most 1 MiB. With both
/// expiries the earlier counts; with neither, a JWT's own `exp` does, and any other token is
/// used until the server answers UNAUTHENTICATED.
/// Its standard error (the last 500 bytes) goes into the error when it fails; its standard
/// output never does, since it may hold a token.
public struct CommandAccessTokenProvider: AccessTokenProvider {
  /// The command line, run by `/bin/sh -c`.
  public var command: String
  /// How long the command may run.
  public var timeout: Duration

  // At most this many token commands run at once in the process: a thousand trips starting
  // together must not fork a thousand shells.
  private static let limit = CommandLimit(16)

  /// Runs `command` for each token, killing it after `timeout`.
  public init(command: String, timeout: Duration = .seconds(30)) {
    self.command = command
    self.timeout = timeout
  }

  /// Runs the command for `context`'s trip and parses what it prints; throws
  /// ``AccessTokenProviderError`` when it cannot start, times out, exits non-zero or prints
  /// something else.
  public func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
    var environment = ProcessInfo.processInfo.environment
    environment["FLEET_TRIP_ID"] = context.tripID
    environment["FLEET_PROVIDER_ID"] = context.providerID
    environment["FLEET_TRIP_NAME"] = context.tripName.description
    await Self.limit.acquire()
    defer { Self.limit.release() }
    let result = try await CommandRun.run(
      ["/bin/sh", "-c", command], environment: environment, timeout: timeout)
    let source = "the token command"
    guard result.status == 0 else {
      let reason = result.signalled ? "was killed by signal" : "exited with status"
      let stderr = result.stderrTail.isEmpty ? "" : "; its stderr ends: \(result.stderrTail)"
      throw AccessTokenProviderError("\(source) \(reason) \(result.status)\(stderr)")
    }
    return try TokenResponse.parse(
      result.stdout, tokenKey: "token", expirationKey: "expiresAt", unit: .unixSeconds,
      source: source)
  }
}

/// One run of a child process, its output collected off the cooperative thread pool.
private final class CommandRun: Sendable {
  struct Result: Sendable {
    var status: Int32
    var signalled: Bool
    var stdout: Data
    var stderrTail: String
  }

  private struct State {
    var stdout: Data?
    var stderr: Data?
    var exit: (status: Int32, signalled: Bool)?
    /// Set until the caller has been resumed, exactly once.
    var continuation: CheckedContinuation<Result, any Error>?
    /// The timer that kills the command when it runs too long.
    var timeout: DispatchWorkItem?
  }

  private static let maximumOutput = 1 << 20
  private let state = PosixMutex(State())

  static func run(_ arguments: [String], environment: [String: String], timeout: Duration)
    async throws -> Result
  {
    let run = CommandRun()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.environment = environment
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdout
    process.standardError = stderr
    return try await withCheckedThrowingContinuation { continuation in
      run.state.withLock { $0.continuation = continuation }
      process.terminationHandler = { process in
        let signalled = process.terminationReason == .uncaughtSignal
        run.update { $0.exit = (process.terminationStatus, signalled) }
      }
      do {
        try process.run()
      } catch {
        run.fail(AccessTokenProviderError("the token command could not be started: \(error)"))
        return
      }
      // Blocking reads on threads of their own: not in a task, and not on Dispatch's pool,
      // which a slow command would hold. (FileHandle.readabilityHandler cannot be cleared
      // from inside itself on Linux.) `CommandLimit` bounds how many run at once.
      run.collect(stdout.fileHandleForReading) { state, data in state.stdout = data }
      run.collect(stderr.fileHandleForReading) { state, data in state.stderr = data }
      let (seconds, attoseconds) = timeout.components
      let deadline = DispatchTime.now() + Double(seconds) + Double(attoseconds) / 1e18
      let killer = DispatchWorkItem {
        guard process.isRunning else { return }
        // SIGKILL: Foundation starts children with SIGTERM blocked.
        kill(process.processIdentifier, SIGKILL)
        run.fail(
          AccessTokenProviderError("the token command was still running after \(timeout)"))
      }
      // Cancelled once the command is over, so the pending timer keeps nothing alive; not
      // armed at all when the command was quicker than this line.
      let stillRunning = run.state.withLock { state in
        guard state.continuation != nil else { return false }
        state.timeout = killer
        return true
      }
      if stillRunning { DispatchQueue.global().asyncAfter(deadline: deadline, execute: killer) }
    }
  }

  /// Reads `handle` to its end (keeping a little over 1 MiB at most) on a new thread, then
  /// stores what it read with `store`.
  private func collect(
    _ handle: FileHandle, _ store: @escaping @Sendable (inout State, Data) -> Void
  ) {
    Thread.detachNewThread { [self] in
      var data = Data()
      while let chunk = try? handle.read(upToCount: 64 << 10), !chunk.isEmpty {
        if data.count <= Self.maximumOutput { data.append(chunk) }
      }
      try? handle.close()
      update { store(&$0, data) }
    }
  }

  /// Records part of the outcome; resumes the caller once exit status and both streams are in.
  private func update(_ change: (inout State) -> Void) {
    typealias Outcome = Swift.Result<Result, AccessTokenProviderError>
    let ready: (CheckedContinuation<Result, any Error>, Outcome)? = state.withLock { state in
      change(&state)
      guard let exit = state.exit, let stdout = state.stdout, let stderr = state.stderr,
        let continuation = state.continuation
      else { return nil }
      state.continuation = nil
      state.timeout?.cancel()
      state.timeout = nil
      guard stdout.count <= Self.maximumOutput else {
        return (
          continuation,
          .failure(AccessTokenProviderError("the token command printed more than 1 MiB"))
        )
      }
      let tail = String(decoding: stderr.suffix(500), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
      return (
        continuation,
        .success(
          Result(status: exit.status, signalled: exit.signalled, stdout: stdout, stderrTail: tail))
      )
    }
    guard let (continuation, outcome) = ready else { return }
    continuation.resume(with: outcome.mapError { $0 as any Error })
  }

  /// Ends the wait with `error` unless it is already over.
  private func fail(_ error: AccessTokenProviderError) {
    let continuation = state.withLock { state in
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(throwing: error)
  }
}

/// A counting semaphore for tasks: ``acquire()`` waits (without blocking a thread) while
/// `capacity` holders are in.
private final class CommandLimit: Sendable {
  private struct State {
    var available: Int
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  private let state: PosixMutex<State>

  init(_ capacity: Int) {
    state = PosixMutex(State(available: capacity))
  }

  func acquire() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let admitted = state.withLock { state in
        guard state.available > 0 else {
          state.waiting.append(continuation)
          return false
        }
        state.available -= 1
        return true
      }
      if admitted { continuation.resume() }
    }
  }

  func release() {
    // The slot passes straight to the first waiter, if any.
    let next = state.withLock { state in
      guard !state.waiting.isEmpty else {
        state.available += 1
        return CheckedContinuation<Void, Never>?.none
      }
      return state.waiting.removeFirst()
    }
    next?.resume()
  }
}
