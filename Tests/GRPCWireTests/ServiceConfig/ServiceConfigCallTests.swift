import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// A channel's service config at work on real calls to grpcio's interop server: the method's
/// timeout goes out as grpc-timeout and ends a hanging call, the shorter of it and the call's
/// own counts, and the response size limit refuses a larger answer.
@Suite("Service config on calls", .timeLimit(.minutes(2)))
struct ServiceConfigCallTests {
  static func channel(port: Int, _ json: String) throws -> GRPCChannel {
    var options = ChannelOptions()
    options.serviceConfig = try ServiceConfig(json: json)
    return GRPCChannel(host: "127.0.0.1", port: port, options: options)
  }

  static let unaryTimeout = #"""
    {"methodConfig": [
      {"name": [{"service": "grpc.testing.TestService", "method": "UnaryCall"}], "timeout": "0.3s"},
      {"name": [{}], "maxResponseMessageBytes": 8}
    ]}
    """#

  @Test("the method's timeout is sent as grpc-timeout and ends a hanging call with DEADLINE_EXCEEDED")
  func timeout() async throws {
    try await withPeerServer("interop_server.py") { server in
      let channel = try Self.channel(port: server.port, Self.unaryTimeout)
      defer { channel.close() }
      let call = await channel.faultCall("configured", hang: true)
      #expect(call.error?.code == .deadlineExceeded, "\(call)")
      #expect(call.duration >= .milliseconds(300) && call.duration < .seconds(3), "\(call)")
      let request = try await server.waitForEvent("request", path: TestService.unaryCall.path)
      #expect(request.header("grpc-timeout") == GRPCTimeout.encode(.milliseconds(300)), "\(request)")

      // A call's own shorter timeout wins; a longer one does not.
      let shorter = await channel.faultCall("shorter", hang: true, timeout: .milliseconds(100))
      #expect(shorter.error?.code == .deadlineExceeded && shorter.duration < .milliseconds(300), "\(shorter)")
      let longer = await channel.faultCall("longer", hang: true, timeout: .seconds(20))
      #expect(longer.error?.code == .deadlineExceeded && longer.duration < .seconds(3), "\(longer)")
    }
  }

  @Test("the default config's maxResponseMessageBytes refuses a larger response; the call's own limit wins")
  func responseLimit() async throws {
    try await withPeerServer("interop_server.py") { server in
      let channel = try Self.channel(port: server.port, Self.unaryTimeout)
      defer { channel.close() }
      var request = GRPCTesting.StreamingOutputCallRequest()
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = 16
      request.responseParameters = [parameters]
      await #expect {
        try await channel.serverStreaming(
          TestService.streamingOutputCall, request, options: CallOptions(timeout: .seconds(10))
        ) { responses in
          for try await _ in responses {}
        }
      } throws: { error in
        (error as? RPCError)?.code == .resourceExhausted
      }
      let allowed = try await channel.serverStreaming(
        TestService.streamingOutputCall, request,
        options: CallOptions(timeout: .seconds(10), maxReceiveMessageSize: 1024)
      ) { responses in
        var count = 0
        for try await _ in responses { count += 1 }
        return count
      }
      #expect(allowed == 1)
    }
  }
}
