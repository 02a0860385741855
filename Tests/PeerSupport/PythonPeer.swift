import Dispatch
import Foundation
import FleetSync
import Testing

/// Runs a script of `Tests/Python` with the venv's interpreter, so that a test can check our
/// code against Google's own implementations (message classes, descriptors, grpcio).
///
/// The interpreter is `$FLEET_PYTHON` when set, else `<package root>/.venv/bin/python`;
/// `scripts/test` creates that venv and sets the variable. When the interpreter is missing the
/// calling test fails with ``PythonPeerError/noInterpreter(_:)``: these tests are the proof of
/// wire compatibility, so they never skip.
///
/// Output goes to temporary files rather than pipes, so a script that writes a lot while we
/// are not reading cannot block; the caller gets it all once the process has exited.
public enum PythonPeer {
  /// What a finished script left behind.
  public struct Output: Sendable {
    /// The exit status (or the signal number when a signal ended it).
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: String

    /// `stdout` as UTF-8 text.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    /// The exit status and both streams, for a failure message.
    public var transcript: String {
      "exit status \(status)\n--- stdout ---\n\(stdoutText)\n--- stderr ---\n\(stderr)"
    }

    /// Attaches both streams to the current test, named after `name` (kept when `swift test`
    /// runs with `--attachments-path`; failure messages carry `transcript` regardless).
    public func attach(as name: String) {
      Attachment.record(stdout, named: "\(name).stdout.txt")
      Attachment.record(stderr, named: "\(name).stderr.txt")
    }
  }

  /// The package root: this file is `<root>/Tests/PeerSupport/PythonPeer.swift`.
  public static let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // PeerSupport
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

  /// The Python interpreter to run scripts with; throws when there is none.
  public static func interpreter() throws(PythonPeerError) -> URL {
    let files = FileManager.default
    if let configured = ProcessInfo.processInfo.environment["FLEET_PYTHON"], !configured.isEmpty {
      guard files.isExecutableFile(atPath: configured) else {
        throw .noInterpreter("FLEET_PYTHON is \(configured), which is not an executable file")
      }
      return URL(fileURLWithPath: configured)
    }
    let venv = packageRoot.appendingPathComponent(".venv/bin/python")
    guard files.isExecutableFile(atPath: venv.path) else {
      throw .noInterpreter("FLEET_PYTHON is not set and \(venv.path) does not exist")
    }
    return venv
  }

  /// The path of `name` in `Tests/Python`.
  public static func script(_ name: String) -> URL {
    packageRoot.appendingPathComponent("Tests/Python").appendingPathComponent(name)
  }

  /// Runs `Tests/Python/<script> <arguments…>` from the package root with `stdin` as its
  /// standard input, and returns once it has exited.
  ///
  /// Throws ``PythonPeerError`` when there is no interpreter or no such script, and when the
  /// script is still running after `timeout` (it is then killed). A non-zero exit status
  /// is not an error here: it is in the `Output` for the test to judge.
  public static func run(
    _ script: String, _ arguments: [String] = [], stdin: [UInt8] = [],
    timeout: Duration = .seconds(120)
  ) async throws -> Output {
    let python = try interpreter()
    let files = FileManager.default
    let scriptURL = Self.script(script)
    guard files.fileExists(atPath: scriptURL.path) else {
      throw PythonPeerError.noScript(scriptURL.path)
    }

    let directory = files.temporaryDirectory.appendingPathComponent(
      "python-peer-\(UUID().uuidString)", isDirectory: true)
    try files.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? files.removeItem(at: directory) }
    let inputURL = directory.appendingPathComponent("stdin")
    let outputURL = directory.appendingPathComponent("stdout")
    let errorURL = directory.appendingPathComponent("stderr")
    try Data(stdin).write(to: inputURL)
    try Data().write(to: outputURL)
    try Data().write(to: errorURL)

    let process = Process()
    process.executableURL = python
    process.arguments = [scriptURL.path] + arguments
    process.currentDirectoryURL = packageRoot
    let input = try FileHandle(forReadingFrom: inputURL)
    let output = try FileHandle(forWritingTo: outputURL)
    let error = try FileHandle(forWritingTo: errorURL)
    defer {
      try? input.close()
      try? output.close()
      try? error.close()
    }
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error

    let timedOut = PosixMutex(false)
    try await withCheckedThrowingContinuation { (exited: CheckedContinuation<Void, any Error>) in
      // Set before `run`, so that an instant exit still resumes the continuation.
      process.terminationHandler = { _ in exited.resume() }
      do {
        try process.run()
      } catch {
        exited.resume(throwing: error)
        return
      }
      let (seconds, attoseconds) = timeout.components
      let deadline = DispatchTime.now() + Double(seconds) + Double(attoseconds) / 1e18
      DispatchQueue.global().asyncAfter(deadline: deadline) {
        guard process.isRunning else { return }
        timedOut.withLock { $0 = true }
        // SIGKILL, not `terminate()`: Foundation's Process on Linux starts the child with the
        // spawning thread's signal mask, in which SIGTERM and SIGINT are blocked, so SIGTERM
        // would not end it. The termination handler then resumes us.
        kill(process.processIdentifier, SIGKILL)
      }
    }

    let stderr = String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
    if timedOut.withLock({ $0 }) {
      throw PythonPeerError.timedOut(script: script, after: timeout, stderr: stderr)
    }
    return Output(
      status: process.terminationStatus,
      stdout: [UInt8]((try? Data(contentsOf: outputURL)) ?? Data()),
      stderr: stderr)
  }
}

/// Why a Python peer could not do its job; the test that asked for it fails with this.
public enum PythonPeerError: Error, CustomStringConvertible {
  /// There is no interpreter to run: the venv has not been created.
  case noInterpreter(String)
  /// `Tests/Python` has no such script.
  case noScript(String)
  /// The script was still running at the deadline and was killed.
  case timedOut(script: String, after: Duration, stderr: String)

  public var description: String {
    switch self {
    case .noInterpreter(let why):
      "no Python interpreter for the peer scripts: \(why). Run `scripts/test` (it creates the "
        + "venv at .venv and sets FLEET_PYTHON), or set FLEET_PYTHON to a Python with "
        + "Tests/Python/requirements.txt installed"
    case .noScript(let path): "no Python script at \(path)"
    case .timedOut(let script, let after, let stderr):
      "\(script) was still running after \(after) and was killed; stderr:\n\(stderr)"
    }
  }
}
