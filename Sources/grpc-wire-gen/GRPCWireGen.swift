import ArgumentParser
import Foundation
import GRPCWireGenerator
import ProtoDescriptors

/// Writes the typed service stubs (`Client`, `ServiceProtocol`, `GRPCServer.register(_:)`) of
/// .proto files from the FileDescriptorSet protoc wrote for them, read with our own codec.
/// Given `-I` folders instead of `--descriptor-set`, it runs protoc (and protoc-c) itself: the
/// one sequence of steps that CodeGen/generate (for each module of the package) and the
/// `generate-grpc-wire` plugin run; see CodeGen/README.md.
@main
struct GRPCWireGen: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-wire-gen",
    abstract: "Write GRPCWire client and server stubs for the services of .proto files.")

  @Option(help: "protoc's --descriptor_set_out with --include_imports and --include_source_info.")
  var descriptorSet: String?

  @Option(
    name: .customShort("I"),
    help: ArgumentHelp(
      "Instead of --descriptor-set: a folder protoc searches for imports (as protoc's -I). grpc-wire-gen then runs protoc, checks the protos, runs protoc-c (with --messages protobuf-c, into a temporary folder: no --c-dir) and generates.",
      valueName: "dir"))
  var includes: [String] = []

  @Option(help: "The Swift module the stubs are compiled into (beside their messages).")
  var module: String

  @Option(help: "The folder to write <proto>.grpc.swift files into; stale ones there go.")
  var output: String?

  @Option(
    name: .customLong("namespace"),
    help:
      "PACKAGE=Name: the Swift namespace of a proto package (default: its components in UpperCamelCase)."
  )
  var namespaces: [String] = []

  @Option(
    help:
      "The access level of the stubs and, with --messages, of the module's namespaces (so of its messages): public, package or internal."
  )
  var access: String = "public"

  @Option(
    help: ArgumentHelp(
      "protobuf-c: also write the message layer (<proto>.pb.swift, Namespaces.pb.swift, FileDescriptors.pb.swift) and the C target. swift-protobuf: stubs only, over the messages protoc-gen-swift writes into the same module, with their descriptors and serializers (SwiftProtobufSupport.grpc.swift). Omitted: stubs only, beside our message layer.",
      valueName: "kind"))
  var messages: String?

  @Option(help: "With --messages: where protoc-c wrote its *.pb-c.c and *.pb-c.h files.")
  var cDir: String?

  @Option(
    help: "With --messages: the module's C target folder (Sources/<Module>C), rewritten whole.")
  var cOutput: String?

  @Option(
    name: .customLong("cow-message"),
    help: "With --messages: a message (.package.Name) kept in copy-on-write storage.")
  var cowMessages: [String] = []

  @Flag(help: "Write no service stubs (a module that does not depend on GRPCWire).")
  var noStubs = false

  @Flag(
    help:
      "Only check that the protos' messages and services can be generated, and write nothing: run it before protoc-c, which crashes on a proto2 group."
  )
  var checkOnly = false

  @Argument(help: "The .proto files to write stubs for, named as protoc names them.")
  var protos: [String]

  func validate() throws {
    guard ["public", "package", "internal"].contains(access) else {
      throw ValidationError("--access must be public, package or internal, not \(access)")
    }
    guard (descriptorSet == nil) != includes.isEmpty else {
      throw ValidationError("give either --descriptor-set or -I (grpc-wire-gen runs protoc)")
    }
    guard checkOnly || output != nil else {
      throw ValidationError("--output is needed unless --check-only")
    }
    switch messages {
    case nil:
      break
    case "protobuf-c" where !includes.isEmpty:
      guard cDir == nil else {
        throw ValidationError("with -I, grpc-wire-gen runs protoc-c itself: no --c-dir")
      }
      guard checkOnly || cOutput != nil else {
        throw ValidationError("--messages protobuf-c needs --c-output")
      }
    case "protobuf-c":
      guard checkOnly || cDir != nil && cOutput != nil else {
        throw ValidationError("--messages protobuf-c needs --c-dir and --c-output")
      }
    case "swift-protobuf":
      // protoc-gen-swift writes those messages: there is no C target and no storage to choose.
      let cOptions = [
        cDir.map { _ in "--c-dir" }, cOutput.map { _ in "--c-output" },
        cowMessages.isEmpty ? nil : "--cow-message",
      ].compactMap { $0 }
      guard cOptions.isEmpty else {
        throw ValidationError(
          "--messages swift-protobuf writes only stubs (protoc-gen-swift writes the messages): "
            + "\(cOptions.joined(separator: ", ")) is for --messages protobuf-c")
      }
      guard !noStubs else {
        throw ValidationError(
          "--messages swift-protobuf writes only stubs: --no-stubs would leave nothing to write")
      }
    case let other?:
      throw ValidationError("--messages must be protobuf-c or swift-protobuf, not \(other)")
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
    guard let descriptorSet else { return try runProtoc() }
    let set = try Self.readDescriptorSet(descriptorSet)
    if checkOnly { return try check(set) }
    try generate(set, cFiles: try cDir.map(Self.readFiles(under:)))
  }

  /// The FileDescriptorSet protoc wrote at `path`.
  static func readDescriptorSet(_ path: String) throws -> GoogleProtobuf.FileDescriptorSet {
    let bytes: [UInt8]
    do {
      bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    } catch {
      throw GeneratorError(
        file: "", element: "", reason: "cannot read \(path): \(error.localizedDescription)")
    }
    do {
      return try GoogleProtobuf.FileDescriptorSet(serializedBytes: bytes)
    } catch {
      throw GeneratorError(
        file: "", element: "", reason: "\(path) is not a FileDescriptorSet: \(error)")
    }
  }

  var stubMessages: ServiceStubs.Messages {
    messages == "swift-protobuf" ? .swiftProtobuf : .protobufC
  }

  /// Fails for what cannot be generated, writing nothing.
  func check(_ set: GoogleProtobuf.FileDescriptorSet) throws {
    let namespaces = try namespaceTable()
    // protoc-gen-swift's messages are its own to check.
    if stubMessages == .protobufC {
      try MessageFiles.check(set, protos: protos, namespaces: namespaces)
    }
    if !noStubs {
      _ = try StubFiles.generate(
        set, protos: protos, module: module, namespaces: namespaces, access: access,
        messages: stubMessages)
    }
  }

  /// Writes the stubs and, given protoc-c's files (`cFiles`, by path under its output folder),
  /// the message layer and the C target.
  func generate(_ set: GoogleProtobuf.FileDescriptorSet, cFiles: [String: String]?) throws {
    let namespaces = try namespaceTable()
    var files: [(path: String, text: String)] =
      noStubs
      ? []
      : try StubFiles.generate(
        set, protos: protos, module: module, namespaces: namespaces, access: access,
        messages: stubMessages
      ).map { ($0.name, $0.text) }
    if messages == "protobuf-c", let cFiles, let cOutput {
      let layer = try MessageFiles.generate(
        set, protos: protos, module: module, namespaces: namespaces,
        cowMessages: Set(cowMessages), cFiles: cFiles, access: access)
      files = layer.swift.map { ($0.name, $0.text) } + files
      try Self.write(layer.c, into: cOutput, removingOthers: { _ in true })
    }
    guard let output else { return }
    // Without the message layer, only stale stubs are this run's to remove.
    try Self.write(
      files, into: output,
      removingOthers: { name in
        !name.contains("/")
          && (messages == "protobuf-c"
            ? name.hasSuffix(".swift") : name.hasSuffix(".grpc.swift"))
      })
  }

  /// Every regular file under `folder`, by path relative to it.
  static func readFiles(under folder: String) throws -> [String: String] {
    var files: [String: String] = [:]
    guard let walker = FileManager.default.enumerator(atPath: folder) else {
      throw GeneratorError(file: "", element: "", reason: "cannot read \(folder)")
    }
    while let path = walker.nextObject() as? String {
      var isDirectory: ObjCBool = false
      let full = (folder as NSString).appendingPathComponent(path)
      if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory),
        !isDirectory.boolValue
      {
        files[path] = try String(contentsOfFile: full, encoding: .utf8)
      }
    }
    return files
  }

  /// Writes `files` (paths relative to `folder`) and removes the files under it that were not
  /// written and `removingOthers` says are this run's. Unchanged files are left alone, so a
  /// re-run does not touch their modification times.
  static func write(
    _ files: [(path: String, text: String)], into folder: String,
    removingOthers: (String) -> Bool
  ) throws {
    let root = URL(fileURLWithPath: folder)
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let written = Set(files.map(\.path))
    var folders: [String] = []
    if let walker = FileManager.default.enumerator(atPath: folder) {
      while let path = walker.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let full = (folder as NSString).appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) else {
          continue
        }
        if isDirectory.boolValue {
          folders.append(full)
        } else if !written.contains(path) && removingOthers(path) {
          try FileManager.default.removeItem(atPath: full)
        }
      }
    }
    // Folders left empty (a proto that went away) go too, deepest first.
    for full in folders.sorted(by: >)
    where (try? FileManager.default.contentsOfDirectory(atPath: full))?.isEmpty == true {
      try FileManager.default.removeItem(atPath: full)
    }
    for file in files {
      let url = root.appendingPathComponent(file.path)
      if (try? String(contentsOf: url, encoding: .utf8)) == file.text { continue }
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try file.text.write(to: url, atomically: true, encoding: .utf8)
    }
  }
}
