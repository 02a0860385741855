public import GRPCWire

/// gRPC's own test services, `grpc.testing.TestService` and `grpc.testing.BenchmarkService`,
/// on GRPCWire's server role.
public enum GRPCTestingServices {
  /// Registers both services on `server` (before it starts).
  public static func register(on server: GRPCServer) {
    TestServiceHandlers.register(on: server)
    BenchmarkServiceHandlers.register(on: server)
  }
}
