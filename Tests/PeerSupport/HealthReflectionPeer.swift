/// `Tests/Python/health_reflection_client.py`: grpcio's own health-checking and reflection
/// clients against a server of ours (fleet-sim, interop-server).
public enum HealthReflectionPeer {
  /// The call the script builds from the descriptors reflection sends, then makes.
  public enum Call: Sendable {
    /// `maps.fleetengine.v1.TripService/GetTrip` of this trip (fleet-sim).
    case getTrip(String)
    /// `grpc.testing.TestService/UnaryCall` (interop-server, fleet-sim).
    case unaryCall

    var argument: String {
      switch self {
      case .getTrip(let name): "get-trip:\(name)"
      case .unaryCall: "unary-call"
      }
    }
  }

  /// What the script reported.
  public struct Result: Sendable {
    public var output: PythonPeer.Output
    /// The names of the checks that passed, in order (`health.check.serving[]`, `v1.get_trip`…).
    public var checks: [String]
    /// Whether it exited 0 after `RESULT ok`.
    public var passed: Bool { output.status == 0 && output.stdoutText.contains("\nRESULT ok ") }
  }

  /// Runs the script against `127.0.0.1:port`: every service of `serving` must be SERVING,
  /// `call` is made through reflection, and last the script sends SIGTERM to `stopping` and
  /// watches health turn NOT_SERVING.
  public static func run(
    port: Int, call: Call, serving: [String], stopping pid: Int32
  ) async throws -> Result {
    let arguments =
      ["--target", "127.0.0.1:\(port)", "--call", call.argument, "--stop-pid", "\(pid)"]
      + serving.flatMap { ["--serving", $0] }
    let output = try await PythonPeer.run(
      "health_reflection_client.py", arguments, timeout: .seconds(90))
    output.attach(as: "health_reflection_client")
    let checks = output.stdoutText.split(separator: "\n").compactMap { line in
      line.hasPrefix("CHECK ") ? String(line.dropFirst(6)) : nil
    }
    return Result(output: output, checks: checks)
  }
}
