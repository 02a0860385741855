import Foundation
import GRPCWire
import PeerSupport
import Testing

/// A server that accepts TCP connections and never speaks (fault_silent_listener.py): the
/// connection attempt ends at the configured connect timeout, waiting for the server's HTTP/2
/// SETTINGS, rather than hanging.
@Suite("Faults: a listener that accepts and never speaks", .serialized, .timeLimit(.minutes(2)))
struct ConnectTimeoutTests {
  static func options() -> ChannelOptions {
    var options = ChannelOptions()
    options.backoff = .fast
    options.backoff.minimumConnectTimeout = .milliseconds(500)
    return options
  }

  @Test("a call fails fast UNAVAILABLE once the 500 ms connect timeout passes without SETTINGS")
  func connectTimeout() async throws {
    try await withPeerServer("fault_silent_listener.py") { listener in
      let channel = GRPCChannel(host: "127.0.0.1", port: listener.port, options: Self.options())
      defer { channel.close() }
      let states = ConnectivityLog(channel)
      // Timed on the loop: the bounds below are the connect timeout's, not the test process's.
      let call = await channel.loopFaultCall("silent")
      print("[faults] silent listener: \(call)")
      let error = try #require(call.error, "\(call)")
      #expect(error.code == .unavailable)
      #expect(error.message.contains("timed out"), "\(error.message)")
      #expect(error.message.contains("SETTINGS"), "\(error.message)")
      #expect(call.duration >= .milliseconds(450), "\(call)")
      #expect(call.duration <= .milliseconds(1500), "\(call)")
      try await states.wait(for: .transientFailure)
      // TCP was up and our preface went out: it was the server's SETTINGS that never came.
      _ = try await listener.waitForEvent("accepted")
      _ = try await listener.waitForEvent("received")
    }
  }

  @Test("with waitForReady and an 800 ms timeout the call ends DEADLINE_EXCEEDED instead")
  func waitForReadyDeadline() async throws {
    try await withPeerServer("fault_silent_listener.py") { listener in
      let channel = GRPCChannel(host: "127.0.0.1", port: listener.port, options: Self.options())
      defer { channel.close() }
      let states = ConnectivityLog(channel)
      let call = await channel.loopFaultCall(
        "silent-wait", timeout: .milliseconds(800), waitForReady: true)
      let accepted = listener.events.filter { $0.kind == "accepted" }.count
      print(
        "[faults] silent listener, waitForReady: \(call); \(accepted) connections accepted; "
          + "states: \(states.timeline(since: call.started))")
      let error = try #require(call.error, "\(call)")
      #expect(error.code == .deadlineExceeded, "\(error)")
      #expect(call.duration >= .milliseconds(750), "\(call)")
      #expect(call.duration <= .milliseconds(1500), "\(call)")
      // The first attempt timed out at 500 ms and the channel was in TRANSIENT_FAILURE while
      // the call waited on.
      try await states.wait(for: .transientFailure)
      #expect(accepted >= 1)
    }
  }
}
