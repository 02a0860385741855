public import ProtoDescriptors

/// The typed stubs of a .proto file's services: for each `service`, a `Client` over
/// `GRPCChannel` (per unary and server-streaming RPC also a loop-driven `startX`, over
/// `GRPCChannel.startUnary` / `startServerStreaming`), a `ServiceProtocol` whose requirements
/// are `GRPCServer.register`'s handler shapes, an extension answering UNIMPLEMENTED for every
/// RPC an implementation leaves out, and `GRPCServer.register(_:)` serving them all. Both
/// name the `ProtoMethod` descriptors the message layer declares (`Namespace.Service.method`),
/// so path and serializers are those.
///
/// Over protoc-gen-swift's messages (``Messages/swiftProtobuf``) each service also gets those
/// descriptors, as `SwiftProtobufMethod`s (``SwiftProtobufSupport``), and the file imports
/// GRPCWire and SwiftProtobuf only.
///
/// Deterministic: the same descriptor set and options give the same text, byte for byte.
public struct ServiceStubs: Sendable {
  /// Whose messages the stubs send and receive.
  public enum Messages: Sendable {
    /// This package's message layer (`--messages protobuf-c`, or stubs beside it): the
    /// `ProtoMethod` descriptors are the message layer's.
    case protobufC
    /// protoc-gen-swift's: the stubs declare their descriptors and encode through
    /// `SwiftProtobuf.Message`.
    case swiftProtobuf
  }

  /// The access level of everything written: `public`, `package` or `internal`.
  public var access: String
  public var types: TypeIndex
  public var namespaces: [String: String]
  /// The Swift module the stubs are compiled into; an RPC type of the runtime's packages
  /// (well-known types, `google.rpc`) elsewhere makes the file import `ProtoRuntime`.
  public var module: String
  public var messages: Messages
  /// What each file's first lines say wrote it and how to regenerate it.
  public var header: GeneratedHeader

  public init(
    types: TypeIndex, namespaces: [String: String], module: String, access: String,
    messages: Messages = .protobufC, header: GeneratedHeader = .codeGen
  ) {
    self.types = types
    self.namespaces = namespaces
    self.module = module
    self.access = access
    self.messages = messages
    self.header = header
  }

  /// The packages whose types live in `ProtoRuntime`.
  static let runtimePackages: Set<String> = ["google.protobuf", "google.rpc"]

