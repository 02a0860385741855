import Foundation
import PeerSupport
import ProtoDescriptors
import Testing

/// protoc's descriptions of .proto files, read with our codec (ProtoDescriptors) and with
/// Google's `descriptor_pb2` (`Tests/Python/descriptor_peer.py`): the code generator reads
/// them this way, so what it sees must be what protoc wrote — presence included, as proto2
/// tells an absent field from a default one.
@Suite("FileDescriptorSet on our codec against Google's descriptor classes")
struct DescriptorSetTests {
  /// One `descriptor_peer.py make` run: protoc's bytes and Google's reading of them.
  static let made = Task { try await DescriptorPeer.make() }

  @Test("every file, message, field, oneof, enum value, method and comment reads as Google's")
  func readsAsGoogle() async throws {
    let made = try await Self.made.value
    let set = try GoogleProtobuf.FileDescriptorSet(serializedBytes: made.set)
    let ours = DescriptorPeer.rows(set)
    #expect(
      ours.count == made.summary.count, "rows: ours \(ours.count), Google's \(made.summary.count)")
    for (index, (mine, google)) in zip(ours, made.summary).enumerated() where mine != google {
      Issue.record("row \(index): ours \(mine), Google's \(google)")
      break
    }
    // The rows cover what a generator needs; these prove the set held it at all.
    let kinds = Set(made.summary.map { $0[0] })
    #expect(kinds == ["file", "message", "field", "oneof", "enum value", "method", "comment"])
  }

  @Test("re-encoded, the set is protoc's bytes exactly: nothing is lost or reordered")
  func reencodesToProtocBytes() async throws {
    let made = try await Self.made.value
    let set = try GoogleProtobuf.FileDescriptorSet(serializedBytes: made.set)
    let again = set.serializedBytes()
    #expect(again.count == made.set.count)
    #expect(again == made.set)
  }

  @Test("proto2 presence: an absent optional is nil, a present default is kept, both ways")
  func proto2Presence() throws {
    var field = GoogleProtobuf.FieldDescriptorProto()
    field.name = ""
    field.number = 0
    field.proto3Optional = false
    let decoded = try GoogleProtobuf.FieldDescriptorProto(serializedBytes: field.serializedBytes())
    #expect(decoded.name == "")
    #expect(decoded.number == 0)
    #expect(decoded.proto3Optional == false)
    #expect(decoded.label == nil)
    #expect(decoded.typeName == nil)
    #expect(decoded.oneofIndex == nil)
    #expect(decoded == field)
  }
}

/// What `descriptor_peer.py make` prints, and the same rows built from our decode.
enum DescriptorPeer {
  struct Made: Sendable {
    var set: [UInt8]
    var summary: [[String]]
  }

  private struct Printed: Decodable {
    var set: String
    var summary: [[String]]
  }

  static func make() async throws -> Made {
    let output = try await PythonPeer.run("descriptor_peer.py", ["make"])
    if output.status != 0 { output.attach(as: "descriptor_peer-make") }
    try #require(output.status == 0, "descriptor_peer.py make:\n\(output.transcript)")
    let printed = try JSONDecoder().decode(Printed.self, from: Data(output.stdout))
    let set = try #require(
      Data(base64Encoded: printed.set), "descriptor_peer.py: set is not base64")
    return Made(set: Array(set), summary: printed.summary)
  }

  /// The rows `descriptor_peer.py` builds with Google's classes, from our decode: `-` for an
  /// absent field, bools as `true`/`false`, enums as numbers.
  static func rows(_ set: GoogleProtobuf.FileDescriptorSet) -> [[String]] {
    var rows: [[String]] = []

    func text<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "-" }
    func text(_ value: GoogleProtobuf.FieldDescriptorProto.Label?) -> String {
      value.map { "\($0.rawValue)" } ?? "-"
    }
    func text(_ value: GoogleProtobuf.FieldDescriptorProto.TypeEnum?) -> String {
      value.map { "\($0.rawValue)" } ?? "-"
    }

    func message(_ scope: String, _ m: GoogleProtobuf.DescriptorProto) {
      let full = "\(scope).\(m.name ?? "")"
      rows.append(["message", full, text(m.options?.mapEntry)])
      for f in m.field {
        rows.append([
          "field", full, f.name ?? "", text(f.number), text(f.label), text(f.type),
          text(f.typeName), text(f.jsonName), text(f.oneofIndex), text(f.proto3Optional),
          text(f.defaultValue), text(f.options?.deprecated),
        ])
      }
      for o in m.oneofDecl { rows.append(["oneof", full, o.name ?? ""]) }
      for n in m.nestedType { message(full, n) }
      for e in m.enumType { enumeration(full, e) }
    }

    func enumeration(_ scope: String, _ e: GoogleProtobuf.EnumDescriptorProto) {
      for v in e.value {
        rows.append(["enum value", "\(scope).\(e.name ?? "")", v.name ?? "", text(v.number)])
      }
    }

    for fd in set.file {
      let package = fd.package ?? ""
      rows.append([
        "file", fd.name ?? "", text(fd.package), text(fd.syntax),
        fd.dependency.joined(separator: ","),
      ])
      for m in fd.messageType { message(package, m) }
      for e in fd.enumType { enumeration(package, e) }
      for s in fd.service {
        for method in s.method {
          rows.append([
            "method", "\(package).\(s.name ?? "")", method.name ?? "", text(method.inputType),
            text(method.outputType), text(method.clientStreaming), text(method.serverStreaming),
          ])
        }
      }
      for location in fd.sourceCodeInfo?.location ?? [] {
        guard let comment = location.leadingComments else { continue }
        rows.append([
          "comment", fd.name ?? "", location.path.map(String.init).joined(separator: ","),
          location.span.map(String.init).joined(separator: ","), comment,
        ])
      }
    }
    return rows
  }
}
