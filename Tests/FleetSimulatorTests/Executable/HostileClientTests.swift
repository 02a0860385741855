import Foundation
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// fleet-sim against the attacks of `Tests/Python/hostile_client.py` (issue 13, "The server
/// role on the open internet"): one test per attack.
///
/// Each test starts its own fleet-sim on 127.0.0.1 with a port the OS picks, runs one attack,
/// and checks the server's answer. Then, as every name says, it checks that fleet-sim is still
/// running, that a new connection's TestService/EmptyCall succeeds, and that its peak resident
/// memory (VmHWM) stayed under 200 MiB; it is then killed by PID. The attacks' own holds and
/// waits are what is being tested (a timeout that must fire, a load that must be borne), and
/// every wait is bounded.
@Suite("fleet-sim against hostile clients")
struct HostileClientTests {
  /// The peak resident memory fleet-sim may reach under any attack.
  static let peakResidentLimitMiB = 200.0

  /// The longest the server may take to close a connection that has not completed its
  /// handshake: the 10 s default handshake timeout plus slack for a loaded machine.
  static let handshakeCloseLimit = 15.0

  /// The methods whose request names a response size (`hostile_client.py negative-size
  /// --method <rawValue>`).
  enum SizedMethod: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case testUnary = "test-unary"
    case testStreaming = "test-streaming"
    case benchmarkUnary = "benchmark-unary"

