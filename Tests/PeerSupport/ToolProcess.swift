import Foundation

/// The package's executables (built beside the test bundle) as black boxes, on
/// ``ChildProcess``: run to their end (``run(_:_:timeout:stderr:)``), or started in the
/// background and watched (``start(_:_:stderr:)``, ``withTool(_:_:isolation:_:)``).
public enum ToolProcess {
  /// How the program ended and what it printed.
  public struct Result: CustomStringConvertible, Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
      self.status = status
      self.stdout = stdout
      self.stderr = stderr
    }

    /// Standard output's lines.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Each stdout line parsed as a JSON object (fails the decode if one is not).
    public func objects() throws -> [[String: Any]] {
      try lines.map { line in
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw NotAnObject(line: line) }
        return object
      }
    }

    public var description: String {
      "exit status \(status)\n--- stdout ---\n\(stdout)--- stderr ---\n\(stderr)"
    }
  }

  public struct NotAnObject: Error, CustomStringConvertible {
    public var line: String
    public var description: String { "not a JSON object: \(line)" }
  }

  /// The executable `name` beside the running test bundle.
  public static func executable(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent(name)
  }

  /// The executable `name` beside the running test bundle; throws
  /// ``ChildProcessError/notFound(_:hint:)`` when it has not been built.
  public static func builtExecutable(_ name: String) throws -> URL {
    let executable = executable(name)
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw ChildProcessError.notFound(
        executable.path, hint: "`swift build --build-tests` builds it")
    }
    return executable
  }

  /// Starts `<name> <arguments>` in the background, with no standard input; throws
  /// ``ChildProcessError/notFound(_:hint:)`` when it has not been built.
  public static func start(
    _ name: String, _ arguments: [String], stderr: ChildProcess.StandardError = .captured
  ) throws -> ChildProcess {
    try ChildProcess(builtExecutable(name), arguments, name: name, stderr: stderr)
  }

  /// Runs `<name> <arguments>` with no standard input and waits for it to end; it is killed
  /// and ``ChildProcessError/timedOut(waitingFor:after:stdout:stderr:)`` thrown after
  /// `timeout`.
  public static func run(
    _ name: String, _ arguments: [String], timeout: Duration = .seconds(30),
    stderr: ChildProcess.StandardError = .captured
  ) async throws -> Result {
    let output = try await start(name, arguments, stderr: stderr).output(within: timeout)
    return Result(status: output.status, stdout: output.stdoutText, stderr: output.stderr)
  }
}

/// Runs `body` with `<name> <arguments>` running (``ToolProcess/start(_:_:stderr:)``), and
/// stops it afterwards (``ChildProcess/stop(_:grace:)``), whether `body` returns or throws.
public func withTool<T>(
  _ name: String, _ arguments: [String], isolation: isolated (any Actor)? = #isolation,
  _ body: (ChildProcess) async throws -> T
) async throws -> T {
  let tool = try ToolProcess.start(name, arguments)
  return try await afterwards {
    try await body(tool)
  } then: {
    await tool.stop()
  }
}

/// `body`, then `cleanup`, whether `body` returns or throws (a `defer` cannot await).
func afterwards<T>(
  isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T,
  then cleanup: () async -> Void
) async throws -> T {
  do {
    let result = try await body()
    await cleanup()
    return result
  } catch {
    await cleanup()
    throw error
  }
}
