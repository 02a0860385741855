import ProtoDescriptors

// The model of one service, and the text helpers the stub writers share.

/// Which of the four kinds of call an RPC is; the raw value is the case of the method
/// descriptor's `Kind` (`ProtoMethod`, `SwiftProtobufMethod`).
enum CallKind: String {
  case unary, serverStreaming, clientStreaming, bidirectionalStreaming

  init(_ method: GoogleProtobuf.MethodDescriptorProto) {
    self =
      switch (method.clientStreaming ?? false, method.serverStreaming ?? false) {
      case (false, false): .unary
      case (false, true): .serverStreaming
      case (true, false): .clientStreaming
      case (true, true): .bidirectionalStreaming
      }
  }
}

extension ServiceStubs {
  struct Method {
    var swiftName: String
    var path: String
    var input: String
    var output: String
    var inputPackage: String
    var outputPackage: String
    var kind: CallKind
    var doc: [String]

    /// The name of the `Client`'s loop-driven variant (`getTrip` → `startGetTrip`), for the
    /// kinds that have one (unary, server streaming); nil for the others.
    static func loopName(_ swiftName: String, _ kind: CallKind) -> String? {
      switch kind {
      case .unary, .serverStreaming: "start" + SwiftNames.upperFirst(Substring(swiftName))
      case .clientStreaming, .bidirectionalStreaming: nil
      }
    }

    var loopName: String? {
      Self.loopName(swiftName.filter { $0 != "`" }, kind)
    }

    /// The name of a streaming client method's generic parameter, the type its body returns:
    /// `Result`, unless the request or response type's name begins with that name (a message
    /// protoc-gen-swift names `Result`, a namespace `Result`), which the parameter would hide
    /// inside the method's signature; then `Result_`, `Result__`, … .
    var bodyResult: String {
      let hidden = Set([input, output].map { String($0.prefix { $0 != "." && $0 != "<" }) })
      var name = "Result"
      while hidden.contains(name) { name += "_" }
      return name
    }
  }

  struct Service {
    var full: String
    /// The service's own name (`Dispatch`).
    var name: String
    /// The Swift namespace of its package (`AcmeDispatchV1`).
    var namespace: String
    /// `namespace.name`.
    var swift: String
    var methods: [Method] = []

    /// Members of `Client` an RPC's Swift name must not take.
    static let clientMembers: Set<String> = ["channel"]

    init(
      _ service: GoogleProtobuf.ServiceDescriptorProto, index: Int,
      file: GoogleProtobuf.FileDescriptorProto, namespace: String, types: TypeIndex,
      messages: Messages
    ) throws(GeneratorError) {
      let fileName = file.name ?? ""
      let package = file.package ?? ""
      let name = service.name ?? ""
      self.name = name
      self.namespace = namespace
      full = package.isEmpty ? name : "\(package).\(name)"
      swift = "\(namespace).\(name)"
      if namespace.isEmpty {
        throw GeneratorError(
          file: fileName, element: "service \(name)",
          reason: "the file declares no package, so its services have no namespace to live in; "
            + "give it a `package`")
      }
      // protoc-gen-swift's messages live outside the namespace (`Acme_V1_Order`).
      if messages == .protobufC, types.swiftNames["." + full] != nil {
        throw GeneratorError(
          file: fileName, element: "service \(name)",
          reason: "a message of package \(package) has the same name, and both would be "
            + "\(swift) in Swift")
      }
      let comments = Comments(file)
      var seen: [String: String] = [:]
      for (methodIndex, method) in service.method.enumerated() {
        let rpc = method.name ?? ""
        let element = "rpc \(name).\(rpc)"
        let swiftName = SwiftNames.methodName(rpc)
        if let other = seen[swiftName] {
          throw GeneratorError(
            file: fileName, element: element,
            reason: "its Swift name `\(swiftName)` is also rpc \(name).\(other)'s")
        }
        if Self.clientMembers.contains(swiftName) {
          throw GeneratorError(
            file: fileName, element: element,
            reason: "its Swift name `\(swiftName)` is the generated Client's own property")
        }
        seen[swiftName] = rpc
        func type(_ protoName: String?, _ role: String) throws(GeneratorError) -> (String, String) {
          guard let protoName, let swiftType = types.swiftNames[protoName],
            let typePackage = types.packages[protoName]
          else {
            throw GeneratorError(
              file: fileName, element: element,
              reason:
                "its \(role) type \(protoName ?? "(none)") is not a message of the descriptor set")
          }
          return (swiftType, typePackage)
        }
        let (input, inputPackage) = try type(method.inputType, "request")
        let (output, outputPackage) = try type(method.outputType, "response")
        methods.append(
          Method(
            swiftName: SwiftNames.identifier(swiftName), path: "/\(full)/\(rpc)", input: input,
            output: output, inputPackage: inputPackage, outputPackage: outputPackage,
            kind: CallKind(method), doc: comments.doc([6, Int32(index), 2, Int32(methodIndex)])))
      }
      // `startX`, the loop-driven variant of `x`, must not be another RPC's name.
      for method in service.method {
        let rpc = method.name ?? ""
        guard let loopName = Method.loopName(SwiftNames.methodName(rpc), CallKind(method)),
          let other = seen[loopName]
        else { continue }
        throw GeneratorError(
          file: fileName, element: "rpc \(name).\(other)",
          reason: "its Swift name `\(loopName)` is also the loop-driven variant of rpc "
            + "\(name).\(rpc)")
      }
    }
  }

  /// A file's leading comments by location path, as `///` lines.
  struct Comments {
    var byPath: [[Int32]: String] = [:]

    init(_ file: GoogleProtobuf.FileDescriptorProto) {
      for location in file.sourceCodeInfo?.location ?? [] {
        if let comment = location.leadingComments { byPath[location.path] = comment }
      }
    }

    /// The comment's lines as documentation (proto comments are indented by one space after
    /// `//`, which `///` keeps), with trailing blank lines dropped.
    func doc(_ path: [Int32]) -> [String] {
      guard let comment = byPath[path] else { return [] }
      return Self.docLines(comment)
    }

    /// `comment` as `///` lines: leading and trailing newlines and each line's trailing white
    /// space dropped, then trailing blank lines; none for a blank comment.
    static func docLines(_ comment: String) -> [String] {
      var lines = comment.trimmingNewlines().split(
        separator: "\n", omittingEmptySubsequences: false
      )
      .map { String($0).trimmingTrailingWhitespace() }
      while let last = lines.last, last.allSatisfy(\.isWhitespace) { lines.removeLast() }
      guard lines.contains(where: { !$0.allSatisfy(\.isWhitespace) }) else { return [] }
      return lines.map { $0.hasPrefix(" ") || $0.isEmpty ? "///\($0)" : "/// \($0)" }
    }
  }
}

/// Lines of generated text, joined with newlines and ending in one.
struct TextLines {
  private var lines: [String] = []

  mutating func line(_ text: String = "") { lines.append(text) }

  mutating func line(contentsOf texts: [String]) { lines.append(contentsOf: texts) }

  mutating func lines(_ texts: [String], indent: String) {
    for text in texts { lines.append(indent + text) }
  }

  var text: String { lines.joined(separator: "\n") + "\n" }
}

extension String {
  func trimmingNewlines() -> Substring {
    var text = Substring(self)
    while text.first == "\n" { text.removeFirst() }
    while text.last == "\n" { text.removeLast() }
    return text
  }

  func trimmingTrailingWhitespace() -> String {
    var text = Substring(self)
    while let last = text.last, last.isWhitespace { text.removeLast() }
    return String(text)
  }
}
