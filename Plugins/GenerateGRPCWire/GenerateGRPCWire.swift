import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory generate-grpc-wire`: generates a module
/// of GRPCWire messages and typed stubs from a user's own .proto files.
///
/// Runs the system's `protoc` and `protoc-c` (Debian's `protobuf-compiler` and
/// `protobuf-c-compiler`), then this package's `grpc-wire-gen`; writes `Sources/<Module>C/`
/// (protoc-c's code, umbrella header, module map) and `Sources/<Module>/Generated/`, and prints
/// the `.target(...)` entries to paste into Package.swift between the lines
/// `// generate-grpc-wire: targets` and `// generate-grpc-wire: end`. Unchanged files are not
/// rewritten, so a re-run with the same protos changes nothing. With `--messages
/// swift-protobuf` it needs no protoc-c and writes only the stubs (and their serializers)
/// into `Sources/<Module>/Generated/`, for the messages protoc-gen-swift writes beside them.
@main
struct GenerateGRPCWire: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    let options: Options
    do {
      options = try Options(parsing: arguments)
    } catch let error as UsageError {
      throw PluginFailure("\(error.message)\n\n\(Options.usage)")
    }
    let packageDirectory = context.package.directoryURL
    let protoc = try Self.systemTool("protoc", debianPackage: "protobuf-compiler")
    let generator = try context.tool(named: "grpc-wire-gen").url

    // The user's -I folders first, then what ProtoRuntime's modules were generated from:
    // google.rpc from this package's Protos/, the well-known types from libprotobuf-dev. Their
    // types resolve to ProtoRuntime; grpc-wire-gen refuses an import of anything else outside
    // the module.
    let userIncludes = (options.includes.isEmpty ? ["."] : options.includes).map {
      Self.absolute($0, in: packageDirectory)
    }
    var includes = userIncludes
    if let ours = Self.fleetConsumerPackage(in: context.package) {
      includes.append(ours.directoryURL.appendingPathComponent("Protos").path)
    }
    includes.append("/usr/include")
    let protoNames = try options.protos.map { file in
      try Self.protocName(of: Self.absolute(file, in: packageDirectory), under: userIncludes)
    }

    let work = context.pluginWorkDirectoryURL.appendingPathComponent("generate-grpc-wire")
    try? FileManager.default.removeItem(at: work)
    let cDirectory = work.appendingPathComponent("c")
    try FileManager.default.createDirectory(at: cDirectory, withIntermediateDirectories: true)
    let descriptorSet = work.appendingPathComponent("set.pb").path
    let includeFlags = includes.flatMap { ["-I", $0] }

    try Self.run(
      protoc,
      includeFlags + [
        "--include_imports", "--include_source_info", "--descriptor_set_out=\(descriptorSet)",
      ] + protoNames, in: packageDirectory)
    let generatorFlags =
      ["--descriptor-set", descriptorSet, "--module", options.module, "--access", options.access]
      + options.namespaces.map { "--namespace=\($0)" }
    let sources = packageDirectory.appendingPathComponent("Sources")
    let generated = sources.appendingPathComponent(options.module)
      .appendingPathComponent("Generated")
    if options.messages == "swift-protobuf" {
      // Only the stubs and their serializers: protoc-gen-swift writes the messages (into the
      // same target), and grpc-wire-gen removes no file of this folder but stale stubs.
      try Self.run(
        generator,
        generatorFlags + ["--messages", "swift-protobuf", "--output", generated.path] + protoNames,
        in: packageDirectory)
      print(Self.swiftProtobufTargets(module: options.module))
      return
    }
    let protocC = try Self.systemTool("protoc-c", debianPackage: "protobuf-c-compiler")
    // What grpc-wire-gen cannot map fails here, naming the file and the element, before
    // protoc-c (which crashes on a proto2 group) sees it.
    try Self.run(generator, generatorFlags + ["--check-only", "--messages", "protobuf-c"] + protoNames, in: packageDirectory)
    try Self.run(protocC, includeFlags + ["--c_out=\(cDirectory.path)"] + protoNames, in: packageDirectory)
    try Self.run(
      generator,
      generatorFlags + [
        "--messages", "protobuf-c", "--c-dir", cDirectory.path,
        "--c-output", sources.appendingPathComponent("\(options.module)C").path,
        "--output", generated.path,
      ] + protoNames, in: packageDirectory)
    print(Self.targets(module: options.module))
  }

  /// The `.target(...)` entries of the generated module and its C target, ready to paste.
  static func targets(module: String) -> String {
    """
    // generate-grpc-wire: targets
        // \(module): generated from .proto files by `swift package generate-grpc-wire`.
        .target(
          name: "\(module)C",
          dependencies: [.product(name: "ProtoRuntime", package: "FleetConsumer")]),
        .target(
          name: "\(module)",
          dependencies: [
            "\(module)C",
            .product(name: "ProtoRuntime", package: "FleetConsumer"),
            .product(name: "GRPCWire", package: "FleetConsumer"),
          ]),
    // generate-grpc-wire: end
    """
  }

  /// With `--messages swift-protobuf`: the one target of the stubs and protoc-gen-swift's
  /// messages, ready to paste.
  static func swiftProtobufTargets(module: String) -> String {
    """
    // generate-grpc-wire: targets
        // \(module): stubs generated by `swift package generate-grpc-wire --messages swift-protobuf`
        // beside the messages protoc-gen-swift writes (the package also depends on swift-protobuf).
        .target(
          name: "\(module)",
          dependencies: [
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "GRPCWire", package: "FleetConsumer"),
          ]),
    // generate-grpc-wire: end
    """
  }

  /// This package, as the user's package depends on it (directly or through another).
  static func fleetConsumerPackage(in package: Package) -> Package? {
    var seen: Set<String> = []
    var queue = package.dependencies.map(\.package)
    while let next = queue.first {
      queue.removeFirst()
      guard seen.insert(next.id).inserted else { continue }
      if next.products.contains(where: { $0.name == "GRPCWire" })
        && next.products.contains(where: { $0.name == "ProtoRuntime" })
      {
        return next
      }
      queue += next.dependencies.map(\.package)
    }
    return nil
  }

  /// `name` from PATH, or an error naming the Debian package that installs it.
  static func systemTool(_ name: String, debianPackage: String) throws -> URL {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for folder in path.split(separator: ":") where !folder.isEmpty {
      let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw PluginFailure(
      "generate-grpc-wire: \(name) not found on PATH; install it with "
        + "`sudo apt-get install \(debianPackage)` (Debian/Ubuntu)")
  }

  /// `path` made absolute against `directory` and standardized.
  static func absolute(_ path: String, in directory: URL) -> String {
    let url =
      path.hasPrefix("/")
      ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
    return url.standardizedFileURL.path
  }

  /// The name protoc gives `file`: its path under the first include folder holding it.
  static func protocName(of file: String, under includes: [String]) throws -> String {
    guard FileManager.default.fileExists(atPath: file) else {
      throw PluginFailure("generate-grpc-wire: \(file): no such file")
    }
    for include in includes {
      let prefix = include.hasSuffix("/") ? include : include + "/"
      if file.hasPrefix(prefix) { return String(file.dropFirst(prefix.count)) }
    }
    throw PluginFailure(
      "generate-grpc-wire: \(file) is in none of the -I folders (\(includes.joined(separator: ", "))); "
        + "protoc names a .proto by its path under one")
  }

  /// Runs `tool` with `arguments` in `directory`; its output passes through to ours, and a
  /// failure names the tool and its exit status.
  static func run(_ tool: URL, _ arguments: [String], in directory: URL) throws {
    let process = Process()
    process.executableURL = tool
    process.arguments = arguments
    process.currentDirectoryURL = directory
    // grpc-wire-gen and protoc write what is wrong with a .proto on stderr; stdout is the
    // printed targets alone.
    process.standardOutput = FileHandle.standardError
    try process.run()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw PluginFailure(
        "generate-grpc-wire: \(tool.lastPathComponent) failed (status \(process.terminationStatus))")
    }
  }
}

