import Foundation
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// Failures that happen on our side of the wire come out as the same RPCError, with the code
/// the gRPC spec assigns and a message naming the cause.
@Suite("Local failures as RPCError", .timeLimit(.minutes(2)))
struct LocalFailureTests {
  @Test("a refused connection is UNAVAILABLE naming the address and the refusal")
  func connectionRefused() async throws {
    let port = try unusedPort()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .unavailable)
    #expect(error.message.contains("127.0.0.1:\(port)"), "\(error.message)")
    #expect(error.message.contains("Connection refused"), "\(error.message)")
    #expect((error as NSError).domain == "io.grpc" && (error as NSError).code == 14)
  }

  @Test("a name that does not resolve is UNAVAILABLE saying so")
  func nameResolution() async throws {
    // .invalid is reserved (RFC 2606): it never resolves, with or without a network.
    let channel = GRPCChannel(host: "no-such-host.invalid", port: 443)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .unavailable)
    #expect(error.message.contains("cannot resolve 'no-such-host.invalid'"), "\(error.message)")
  }

  @Test("metadata that cannot be sent fails the call before anything is sent")
  func invalidMetadata() async throws {
    let port = try unusedPort()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    var metadata = Metadata()
    metadata.add("Bad Key!", "value")
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(
        TestService.emptyCall, GRPCTesting.Empty(), options: CallOptions(metadata: metadata))
    }
    // Nothing was sent, so the refused port never saw a connection attempt's UNAVAILABLE.
    #expect(error.code == .internalError, "\(error)")
    #expect(error.message.contains("bad key!"), "\(error.message)")
  }

  @Test("a task cancelled while waiting for a server ends its call CANCELLED")
  func cancelledTask() async throws {
    try await withPeerServer("interop_server.py", arguments: ["--direct"]) { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      defer { channel.close() }
      var metadata = Metadata()
      metadata.add("x-fleet-test-hang", "1")
      let call = Task {
        try await channel.unary(
          TestService.emptyCall, GRPCTesting.Empty(), options: CallOptions(metadata: metadata))
      }
      _ = try await server.waitForEvent("hanging")
      call.cancel()
      let error = try await #require(throws: RPCError.self) { _ = try await call.value }
      #expect(error.code == .cancelled)
      #expect(error.message.contains("cancelled"), "\(error.message)")
      _ = try await server.waitForEvent("cancelled")
    }
  }

  @Test("a call on a closed channel is UNAVAILABLE")
  func closedChannel() async throws {
    let channel = GRPCChannel(host: "127.0.0.1", port: try unusedPort())
    channel.close()
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .unavailable)
    #expect(error.message.contains("closed"), "\(error.message)")
  }
}
