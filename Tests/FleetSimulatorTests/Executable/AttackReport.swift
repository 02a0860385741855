import Foundation
import PeerSupport

/// What one run of `Tests/Python/hostile_client.py` saw: its one JSON line, decoded.
///
/// The script documents every key at its top; a key that does not apply to an attack is
/// absent, hence the optionals. Times are seconds from the attack's start.
struct AttackReport: Decodable, Sendable, CustomStringConvertible {
  /// The server's GOAWAY.
  struct GoAway: Decodable, Sendable {
    var errorCode: Int
    var errorName: String
    var lastStreamID: Int
    var debug: String
    var afterSeconds: Double?

    enum CodingKeys: String, CodingKey {
      case errorCode = "error_code"
      case errorName = "error_name"
      case lastStreamID = "last_stream_id"
      case debug
      case afterSeconds = "after_s"
    }
  }

  /// One request stream and what came back on it.
  struct Call: Decodable, Sendable {
    /// What the attack called it (the method, or the grpc-timeout value sent).
    var label: String
    var stream: Int
    var httpStatus: Int?
    /// From the trailers or a trailers-only response; nil when none came.
    var grpcStatus: Int?
    var grpcMessage: String?
    /// Whole response messages received.
    var messages: Int
    var rstName: String?
    var ended: Bool
    /// Whether the response headers echoed the `x-grpc-test-echo-initial` the attack sent:
    /// TestService's handler ran.
    var handlerEcho: Bool

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

  var attack: String
  /// False: the target could not be reached.
  var connected: Bool
  var error: String?
  var elapsedSeconds: Double?
  /// Whether the server closed the connection while the attack watched.
  var closed: Bool?
  var closedAfterSeconds: Double?
  var goaway: GoAway?
  /// One per stream, when the attack opened at most 20.
  var calls: [Call]?
  var streamsOpened: Int?
  /// Streams by the grpc-status they ended with (`"none"`: no status).
  var grpcStatusCounts: [String: Int]?
  var rstCounts: [String: Int]?
  var framesSent: Int?
  var bytesSent: Int?
  var prefaceBytes: Int?
  var connectionsOpen: Int?
  /// The server's CPU time over the hold, as a share of one core.
  var serverCPUShare: Double?
  var serverFDs: Int?
  var serverFDLimit: Int?
  /// The largest VmRSS of the server the attack sampled (every 100 ms).
  var serverRSSMaxMiB: Double?

  /// The JSON line as printed, for failure messages.
  var line = ""

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
  }

  var description: String { line }

  /// A run that gave no report: the script failed, or could not reach the server.
  struct Failed: Error, CustomStringConvertible {
    var description: String
  }

  /// Runs `hostile_client.py <attack> --target 127.0.0.1:<port> <arguments>` to its end.
  ///
  /// Throws ``Failed`` when the script exits non-zero (status 2: it could not connect) or
  /// prints no report, and ``ChildProcessError`` when it is still running after `timeout`.
  static func run(
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
