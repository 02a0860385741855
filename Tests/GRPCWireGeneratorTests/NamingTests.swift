import GRPCWireGenerator
import Testing

@Suite("Names the generator gives")
struct NamingTests {
  @Test(
    "a package's default namespace is its components in UpperCamelCase",
    arguments: [
      ("acme.dispatch.v1", "AcmeDispatchV1"), ("grpc.testing", "GrpcTesting"),
      ("my_co.api", "MyCoApi"), ("", ""),
    ])
  func defaultNamespace(_ package: String, _ namespace: String) {
    #expect(SwiftNames.defaultNamespace(ofPackage: package) == namespace)
  }

  @Test("an RPC's Swift name is lowerCamel, as its ProtoMethod descriptor's")
  func methodNames() {
    #expect(SwiftNames.methodName("GetOrder") == "getOrder")
    #expect(SwiftNames.methodName("ServerReflectionInfo") == "serverReflectionInfo")
  }

  @Test("a stub file is named after its .proto's path")
  func fileNames() {
    #expect(StubFiles.name(of: "grpc/testing/test.proto") == "grpc_testing_test.grpc.swift")
  }
}
