import Foundation
import GRPCWireGenerator

/// The driver mode (`-I DIR`… instead of `--descriptor-set`): the one place that runs the steps
/// of a generation in order, for CodeGen/generate and `swift package generate-grpc-wire` alike.
extension GRPCWireGen {
  /// Runs protoc for the descriptor set, checks what the generator cannot map, runs protoc-c
  /// (with `--messages protobuf-c`) and generates from both, in a temporary folder removed at
  /// the end.
  func runProtoc() throws {
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("grpc-wire-gen-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let includeFlags = includes.flatMap { ["-I", $0] }
    let setPath = work.appendingPathComponent("set.pb").path
    try Self.runTool(
      "protoc", debianPackage: "protobuf-compiler",
      includeFlags + [
        "--include_imports", "--include_source_info", "--descriptor_set_out=\(setPath)",
      ] + protos)
    let set = try Self.readDescriptorSet(setPath)
    // What the generator cannot map fails here, naming the file and the element, before
    // protoc-c (which crashes on a proto2 group) sees it.
    try check(set)
    guard !checkOnly else { return }
    var cFiles: [String: String]?
    if messages == "protobuf-c" {
      let cDirectory = work.appendingPathComponent("c").path
      try FileManager.default.createDirectory(
        atPath: cDirectory, withIntermediateDirectories: true)
      try Self.runTool(
        "protoc-c", debianPackage: "protobuf-c-compiler",
        includeFlags + ["--c_out=\(cDirectory)"] + protos)
      cFiles = try Self.readFiles(under: cDirectory)
    }
    try generate(set, cFiles: cFiles)
  }

  /// Runs `name` from PATH with `arguments` in the current folder; its output passes through
  /// to ours. Fails naming the Debian package when it is not installed, and the tool and its
  /// exit status when it fails.
  static func runTool(_ name: String, debianPackage: String, _ arguments: [String]) throws {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    let tool = path.split(separator: ":").lazy.map {
      URL(fileURLWithPath: String($0)).appendingPathComponent(name)
    }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    guard let tool else {
      throw GeneratorError(
        file: "", element: "",
        reason: "\(name) not found on PATH; install it with "
          + "`sudo apt-get install \(debianPackage)` (Debian/Ubuntu)")
    }
    let process = Process()
    process.executableURL = tool
    process.arguments = arguments
    // Our stdout is for what a caller reads (the plugin prints its targets after us); protoc
    // writes what is wrong with a .proto on stderr.
    process.standardOutput = FileHandle.standardError
    try process.run()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw GeneratorError(
        file: "", element: "", reason: "\(name) failed (status \(process.terminationStatus))")
    }
  }
}