  /// The Swift file of `file`'s stubs, or nil when it declares no service.
  public func file(_ file: GoogleProtobuf.FileDescriptorProto) throws(GeneratorError) -> String? {
    guard !file.service.isEmpty else { return nil }
    let name = file.name ?? ""
    let package = file.package ?? ""
    let namespace = namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)
    var services: [Service] = []
    for (index, service) in file.service.enumerated() {
      services.append(
        try Service(
          service, index: index, file: file, namespace: namespace, types: types,
          messages: messages))
    }
    let usesRuntime = services.contains { service in
      service.methods.contains { method in
        [method.inputPackage, method.outputPackage].contains { Self.runtimePackages.contains($0) }
      }
    }
    var out = TextLines()
    out.line(contentsOf: header.swift(from: name))
    out.line()
    switch messages {
    case .protobufC:
      out.line("\(access) import GRPCWire")
      if usesRuntime && module != "ProtoRuntime" {
        out.line("\(access) import ProtoRuntime")
      }
    case .swiftProtobuf:
      out.line(contentsOf: SwiftProtobufSupport.imports)
    }
    for service in services {
      out.line()
      if messages == .swiftProtobuf {
        descriptors(service, &out)
        out.line()
      }
      client(service, &out)
      out.line()
      serviceProtocol(service, &out)
      out.line()
      unimplemented(service, &out)
      out.line()
      registration(service, &out)
    }
    return out.text
  }

  // MARK: Descriptors

  /// The `SwiftProtobufMethod` of each RPC, as the message layer declares `ProtoMethod`s.
  private func descriptors(_ service: Service, _ out: inout TextLines) {
    out.line("extension \(service.namespace) {")
    out.line("  /// The methods of `\(service.full)`, for calls through GRPCWire.")
    out.line("  \(access) enum \(service.name) {")
    for method in service.methods {
      out.lines(method.doc, indent: "    ")
      out.line(
        "    \(access) static let \(method.swiftName) = SwiftProtobufMethod<\(method.input), \(method.output)>("
      )
      out.line("      path: \"\(method.path)\", kind: .\(method.kind.rawValue))")
    }
    out.line("  }")
    out.line("}")
  }

  // MARK: Client

  private func client(_ service: Service, _ out: inout TextLines) {
    out.line("extension \(service.swift) {")
    out.line(
      "  /// Calls `\(service.full)` through a `GRPCChannel`: one method per RPC, with its path")
    out.line("  /// and serializers filled in.")
    out.line("  \(access) struct Client: Sendable {")
    out.line("    /// The channel every call of this client goes through.")
    out.line("    \(access) let channel: GRPCWire.GRPCChannel")
    out.line()
    out.line("    \(access) init(channel: GRPCWire.GRPCChannel) {")
    out.line("      self.channel = channel")
    out.line("    }")
    for method in service.methods {
      out.line()
      out.lines(method.doc, indent: "    ")
      let descriptor = "\(service.swift).\(method.swiftName)"
      switch method.kind {
      case .unary:
        out.line("    nonisolated(nonsending) \(access) func \(method.swiftName)(")
        out.line(
          "      _ request: \(method.input), options: GRPCWire.CallOptions = GRPCWire.CallOptions()"
        )
        out.line("    ) async throws -> GRPCWire.ClientResponse<\(method.output)> {")
        out.line("      try await channel.unary(\(descriptor), request, options: options)")
      case .serverStreaming:
        let result = method.bodyResult
        out.line("    \(access) func \(method.swiftName)<\(result)>(")
        out.line(
          "      _ request: \(method.input), options: GRPCWire.CallOptions = GRPCWire.CallOptions(),"
        )
        out.line(
          "      _ body: (GRPCWire.ResponseStream<\(method.output)>) async throws -> \(result)")
        out.line("    ) async throws -> \(result) {")
        out.line(
          "      try await channel.serverStreaming(\(descriptor), request, options: options, body)")
      case .clientStreaming:
        out.line("    \(access) func \(method.swiftName)(")
        out.line("      options: GRPCWire.CallOptions = GRPCWire.CallOptions(),")
        out.line("      _ body: (GRPCWire.RequestWriter<\(method.input)>) async throws -> Void")
        out.line("    ) async throws -> GRPCWire.ClientResponse<\(method.output)> {")
        out.line("      try await channel.clientStreaming(\(descriptor), options: options, body)")
      case .bidirectionalStreaming:
        let result = method.bodyResult
        out.line("    \(access) func \(method.swiftName)<\(result)>(")
        out.line("      options: GRPCWire.CallOptions = GRPCWire.CallOptions(),")
        out.line(
          "      _ body: (GRPCWire.RequestWriter<\(method.input)>, GRPCWire.ResponseStream<\(method.output)>) async throws -> \(result)"
        )
        out.line("    ) async throws -> \(result) {")
        out.line(
          "      try await channel.bidirectionalStreaming(\(descriptor), options: options, body)")
      }
      out.line("    }")
      loopDriven(method, descriptor: descriptor, &out)
    }
    out.line("  }")
    out.line("}")
  }

  // MARK: Server

  private func serviceProtocol(_ service: Service, _ out: inout TextLines) {
    out.line("extension \(service.swift) {")
    out.line(
      "  /// `\(service.full)` as a `GRPCServer` serves it: implement the RPCs you serve and")
    out.line("  /// pass the implementation to `GRPCServer.register(_:)`; an RPC left out answers")
    out.line(
      "  /// UNIMPLEMENTED. Each requirement has the shape of `GRPCServer.register`'s handler.")
    out.line("  \(access) protocol ServiceProtocol: Sendable {")
    for (index, method) in service.methods.enumerated() {
      if index > 0 { out.line() }
      out.lines(method.doc, indent: "    ")
      out.line("    \(requirement(method))")
    }
    out.line("  }")
    out.line("}")
  }

  private func unimplemented(_ service: Service, _ out: inout TextLines) {
    out.line("extension \(service.swift).ServiceProtocol {")
    for (index, method) in service.methods.enumerated() {
      if index > 0 { out.line() }
      out.line("  /// Not implemented: the call ends with UNIMPLEMENTED.")
      out.line("  \(access) \(requirement(method)) {")
      out.line(
        "    throw GRPCWire.RPCError(code: .unimplemented, message: \"\(method.path) is not implemented\")"
      )
      out.line("  }")
    }
    out.line("}")
  }

  private func registration(_ service: Service, _ out: inout TextLines) {
    out.line("extension GRPCWire.GRPCServer {")
    out.line(
      "  /// Serves every RPC of `\(service.full)` with `service` (before the server starts).")
    out.line("  \(access) func register(_ service: some \(service.swift).ServiceProtocol) {")
    for method in service.methods {
      let descriptor = "\(service.swift).\(method.swiftName)"
      let name = method.swiftName
      switch method.kind {
      case .unary:
        out.line("    register(unary: \(descriptor)) { request, context in")
        out.line("      try await service.\(name)(request, context: context)")
      case .serverStreaming:
        out.line("    register(serverStreaming: \(descriptor)) { request, responses, context in")
        out.line("      try await service.\(name)(request, responses: responses, context: context)")
      case .clientStreaming:
        out.line("    register(clientStreaming: \(descriptor)) { requests, context in")
        out.line("      try await service.\(name)(requests, context: context)")
      case .bidirectionalStreaming:
        out.line("    register(bidirectional: \(descriptor)) { requests, responses, context in")
        out.line(
          "      try await service.\(name)(requests, responses: responses, context: context)")
      }
      out.line("    }")
    }
    out.line("  }")
    out.line("}")
  }

  private func requirement(_ method: Method) -> String {
    let (input, output, name) = (method.input, method.output, method.swiftName)
    return switch method.kind {
    case .unary:
      "func \(name)(_ request: \(input), context: GRPCWire.ServerContext) async throws -> \(output)"
    case .serverStreaming:
      "func \(name)(_ request: \(input), responses: GRPCWire.ResponseWriter<\(output)>, context: GRPCWire.ServerContext) async throws"
    case .clientStreaming:
      "func \(name)(_ requests: GRPCWire.RequestStream<\(input)>, context: GRPCWire.ServerContext) async throws -> \(output)"
    case .bidirectionalStreaming:
      "func \(name)(_ requests: GRPCWire.RequestStream<\(input)>, responses: GRPCWire.ResponseWriter<\(output)>, context: GRPCWire.ServerContext) async throws"
    }
  }
}
