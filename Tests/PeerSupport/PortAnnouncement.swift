/// How a server says where it listens: its first non-empty line of stdout, which
/// ``ChildProcess/waitForPort(_:timeout:)`` and ``PeerServer`` wait for.
public struct PortAnnouncement: Sendable, CustomStringConvertible {
  /// The line's form, for messages (`LISTENING <port>`).
  public var description: String
  /// The port `line` announces, or nil when it is not such a line.
  public var port: @Sendable (_ line: String) -> Int?

  public init(_ description: String, port: @escaping @Sendable (_ line: String) -> Int?) {
    self.description = description
    self.port = port
  }

  /// `LISTENING <port>`: the servers of `Tests/Python` and `interop-server`.
  public static let listening = PortAnnouncement("LISTENING <port>") { line in
    let parts = line.split(separator: " ")
    guard parts.count == 2, parts[0] == "LISTENING", let port = Int(parts[1]), port > 0 else {
      return nil
    }
    return port
  }

  /// `listening on HOST:PORT`: `fleet-sim`.
  public static let listeningOn = PortAnnouncement("listening on HOST:PORT") { line in
    guard line.hasPrefix("listening on "),
      let port = line.split(separator: ":").last.flatMap({ Int($0) }), port > 0
    else { return nil }
    return port
  }
}
