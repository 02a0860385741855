import ArgumentParser
import Foundation
import GRPCWireGenerator
import ProtoDescriptors

/// Writes the typed service stubs (`Client`, `ServiceProtocol`, `GRPCServer.register(_:)`) of
/// .proto files from the FileDescriptorSet protoc wrote for them, read with our own codec.
/// CodeGen/generate runs it for each module of the package; see CodeGen/README.md.
@main
struct GRPCWireGen: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-wire-gen",
    abstract: "Write GRPCWire client and server stubs for the services of .proto files.")

  @Option(help: "protoc's --descriptor_set_out with --include_imports and --include_source_info.")
  var descriptorSet: String

  @Option(help: "The Swift module the stubs are compiled into (beside their messages).")
  var module: String

  @Option(help: "The folder to write <proto>.grpc.swift files into; stale ones there go.")
  var output: String

  @Option(
    name: .customLong("namespace"),
    help:
      "PACKAGE=Name: the Swift namespace of a proto package (default: its components in UpperCamelCase)."
  )
  var namespaces: [String] = []

  @Option(help: "The access level of the stubs: public, package or internal.")
  var access: String = "public"

  @Argument(help: "The .proto files to write stubs for, named as protoc names them.")
  var protos: [String]

  func validate() throws {
    guard ["public", "package", "internal"].contains(access) else {
      throw ValidationError("--access must be public, package or internal, not \(access)")
    }
    _ = try namespaceTable()
  }

  func namespaceTable() throws -> [String: String] {
    var table: [String: String] = [:]
    for entry in namespaces {
      let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
        throw ValidationError("--namespace wants PACKAGE=Name, not \(entry)")
      }
      table[parts[0]] = parts[1]
    }
    return table
  }

  func run() throws {
    let bytes: [UInt8]
    do {
      bytes = Array(try Data(contentsOf: URL(fileURLWithPath: descriptorSet)))
    } catch {
      throw GeneratorError(
        file: "", element: "", reason: "cannot read \(descriptorSet): \(error.localizedDescription)"
      )
    }
    let set: GoogleProtobuf.FileDescriptorSet
    do {
      set = try GoogleProtobuf.FileDescriptorSet(serializedBytes: bytes)
    } catch {
      throw GeneratorError(
        file: "", element: "", reason: "\(descriptorSet) is not a FileDescriptorSet: \(error)")
    }
    let files = try StubFiles.generate(
      set, protos: protos, module: module, namespaces: try namespaceTable(), access: access)
    let folder = URL(fileURLWithPath: output)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let written = Set(files.map(\.name))
    for old in try FileManager.default.contentsOfDirectory(atPath: output)
    where old.hasSuffix(".grpc.swift") && !written.contains(old) {
      try FileManager.default.removeItem(at: folder.appendingPathComponent(old))
    }
    for file in files {
      let url = folder.appendingPathComponent(file.name)
      // Unchanged files are left alone, so a re-run does not touch their modification times.
      if (try? String(contentsOf: url, encoding: .utf8)) == file.text { continue }
      try file.text.write(to: url, atomically: true, encoding: .utf8)
    }
  }
}
