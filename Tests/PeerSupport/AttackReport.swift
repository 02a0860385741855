import Foundation

/// What one run of `Tests/Python/hostile_client.py` saw: its one JSON line, decoded.
///
/// The script documents every key at its top; a key that does not apply to an attack is
/// absent, hence the optionals. Times are seconds from the attack's start.
public struct AttackReport: Decodable, Sendable, CustomStringConvertible {
  /// The server's GOAWAY.
  public struct GoAway: Decodable, Sendable {
    public var errorCode: Int
    public var errorName: String
    public var lastStreamID: Int
    public var debug: String
    public var afterSeconds: Double?

    enum CodingKeys: String, CodingKey {
      case errorCode = "error_code"
      case errorName = "error_name"
      case lastStreamID = "last_stream_id"
      case debug
      case afterSeconds = "after_s"
    }
  }

  /// One request stream and what came back on it.
  public struct Call: Decodable, Sendable {
    /// What the attack called it (the method, or the grpc-timeout value sent).
    public var label: String
    public var stream: Int
    public var httpStatus: Int?
    /// From the trailers or a trailers-only response; nil when none came.
    public var grpcStatus: Int?
    public var grpcMessage: String?
    /// Whole response messages received.
    public var messages: Int
    public var rstName: String?
    public var ended: Bool
    /// Whether the response headers echoed the `x-grpc-test-echo-initial` the attack sent:
    /// TestService's handler ran.
    public var handlerEcho: Bool

    enum CodingKeys: String, CodingKey {
      case label, stream
      case httpStatus = "http_status"
      case grpcStatus = "grpc_status"
      case grpcMessage = "grpc_message"
      case messages
      case rstName = "rst_name"
      case ended
      case handlerEcho = "handler_echo"
    }
  }

  public var attack: String
  /// False: the target could not be reached.
  public var connected: Bool
  public var error: String?
  public var elapsedSeconds: Double?
  /// Whether the server closed the connection while the attack watched.
  public var closed: Bool?
  public var closedAfterSeconds: Double?
  public var goaway: GoAway?
  /// One per stream, when the attack opened at most 20.
  public var calls: [Call]?
  public var streamsOpened: Int?
  /// Streams by the grpc-status they ended with (`"none"`: no status).
  public var grpcStatusCounts: [String: Int]?
  public var rstCounts: [String: Int]?
  public var framesSent: Int?
  public var bytesSent: Int?
  public var prefaceBytes: Int?
  public var connectionsOpen: Int?
  /// The server's CPU time over the hold, as a share of one core.
  public var serverCPUShare: Double?
  public var serverFDs: Int?
  public var serverFDLimit: Int?
  /// The largest VmRSS of the server the attack sampled (every 100 ms).
  public var serverRSSMaxMiB: Double?
  /// budget-queue: whether the unary call got response headers while the budget was spent.
  public var unaryHeadersDuringHold: Bool?

  /// The JSON line as printed, for failure messages.
  public var line = ""

  enum CodingKeys: String, CodingKey {
    case attack, connected, error
    case elapsedSeconds = "elapsed_s"
    case closed
    case closedAfterSeconds = "closed_after_s"
    case goaway, calls
    case streamsOpened = "streams_opened"
    case grpcStatusCounts = "grpc_status_counts"
    case rstCounts = "rst_counts"
    case framesSent = "frames_sent"
    case bytesSent = "bytes_sent"
    case prefaceBytes = "preface_bytes"
    case connectionsOpen = "connections_open"
    case serverCPUShare = "server_cpu_share"
    case serverFDs = "server_fds"
    case serverFDLimit = "server_fd_limit"
    case serverRSSMaxMiB = "server_rss_max_mib"
    case unaryHeadersDuringHold = "unary_headers_during_hold"
  }

  public var description: String { line }

  /// A run that gave no report: the script failed, or could not reach the server.
  public struct Failed: Error, CustomStringConvertible {
    public var description: String
  }

  /// Runs `hostile_client.py <attack> --target 127.0.0.1:<port> <arguments>` to its end.
  ///
  /// Throws ``Failed`` when the script exits non-zero (status 2: it could not connect) or
  /// prints no report, and ``ChildProcessError`` when it is still running after `timeout`.
  public static func run(
    _ attack: String, port: Int, _ arguments: [String] = [], timeout: Duration = .seconds(60)
  ) async throws -> AttackReport {
    let output = try await PythonPeer.run(
      "hostile_client.py", [attack, "--target", "127.0.0.1:\(port)"] + arguments,
      timeout: timeout)
    output.attach(as: "hostile_client-\(attack)")
    guard output.status == 0 else {
      throw Failed(description: "hostile_client.py \(attack) failed: \(output.transcript)")
    }
    guard let line = output.stdoutText.split(separator: "\n").last else {
      throw Failed(
        description: "hostile_client.py \(attack) printed no report: \(output.transcript)")
    }
    var report = try JSONDecoder().decode(AttackReport.self, from: Data(line.utf8))
    report.line = String(line)
    return report
  }
}
