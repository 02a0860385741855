import GRPCWire
import PeerSupport
import Testing

/// Peer servers of `Tests/Python` started once for a whole suite, each with a channel to it.
///
/// swift-testing has no suite tear-down, but a scoping trait has the same effect: applied to a
/// suite as `.suitePeers("raw_h2_server.py")`, it starts the servers before the suite's first
/// test, publishes them in the task-local ``current`` for every test (and every case of a
/// parameterised test, which run as child tasks), and once the last test is over closes the
/// channels and stops the servers by PID (``withPeerServer``'s `stop`). A server that cannot
/// start fails the suite; nothing skips.
struct SuitePeers: SuiteTrait, TestScoping {
  /// One started server and the channel the suite shares to it.
  struct Peer: Sendable {
    let server: PeerServer
    /// Shared by the suite's tests, which may run concurrently; a test that breaks the
    /// connection on purpose opens its own channel instead.
    let channel: GRPCChannel

    /// A new channel to this server, for a test that must not share the suite's connection.
    /// The caller closes it.
    func makeChannel() -> GRPCChannel {
      GRPCChannel(host: "127.0.0.1", port: server.port)
    }
  }

  /// The suite's peers by script name; empty outside a suite that has the trait.
  @TaskLocal static var current: [String: Peer] = [:]

  /// The peer running `script` for the current suite.
  static func peer(_ script: String) throws -> Peer {
    try #require(
      current[script], "the suite needs the trait .suitePeers(\"\(script)\") to use \(script)")
  }

  let scripts: [String]

  // Once for the suite, not for each test or case: the point is one server per suite.
  func scopeProvider(for test: Test, testCase: Test.Case?) -> SuitePeers? {
    test.isSuite ? self : nil
  }

  func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await withPeers(scripts[...], [:], function)
  }

  /// Starts `remaining` one by one, each stopped by `withPeerServer` however the body ends.
  private func withPeers(
    _ remaining: ArraySlice<String>, _ started: [String: Peer],
    _ function: @Sendable () async throws -> Void
  ) async throws {
    guard let script = remaining.first else {
      try await Self.$current.withValue(started) { try await function() }
      return
    }
    try await withPeerServer(script) { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      defer { channel.close() }
      var started = started
      started[script] = Peer(server: server, channel: channel)
      try await withPeers(remaining.dropFirst(), started, function)
    }
  }
}

extension Trait where Self == SuitePeers {
  /// Starts `scripts` (in `Tests/Python`) once for the suite; see ``SuitePeers``.
  static func suitePeers(_ scripts: String...) -> SuitePeers {
    SuitePeers(scripts: scripts)
  }
}

extension PeerServer {
  /// The raw server's or the relay's `request` EVENT for the call whose request metadata had
  /// `x-fleet-case: <id>`; its `conn` field names the TCP connection the call went over.
  func requestEvent(caseID: String) async throws -> PeerEvent {
    try await waitForEvent("request", timeout: .seconds(5)) { event in
      event.header("x-fleet-case") == caseID
    }
  }
}

/// Request metadata that tags a call, so the server's EVENT lines can be matched to it.
func caseMetadata(_ id: String) -> Metadata {
  var metadata = Metadata()
  metadata.add("x-fleet-case", id)
  return metadata
}

extension GRPCChannel {
  /// A unary call of raw_h2_server.py's scenario `name` (`/scenario/<name>`), sending
  /// `request` as raw bytes and tagged with `x-fleet-case: <caseID>`.
  func scenario(
    _ name: String, request: [UInt8] = Array("ping".utf8), caseID: String,
    timeout: Duration = .seconds(5)
  ) async throws -> ClientResponse<[UInt8]> {
    try await unary(
      path: "/scenario/\(name)", request: request, serializer: RawBytesSerializer(),
      deserializer: RawBytesDeserializer(),
      options: CallOptions(timeout: timeout, metadata: caseMetadata(caseID)))
  }
}
