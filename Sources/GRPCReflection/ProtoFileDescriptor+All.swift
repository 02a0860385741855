internal import FleetProtos
internal import GRPCServiceProtos
internal import GRPCTestingProtos
public import ProtoRuntime

extension ProtoFileDescriptor {
  /// Every .proto file of the package's message modules, each after the files it imports:
  /// what ``ReflectionService`` serves unless given other files.
  ///
  /// CodeGen lists each module's files (``protoRuntime``, `fleetProtos`, `grpcTestingProtos`,
  /// `grpcServiceProtos`); a module's files import only its own and the runtime's, so the
  /// runtime's first keeps every file after its imports.
  public static let all: [ProtoFileDescriptor] =
    protoRuntime + fleetProtos + grpcTestingProtos + grpcServiceProtos
}