    var testDescription: String {
      switch self {
      case .testUnary: "TestService/UnaryCall (response_size -1)"
      case .testStreaming: "TestService/StreamingOutputCall (ResponseParameters size -1)"
      case .benchmarkUnary: "BenchmarkService/UnaryCall (response_size -1)"
      }
    }
  }

  // MARK: Answers to bad requests

  @Test(
    "a negative response size is answered INVALID_ARGUMENT (3); then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB",
    arguments: SizedMethod.allCases)
  func negativeResponseSize(_ method: SizedMethod) async throws {
    try await underAttack { port in
      let report = try await AttackReport.run(
        "negative-size", port: port, ["--method", method.rawValue])
      let call = try #require(report.calls?.first, "\(report)")
      #expect(call.grpcStatus == 3, "\(report)")
    }
  }

  @Test(
    "BenchmarkService/UnaryCall asking for 1 GiB while the client's stream window is 0 is answered RESOURCE_EXHAUSTED (8) within 5 s; then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func hugeResponse() async throws {
    try await underAttack { port, pid in
      let report = try await AttackReport.run(
        "huge-response", port: port,
        ["--size", "\(1 << 30)", "--wait", "5", "--server-pid", "\(pid)"])
      let call = try #require(report.calls?.first, "\(report)")
      #expect(call.grpcStatus == 8, "\(report)")
    }
  }

  @Test(
    "grpc-timeout abc, -1S, 1.5S, 123456789S and empty are each answered INTERNAL (13) with no response message and no handler run; then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func malformedTimeouts() async throws {
    let values = ["abc", "-1S", "1.5S", "123456789S", ""]
    try await underAttack { port in
      // `--value=V`: argparse would take "-1S" for an option.
      let report = try await AttackReport.run(
        "grpc-timeout", port: port, values.map { "--value=\($0)" })
      let calls = try #require(report.calls, "\(report)")
      #expect(calls.map(\.label) == values, "\(report)")
      for call in calls {
        #expect(call.grpcStatus == 13, "grpc-timeout '\(call.label)': \(report)")
        #expect(call.messages == 0, "grpc-timeout '\(call.label)': \(report)")
        #expect(!call.handlerEcho, "grpc-timeout '\(call.label)' ran the handler: \(report)")
      }
    }
  }

  @Test(
    "grpc-timeout 0n and 0S are each answered DEADLINE_EXCEEDED (4); then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func zeroTimeouts() async throws {
    let values = ["0n", "0S"]
    try await underAttack { port in
      let report = try await AttackReport.run(
        "grpc-timeout", port: port, values.map { "--value=\($0)" })
      let calls = try #require(report.calls, "\(report)")
      #expect(calls.map(\.label) == values, "\(report)")
      for call in calls {
        #expect(call.grpcStatus == 4, "grpc-timeout '\(call.label)': \(report)")
      }
    }
  }

  // MARK: Floods and hoarding

  @Test(
    "1,000 StreamingFromServer calls of 1 MiB messages to a client whose windows stay 0, held 10 s: peak RSS < 200 MiB; after the client closes, fleet-sim lives and serves EmptyCall"
  )
  func stalledStreams() async throws {
    try await underAttack { port, pid in
      let report = try await AttackReport.run(
        "stalled-streams", port: port,
        ["--streams", "1000", "--size", "\(1 << 20)", "--hold", "10", "--server-pid", "\(pid)"])
      #expect(report.streamsOpened == 1000, "\(report)")
      // The kernel's high-water mark, checked after every attack, is the real assertion; the
      // attack's own samples say when, for the failure message.
      let sampled = try #require(report.serverRSSMaxMiB, "\(report)")
      #expect(sampled < Self.peakResidentLimitMiB, "\(report)")
    }
  }

  @Test(
    "2,000 idle connections that sent the preface, against fleet-sim limited to 1,024 fds: its CPU over 3 s while they are held stays under 5% of a core; after they close, fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func idleConnectionsBeyondFileLimit() async throws {
    try await underAttack(fileLimit: 1024) { port, pid in
      let report = try await AttackReport.run(
        "idle-connections", port: port,
        ["--connections", "2000", "--hold", "3", "--server-pid", "\(pid)"])
      // More connections than descriptors, or accept never runs out of them.
      let open = try #require(report.connectionsOpen, "\(report)")
      try #require(open > 1024, "only \(open) connections were made: \(report)")
      #expect(report.serverFDLimit == 1024, "\(report)")
      let share = try #require(report.serverCPUShare, "\(report)")
      #expect(share < 0.05, "fleet-sim used \(share) of a core: \(report)")
    }
  }

  @Test(
    "200,000 empty DATA frames on one stream: the server sends GOAWAY ENHANCE_YOUR_CALM or PROTOCOL_ERROR and closes the connection within 10 s; then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func emptyDataFlood() async throws {
    try await underAttack { port in
      let report = try await AttackReport.run(
        "empty-data", port: port, ["--frames", "200000", "--wait", "10"])
      let goaway = try #require(report.goaway, "no GOAWAY: \(report)")
      #expect([0xb, 0x1].contains(goaway.errorCode), "\(report)")
      #expect(report.closed == true, "\(report)")
    }
  }

  // MARK: Handshakes that never end

  @Test(
    "a connection that never sends the preface is closed by the server within 15 s; then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func noPreface() async throws {
    try await underAttack { port in
      let report = try await AttackReport.run(
        "no-preface", port: port, ["--wait", "\(Self.handshakeCloseLimit + 1)"])
      #expect(report.closed == true, "\(report)")
      let after = try #require(report.closedAfterSeconds, "never closed: \(report)")
      #expect(after <= Self.handshakeCloseLimit, "\(report)")
    }
  }

  @Test(
    "a preface sent one byte per second is closed by the server within 15 s, before it is complete; then fleet-sim lives, serves EmptyCall, peak RSS < 200 MiB"
  )
  func slowloris() async throws {
    try await underAttack { port in
      let report = try await AttackReport.run(
        "slowloris", port: port,
        ["--interval", "1", "--wait", "\(Self.handshakeCloseLimit + 1)"])
      #expect(report.closed == true, "\(report)")
      let after = try #require(report.closedAfterSeconds, "never closed: \(report)")
      #expect(after <= Self.handshakeCloseLimit, "\(report)")
      let sent = try #require(report.bytesSent, "\(report)")
      let preface = try #require(report.prefaceBytes, "\(report)")
      #expect(sent < preface, "\(report)")
    }
  }

  // MARK: Harness

  /// Starts fleet-sim (with at most `fileLimit` descriptors), runs `attack` with its port,
  /// checks that it survived — alive, serving EmptyCall, peak RSS under the limit — and kills
  /// it by PID, whatever happened.
  func underAttack(
    fileLimit: Int? = nil, _ attack: (_ port: Int) async throws -> Void
  ) async throws {
    try await underAttack(fileLimit: fileLimit) { port, _ in try await attack(port) }
  }

  /// As ``underAttack(fileLimit:_:)``, and `attack` also gets fleet-sim's PID.
  func underAttack(
    fileLimit: Int? = nil, _ attack: (_ port: Int, _ pid: pid_t) async throws -> Void
  ) async throws {
    let sim = try await FleetSimProcess.start(["--port", "0"], fileLimit: fileLimit)
    do {
      let port = try #require(sim.port, "fleet-sim printed no port: \(sim.lines) \(sim.stderr)")
      try await attack(port, sim.pid)
      try await Self.expectSurvived(sim, port: port)
    } catch {
      await sim.stop(SIGKILL)
      throw error
    }
    await sim.stop(SIGKILL)
  }

  /// fleet-sim was no longer running after an attack.
  struct Died: Error, CustomStringConvertible {
    var description: String
  }

  static func expectSurvived(_ sim: ChildProcess, port: Int) async throws {
    if let exit = sim.exitStatus {
      // Swift's runtime says why (`Fatal error: …`) and where (`Thread 4 "…" crashed:`).
      let lines = sim.stderr.split(separator: "\n")
      let why = lines.filter { $0.contains("Fatal error") || $0.contains("crashed") }
      throw Died(
        description: "fleet-sim died during the attack (\(exit)): "
          + (why.isEmpty ? lines.suffix(20) : why).joined(separator: "\n"))
    }
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    do {
      _ = try await channel.unary(
        GRPCTesting.TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: .seconds(10)))
    } catch {
      Issue.record("fleet-sim did not serve EmptyCall after the attack: \(error)")
    }
    let memory = try #require(ProcessMemory.of(sim.pid), "no /proc/\(sim.pid)/status")
    #expect(memory.peakResidentMiB < peakResidentLimitMiB, "fleet-sim: \(memory)")
  }
}
