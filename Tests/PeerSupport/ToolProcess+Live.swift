import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension ToolProcess {
  /// One of the package's executables running in the background, its stdout lines watched as
  /// they come, so that a test can wait for what it prints next (within a timeout).
  ///
  /// Started by ``ToolProcess/start(_:_:)``; ended by its PID with ``stop(grace:)``, which
  /// ``withTool(_:_:isolation:_:)`` always calls. One dropped without `stop` is killed.
  public final class Live: Sendable {
    /// The executable's name, e.g. `fleet-follow`.
    public let name: String
    /// Its process ID.
    public let pid: pid_t
    private let process: PeerProcess

    fileprivate init(name: String, process: PeerProcess) {
      self.name = name
      self.pid = process.pid
      self.process = process
    }

    deinit {
      process.signal(SIGKILL)
    }

    /// Every stdout line so far.
    public var lines: [String] { process.snapshot.lines }

    /// What it has written to stderr so far.
    public var stderr: String { process.stderr }

    /// Waits for the first line at index `from` or later of `lines` that satisfies
    /// `predicate`, for at most `timeout`; throws ``PeerServerError`` after the timeout (with
    /// everything printed so far) or when the program ends first.
    public func waitForLine(
      from: Int = 0, timeout: Duration, _ what: String,
      where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
      let name = self.name
      do {
        return try await process.wait(for: "\(name): \(what)", timeout: timeout) { state in
          if from < state.lines.count,
            let line = state.lines[max(0, from)...].first(where: predicate)
          {
            return .success(line)
          }
          if state.stdoutClosed {
            return .failure(
              .exited(waitingFor: "\(name): \(what)", state.exit, stdout: state.lines, stderr: ""))
          }
          return nil
        }
      } catch PeerServerError.exited(let what, let status, let stdout, _) {
        throw PeerServerError.exited(waitingFor: what, status, stdout: stdout, stderr: stderr)
      } catch PeerServerError.timedOut(let what, let after, let stdout, _) {
        throw PeerServerError.timedOut(
          waitingFor: what, after: after, stdout: stdout, stderr: stderr)
      }
    }

    /// Ends it: SIGTERM, then SIGKILL if it still runs after `grace`; returns once it has been
    /// reaped. Safe to call more than once.
    public func stop(grace: Duration = .seconds(5)) async {
      process.signal(SIGTERM)
      let exited: @Sendable (PeerProcess.State) -> Swift.Result<Bool, PeerServerError>? = {
        $0.exit == nil ? nil : .success(true)
      }
      if (try? await process.wait(for: "\(name) to exit", timeout: grace, exited)) == nil {
        process.signal(SIGKILL)
        _ = try? await process.wait(for: "\(name) to exit", timeout: .seconds(30), exited)
      }
    }
  }

  /// Starts `<name> <arguments>` (built beside the test bundle) in the background.
  public static func start(_ name: String, _ arguments: [String]) throws -> Live {
    let executable = executable(name)
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw Missing(path: executable.path)
    }
    let process = try PeerProcess(
      executable: executable, arguments: arguments,
      environment: ProcessInfo.processInfo.environment)
    return Live(name: name, process: process)
  }
}

/// Runs `body` with `<name> <arguments>` running (``ToolProcess/start(_:_:)``), and stops it
/// afterwards, whether `body` returns or throws.
public func withTool<T>(
  _ name: String, _ arguments: [String], isolation: isolated (any Actor)? = #isolation,
  _ body: (ToolProcess.Live) async throws -> T
) async throws -> T {
  let tool = try ToolProcess.start(name, arguments)
  do {
    let result = try await body(tool)
    await tool.stop()
    return result
  } catch {
    await tool.stop()
    throw error
  }
}
