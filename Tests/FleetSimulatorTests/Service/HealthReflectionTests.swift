import FleetProtos
import GRPCServiceProtos
import GRPCTestingProtos
import GRPCWire
import Testing

@testable import FleetSimulator

/// The simulator serves gRPC health and reflection beside Fleet Engine, with no token.
@Suite("Simulator: health and reflection")
struct HealthReflectionTests {
  static let services = [
    "fleetconsumer.v1.TripFeed", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection", "grpc.testing.BenchmarkService",
    "grpc.testing.TestService", "maps.fleetengine.v1.TripService",
  ]

  @Test("health: SERVING for \"\" and each service it serves, with no token")
  func healthOfEveryService() async throws {
    try await SimulatorHarness.with { harness in
      for service in [""] + Self.services {
        var request = GRPCHealthV1.HealthCheckRequest()
        request.service = service
        let answer = try await harness.channel.unary(GRPCHealthV1.Health.check, request).message
        #expect(answer.status == .serving, "\(service)")
      }
    }
  }

  @Test("reflection lists exactly the services it serves")
  func reflectionListsServices() async throws {
    try await SimulatorHarness.with { harness in
      let listed = try await harness.channel.bidirectionalStreaming(
        GRPCReflectionV1.ServerReflection.serverReflectionInfo
      ) { writer, responses in
        var request = GRPCReflectionV1.ServerReflectionRequest()
        request.messageRequest = .listServices("")
        try await writer.write(request)
        var iterator = responses.makeAsyncIterator()
        guard case .listServicesResponse(let list)? = try await iterator.next()?.messageResponse
        else { return [String]() }
        return list.service.map(\.name)
      }
      #expect(listed == Self.services)
    }
  }

  @Test("reflection serves the .proto files of every message module, 23, each by its name")
  func reflectionServesEveryFile() async throws {
    let files =
      ProtoFileDescriptor.protoRuntime + ProtoFileDescriptor.fleetProtos
      + ProtoFileDescriptor.grpcTestingProtos + ProtoFileDescriptor.grpcServiceProtos
    #expect(files.count == 23)
    try await SimulatorHarness.with { harness in
      let served = try await harness.channel.bidirectionalStreaming(
        GRPCReflectionV1.ServerReflection.serverReflectionInfo
      ) { writer, responses in
        var iterator = responses.makeAsyncIterator()
        var first: [String: [UInt8]] = [:]
        for file in files {
          var request = GRPCReflectionV1.ServerReflectionRequest()
          request.messageRequest = .fileByFilename(file.name)
          try await writer.write(request)
          let answer = try await iterator.next()?.messageResponse
          guard case .fileDescriptorResponse(let sent)? = answer else { continue }
          first[file.name] = sent.fileDescriptorProto.first
        }
        return first
      }
      for file in files {
        #expect(served[file.name] == file.serializedBytes, "\(file.name) is not served")
      }
    }
  }

  @Test("shutdown turns health NOT_SERVING before the server goes")
  func shutdownIsNotServing() async throws {
    let simulator = try await FleetSimulator.start()
    #expect(simulator.health.status() == .serving)
    await simulator.shutdown(gracePeriod: .zero)
    #expect(simulator.health.status() == .notServing)
    #expect(simulator.health.status(of: "maps.fleetengine.v1.TripService") == .notServing)
  }
}
