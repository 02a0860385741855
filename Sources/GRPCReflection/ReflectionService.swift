internal import GRPCServiceProtos
public import GRPCWire
public import ProtoRuntime

/// gRPC server reflection for a ``GRPCServer``: `grpc.reflection.v1.ServerReflection` and its
/// older name `grpc.reflection.v1alpha.ServerReflection`, which grpcurl, grpcio-reflection and
/// other tools ask to learn a server's services and message types (doc/server-reflection.md).
///
/// It lists the services registered on the server it is registered on, and serves the
/// `.proto` files its creator names — those of the messages of the server's services, as each
/// message module lists them (`ProtoFileDescriptor.fleetProtos`, `.grpcTestingProtos`) — and
/// those of the runtime and of gRPC's standard services, which it always serves: by file name,
/// by a symbol they declare (service, method, message, field, enum, enum value) and by
/// extension, each with the files it imports, transitively. Anything not served is answered
/// with an error response NOT_FOUND, and the stream stays open.
///
/// ```swift
/// // with the server's other services
/// ReflectionService(files: ProtoFileDescriptor.fleetProtos).register(on: server)
/// ```
public struct ReflectionService: Sendable {
  typealias Request = GRPCReflectionV1.ServerReflectionRequest
  typealias Response = GRPCReflectionV1.ServerReflectionResponse

  private let index: DescriptorIndex

  /// Every file it serves: the runtime's (``ProtoFileDescriptor/protoRuntime``: well-known
  /// types, `google.rpc`), those given, and gRPC's standard services' (`grpcServiceProtos`:
  /// health, reflection); each after the files it imports when the given ones are.
  public let files: [ProtoFileDescriptor]

  /// Serves `files` besides the runtime's and the standard services' (a file given twice is
  /// served once); together they must include every file they import. A message module's
  /// list (`ProtoFileDescriptor.fleetProtos`) imports only its own files and the runtime's.
  public init(files: [ProtoFileDescriptor]) {
    var names = Set<String>()
    self.files = (ProtoFileDescriptor.protoRuntime + files + ProtoFileDescriptor.grpcServiceProtos)
      .filter { names.insert($0.name).inserted }
    index = DescriptorIndex(self.files)
  }

  /// Registers both versions of `ServerReflectionInfo` on `server` (before it starts).
  /// `list_services` names every service registered on `server` when it is asked, these two
  /// included.
  public func register(on server: GRPCServer) {
    // v1alpha is v1 under an older package name: the messages are the same on the wire, so
    // v1's types serve both paths.
    let v1alpha = ProtoMethod<Request, Response>(
      path: GRPCReflectionV1Alpha.ServerReflection.serverReflectionInfo.path,
      kind: .bidirectionalStreaming)
    for method in [GRPCReflectionV1.ServerReflection.serverReflectionInfo, v1alpha] {
      // Weak: the server holds this handler, so a strong reference would keep both alive.
      server.register(bidirectional: method) { [self, weak server] requests, responses, _ in
        var sent = Set<String>()
        for try await request in requests {
          let response = answer(request, sent: &sent) { server?.registeredServices ?? [] }
          try await responses.write(response)
        }
      }
    }
  }

  /// The answer to one request of a stream; `sent` holds the files the stream was sent so far.
  func answer(_ request: Request, sent: inout Set<String>, services: () -> [String]) -> Response {
    var response = Response()
    response.validHost = request.host
    response.originalRequest = request
    response.messageResponse = messageResponse(request, sent: &sent, services: services)
    return response
  }

  private func messageResponse(
    _ request: Request, sent: inout Set<String>, services: () -> [String]
  ) -> Response.MessageResponse {
    switch request.messageRequest {
    case .fileByFilename(let name):
      return files(of: name, sent: &sent, missing: "no file named '\(name)'")
    case .fileContainingSymbol(let symbol):
      let name = index.file(declaring: symbol)
      return files(of: name, sent: &sent, missing: "no symbol named '\(symbol)'")
    case .fileContainingExtension(let request):
      let name = index.file(extending: request.containingType, number: request.extensionNumber)
      return files(
        of: name, sent: &sent,
        missing: "no extension \(request.extensionNumber) of '\(request.containingType)'")
    case .allExtensionNumbersOfType(let type):
      guard index.declares(type) else { return Self.error(.notFound, "no type named '\(type)'") }
      var numbers = GRPCReflectionV1.ExtensionNumberResponse()
      numbers.baseTypeName = type
      numbers.extensionNumber = index.extensionNumbers(of: type)
      return .allExtensionNumbersResponse(numbers)
    case .listServices:
      var list = GRPCReflectionV1.ListServiceResponse()
      list.service = services().map { name in
        var service = GRPCReflectionV1.ServiceResponse()
        service.name = name
        return service
      }
      return .listServicesResponse(list)
    case nil:
      return Self.error(
        .invalidArgument, "the request sets none of the message_request fields this server knows")
    }
  }

  private func files(of name: String?, sent: inout Set<String>, missing: String)
    -> Response.MessageResponse
  {
    guard let name, let descriptors = index.descriptors(of: name, sent: &sent) else {
      return Self.error(.notFound, missing)
    }
    var files = GRPCReflectionV1.FileDescriptorResponse()
    files.fileDescriptorProto = descriptors
    return .fileDescriptorResponse(files)
  }

  private static func error(_ code: StatusCode, _ message: String) -> Response.MessageResponse {
    var error = GRPCReflectionV1.ErrorResponse()
    error.errorCode = Int32(code.rawValue)
    error.errorMessage = message
    return .errorResponse(error)
  }
}
