import Foundation
import PeerSupport
import Testing

/// grpc-wire-gen as CodeGen/generate runs it, on the fixture proto (Tests/Protos), with the
/// real protoc and protoc-c: its output is the committed GeneratorFixtures, byte for byte, and
/// running it again over its own output changes nothing.
@Suite("grpc-wire-gen on a .proto, as a command")
struct GeneratorCommandTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  static let proto = "acme/names/v1/names.proto"

  /// Runs a system program to its end; fails the test when it does not exit 0.
  static func run(_ path: String, _ arguments: [String]) async throws {
    let output = try await ChildProcess(URL(fileURLWithPath: path), arguments)
      .output(within: .seconds(60))
    #expect(output.status == 0, "\(path) \(arguments): \(output.stderr)")
  }

  /// Every file under `folder`, by path relative to it, with its bytes.
  static func files(under folder: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
    while let path = walker.nextObject() as? String {
      var isDirectory: ObjCBool = false
      let url = folder.appendingPathComponent(path)
      if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
        !isDirectory.boolValue
      {
        files[path] = try Data(contentsOf: url)
      }
    }
    return files
  }

  static func modificationDates(under folder: URL) throws -> [String: Date] {
    try files(under: folder).keys.reduce(into: [:]) { dates, path in
      dates[path] =
        try FileManager.default.attributesOfItem(
          atPath: folder.appendingPathComponent(path).path)[.modificationDate] as? Date
    }
  }

  /// Expects GeneratorFixtures' Swift and C folders, written to `swiftOut` and `cOut`, to be
  /// the committed ones byte for byte.
  static func expectCommitted(swiftOut: URL, cOut: URL) throws {
    let sources = Self.root.appendingPathComponent("Sources")
    #expect(
      try Self.files(under: swiftOut)
        == Self.files(under: sources.appendingPathComponent("GeneratorFixtures/Generated")))
    #expect(
      try Self.files(under: cOut)
        == Self.files(under: sources.appendingPathComponent("GeneratorFixturesC")))
  }

  /// A fresh folder for one test's run, removed by `body`'s end.
  static func withWorkFolder(_ body: (URL) async throws -> Void) async throws {
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("grpc-wire-gen-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: work.appendingPathComponent("c"), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    try await body(work)
  }

  /// Runs protoc and protoc-c on the fixture proto into `work`, and returns grpc-wire-gen's
  /// arguments for GeneratorFixtures as CodeGen/generate gives them, writing under `work`.
  static func fixtureArguments(in work: URL) async throws -> [String] {
    let includes = [
      "-I", Self.root.appendingPathComponent("Tests/Protos").path, "-I", "/usr/include",
    ]
    try await Self.run(
      "/usr/bin/protoc",
      includes + [
        "--include_imports", "--include_source_info",
        "--descriptor_set_out=\(work.appendingPathComponent("set.pb").path)", Self.proto,
      ])
    try await Self.run(
      "/usr/bin/protoc-c",
      includes + ["--c_out=\(work.appendingPathComponent("c").path)", Self.proto])
    return [
      "--descriptor-set", work.appendingPathComponent("set.pb").path,
      "--module", "GeneratorFixtures", "--messages", "protobuf-c",
      "--c-dir", work.appendingPathComponent("c").path,
      "--c-output", work.appendingPathComponent("GeneratorFixturesC").path,
      "--output", work.appendingPathComponent("GeneratorFixtures/Generated").path, "--no-stubs",
      "--generated-by", "CodeGen/generate", "--checked-by", "CodeGen/check", Self.proto,
    ]
  }

  @Test("with -I it runs protoc, checks, runs protoc-c and writes GeneratorFixtures as committed")
  func driverMode() async throws {
    try await Self.withWorkFolder { work in
      let swiftOut = work.appendingPathComponent("GeneratorFixtures/Generated")
      let cOut = work.appendingPathComponent("GeneratorFixturesC")
      let run = try await ToolProcess.run(
        "grpc-wire-gen",
        [
          "-I", Self.root.appendingPathComponent("Tests/Protos").path, "-I", "/usr/include",
          "--module", "GeneratorFixtures", "--messages", "protobuf-c", "--c-output", cOut.path,
          "--output", swiftOut.path, "--no-stubs", "--generated-by", "CodeGen/generate",
          "--checked-by", "CodeGen/check", Self.proto,
        ])
      #expect(run.status == 0, "\(run)")
      try Self.expectCommitted(swiftOut: swiftOut, cOut: cOut)
    }
  }

  @Test("--regenerate-argument: the headers' command has each argument quoted for a shell")
  func regenerateArgumentsQuoted() async throws {
    try await Self.withWorkFolder { work in
      let arguments =
        try await Self.fixtureArguments(in: work) + [
          "--regenerate-with", "swift package generate-grpc-wire",
          "--regenerate-argument", "--module", "--regenerate-argument", "My Protos",
          "--regenerate-argument", "it's.proto", "--regenerate-argument", "a;b",
        ]
      let run = try await ToolProcess.run("grpc-wire-gen", arguments)
      #expect(run.status == 0, "\(run)")
      let written = try Self.files(under: work.appendingPathComponent("GeneratorFixtures/Generated"))
      let namespaces = String(decoding: try #require(written["Namespaces.pb.swift"]), as: UTF8.self)
      let expected =
        #"Regenerate with `swift package generate-grpc-wire --module 'My Protos' 'it'\''s.proto' 'a;b'`"#
      #expect(namespaces.contains(expected), "\(namespaces.prefix(400))")
    }
  }

  @Test("--access internal: the namespace and the descriptor list are internal, all else as committed")
  func accessOfTheMessageLayer() async throws {
    try await Self.withWorkFolder { work in
      let arguments = try await Self.fixtureArguments(in: work) + ["--access", "internal"]
      let run = try await ToolProcess.run("grpc-wire-gen", arguments)
      #expect(run.status == 0, "\(run)")
      let written = try Self.files(under: work.appendingPathComponent("GeneratorFixtures/Generated"))
      let committed = try Self.files(
        under: Self.root.appendingPathComponent("Sources/GeneratorFixtures/Generated"))
      #expect(written.keys.sorted() == committed.keys.sorted())
      // Only these lines differ: everything else in the namespace is as visible as it is.
      let changed = [
        "Namespaces.pb.swift": ("public enum AcmeNamesV1 {}", "internal enum AcmeNamesV1 {}"),
        "FileDescriptors.pb.swift": (
          "  public static let generatorFixtures: [ProtoFileDescriptor] = [",
          "  internal static let generatorFixtures: [ProtoFileDescriptor] = ["
        ),
      ]
      for (name, bytes) in committed {
        let text = String(decoding: bytes, as: UTF8.self)
        let expected = changed[name].map { text.replacingOccurrences(of: $0.0, with: $0.1) } ?? text
        if let (old, _) = changed[name] { #expect(text.contains(old), "\(name)") }
        #expect(written[name].map { String(decoding: $0, as: UTF8.self) } == expected, "\(name)")
      }
    }
  }

  @Test("writes GeneratorFixtures as committed; a re-run rewrites nothing and removes stale files")
  func committedOutputAndRerun() async throws {
    try await Self.withWorkFolder { work in try await Self.committedOutputAndRerun(in: work) }
  }

  static func committedOutputAndRerun(in work: URL) async throws {
    let arguments = try await Self.fixtureArguments(in: work)
    let swiftOut = work.appendingPathComponent("GeneratorFixtures/Generated")
    let cOut = work.appendingPathComponent("GeneratorFixturesC")
    let first = try await ToolProcess.run("grpc-wire-gen", arguments)
    #expect(first.status == 0, "\(first)")
    try Self.expectCommitted(swiftOut: swiftOut, cOut: cOut)

    let stale = [
      swiftOut.appendingPathComponent("acme_old.pb.swift"),
      cOut.appendingPathComponent("include/acme/old/old.pb-c.h"),
    ]
    for file in stale {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data("stale".utf8).write(to: file)
    }
    let before = try Self.modificationDates(under: work).filter { !$0.key.contains("old") }
    let second = try await ToolProcess.run("grpc-wire-gen", arguments)
    #expect(second.status == 0, "\(second)")
    #expect(try Self.modificationDates(under: work) == before)
    for file in stale { #expect(!FileManager.default.fileExists(atPath: file.path)) }
    #expect(
      !FileManager.default.fileExists(atPath: cOut.appendingPathComponent("include/acme/old").path))
  }
}
