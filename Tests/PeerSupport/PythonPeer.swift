import Foundation

/// Runs a script of `Tests/Python` with the venv's interpreter, so that a test can check our
/// code against Google's own implementations (message classes, descriptors, grpcio).
///
/// The interpreter is `$FLEET_PYTHON` when set, else `<package root>/.venv/bin/python`;
/// `scripts/test` creates that venv and sets the variable. When the interpreter is missing the
/// calling test fails with ``PythonPeerError/noInterpreter(_:)``: these tests are the proof of
/// wire compatibility, so they never skip.
///
/// ``run(_:_:stdin:timeout:)`` runs a script to its end as a ``ChildProcess``; a script that
/// serves is a ``PeerServer``.
public enum PythonPeer {
  /// What a finished script left behind.
  public typealias Output = ChildProcess.Output

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

  /// The path of `name` in `Tests/Python`; throws ``ChildProcessError/notFound(_:hint:)`` when
  /// there is no such script.
  static func existingScript(_ name: String) throws -> URL {
    let url = script(name)
    guard FileManager.default.fileExists(atPath: url.path) else {
      throw ChildProcessError.notFound(url.path, hint: "no such script in Tests/Python")
    }
    return url
  }

  /// Runs `Tests/Python/<script> <arguments…>` from the package root with `stdin` as its
  /// standard input, and returns once it has exited.
  ///
  /// Throws ``PythonPeerError`` when there is no interpreter, ``ChildProcessError`` when there
  /// is no such script and when the script is still running after `timeout` (it is then
  /// killed). A non-zero exit status is not an error here: it is in the `Output` for the test
  /// to judge.
  public static func run(
    _ script: String, _ arguments: [String] = [], stdin: [UInt8] = [],
    timeout: Duration = .seconds(120)
  ) async throws -> Output {
    let python = try interpreter()
    let scriptURL = try existingScript(script)
    let process = try ChildProcess(
      python, [scriptURL.path] + arguments, name: script, workingDirectory: packageRoot,
      stdin: stdin)
    return try await process.output(within: timeout)
  }
}

/// Why a Python peer could not do its job; the test that asked for it fails with this.
public enum PythonPeerError: Error, CustomStringConvertible {
  /// There is no interpreter to run: the venv has not been created.
  case noInterpreter(String)

  public var description: String {
    switch self {
    case .noInterpreter(let why):
      "no Python interpreter for the peer scripts: \(why). Run `scripts/test` (it creates the "
        + "venv at .venv and sets FLEET_PYTHON), or set FLEET_PYTHON to a Python with "
        + "Tests/Python/requirements.txt installed"
    }
  }
}
