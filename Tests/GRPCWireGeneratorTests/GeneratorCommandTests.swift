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

  @Test("writes GeneratorFixtures as committed; a re-run rewrites nothing and removes stale files")
  func committedOutputAndRerun() async throws {
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("grpc-wire-gen-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: work.appendingPathComponent("c"), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
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
    let swiftOut = work.appendingPathComponent("GeneratorFixtures/Generated")
    let cOut = work.appendingPathComponent("GeneratorFixturesC")
    let arguments = [
      "--descriptor-set", work.appendingPathComponent("set.pb").path,
      "--module", "GeneratorFixtures", "--messages", "protobuf-c",
      "--c-dir", work.appendingPathComponent("c").path, "--c-output", cOut.path,
      "--output", swiftOut.path, "--no-stubs", Self.proto,
    ]
    let first = try await ToolProcess.run("grpc-wire-gen", arguments)
    #expect(first.status == 0, "\(first)")

    let sources = Self.root.appendingPathComponent("Sources")
    #expect(
      try Self.files(under: swiftOut)
        == Self.files(under: sources.appendingPathComponent("GeneratorFixtures/Generated")))
    #expect(
      try Self.files(under: cOut)
        == Self.files(under: sources.appendingPathComponent("GeneratorFixturesC")))

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
