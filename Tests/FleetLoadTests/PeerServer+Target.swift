import PeerSupport

extension PeerServer {
  /// `127.0.0.1:<port>`, where fleet-sim listens (its first line), for fleet-load's --target.
  var target: String { "127.0.0.1:\(port)" }
}
