import ProtoDescriptors
import Testing

@testable import GRPCWireGenerator

/// The straight decode's fixed layout (MessageWriter+Layout.swift): which messages get one, and
/// the generator's error, rather than code that does not compile, when it cannot write the
/// conformance a layout needs.
@Suite("Message layer: the fixed layout")
struct FixedLayoutTests {
  /// `acme/geo.proto` (package `acme.geo`) of `message Point { double lat = 1; double lng = 2; }`,
  /// with this `syntax` (empty: none, as protoc leaves it for proto2).
  static func set(syntax: String) -> GoogleProtobuf.FileDescriptorSet {
    var message = GoogleProtobuf.DescriptorProto()
    message.name = "Point"
    message.field = [
      MessageErrorTests.field("lat", 1, .double), MessageErrorTests.field("lng", 2, .double),
    ]
    var file = GoogleProtobuf.FileDescriptorProto()
    file.name = "acme/geo.proto"
    file.package = "acme.geo"
    file.syntax = syntax.isEmpty ? nil : syntax
    file.messageType = [message]
    var set = GoogleProtobuf.FileDescriptorSet()
    set.file = [file]
    return set
  }

  static func writer(_ set: GoogleProtobuf.FileDescriptorSet) -> MessageWriter {
    MessageWriter(
      model: MessageModel(set, namespaces: [:]), cNames: ProtocCNames(cSources: []),
      cowMessages: [])
  }

  @Test(
    "only proto3's scalars have no presence: proto2 and editions get no fixed layout",
    arguments: zip(["proto3", "editions", "proto2", ""], [true, false, false, false]))
  func syntax(_ syntax: String, _ hasLayout: Bool) {
    let fields = Self.writer(Self.set(syntax: syntax)).fixedLayoutFields(".acme.geo.Point")
    #expect((fields != nil) == hasLayout)
    if hasLayout { #expect(fields?.map(\.tag) == [0x09, 0x11]) }
  }

  @Test("a layout's field with no Swift property fails, naming the message and the field")
  func fieldWithoutProperty() throws {
    let set = Self.set(syntax: "proto3")
    var writer = Self.writer(set)
    let bridge = MessageWriter.Bridge(
      full: ".acme.geo.Point", lower: "acme__geo__point", cType: "Acme__Geo__Point", plain: [],
      oneofs: [], message: set.file[0].messageType[0])
    let error = try #require(throws: GeneratorError.self) {
      try writer.fixedLayoutConformance(bridge)
    }
    #expect(error.file == "acme/geo.proto")
    #expect(error.element == "field acme.geo.Point.lat")
    #expect(error.reason.contains("fixed layout but has no Swift property"))
    #expect(writer.out.text == "\n")  // no line of a conformance written
  }
}