/// The command's arguments.
struct Options {
  static let usage = """
    usage: swift package --allow-writing-to-package-directory generate-grpc-wire \\
        --module Name [--namespace PACKAGE=Name]... [--access public|package|internal] \\
        [--messages protobuf-c|swift-protobuf] [-I DIR]... PROTO_FILE...
    """

  var module = ""
  var namespaces: [String] = []
  var access = "public"
  var messages = "protobuf-c"
  var includes: [String] = []
  var protos: [String] = []

  init(parsing arguments: [String]) throws {
    var rest = arguments[...]
    var module: String?
    while let first = rest.popFirst() {
      var argument = first
      // `--flag=value` is `--flag value`; `-IDIR` is `-I DIR`.
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        rest.insert(String(argument[argument.index(after: equals)...]), at: rest.startIndex)
        argument = String(argument[..<equals])
      } else if argument.hasPrefix("-I") && argument.count > 2 {
        rest.insert(String(argument.dropFirst(2)), at: rest.startIndex)
        argument = "-I"
      }
      guard argument.hasPrefix("-") else {
        protos.append(argument)
        continue
      }
      guard let value = rest.popFirst() else { throw UsageError("\(argument) needs a value") }
      switch argument {
      case "--module": module = value
      case "--namespace":
        guard value.split(separator: "=", maxSplits: 1).count == 2 else {
          throw UsageError("--namespace wants PACKAGE=Name, not \(value)")
        }
        namespaces.append(value)
      case "--access":
        guard ["public", "package", "internal"].contains(value) else {
          throw UsageError("--access must be public, package or internal, not \(value)")
        }
        access = value
      case "--messages":
        guard ["protobuf-c", "swift-protobuf"].contains(value) else {
          throw UsageError("--messages must be protobuf-c or swift-protobuf, not \(value)")
        }
        messages = value
      case "-I": includes.append(value)
      default: throw UsageError("unknown option \(argument)")
      }
    }
    guard let module, !module.isEmpty else { throw UsageError("--module is required") }
    guard !protos.isEmpty else { throw UsageError("no PROTO_FILE given") }
    self.module = module
  }
}

/// A mistake in the command's arguments.
struct UsageError: Error {
  var message: String
  init(_ message: String) { self.message = "generate-grpc-wire: " + message }
}

/// Why the command failed, printed by SwiftPM as the plugin's error.
struct PluginFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
