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

  @Test(
    "a field's snake_case name is lowerCamel, with ID, URL and URI as acronyms",
    arguments: [
      ("vehicle_id", false, "vehicleID"), ("id", false, "id"), ("trip_url", false, "tripURL"),
      ("HTTP_status", false, "httpStatus"), ("eTag", false, "eTag"), ("_foo", false, "foo"),
      ("trip_status", true, "TripStatus"), ("id", true, "ID"), ("LOUD_name", true, "LoudName"),
    ])
  func camel(_ snake: String, _ upperFirst: Bool, _ camel: String) {
    #expect(SwiftNames.camel(snake, upperFirst: upperFirst) == camel)
  }

  @Test(
    "an enum value's case drops the enum's name as a prefix, unless a digit would lead",
    arguments: [
      ("TripStatus", "TRIP_STATUS_NEW", "new"),
      ("TripStatus", "UNKNOWN_TRIP_STATUS", "unknownTripStatus"),
      ("Code", "OK", "ok"), ("Level", "LEVEL_2", "level2"), ("V1Kind", "V1_KIND_A", "a"),
    ])
  func enumCases(_ enumName: String, _ value: String, _ swift: String) {
    #expect(SwiftNames.enumCaseName(enum: enumName, value: value) == swift)
  }
}
