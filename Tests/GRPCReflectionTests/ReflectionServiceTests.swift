import FleetProtos
import GRPCHealth
import GRPCServiceProtos
import GRPCTestingProtos
import GRPCWire
import Testing

@testable import GRPCReflection

/// What ``ReflectionService`` answers, request by request, and both versions over the wire.
@Suite("ReflectionService", .timeLimit(.minutes(1)))
struct ReflectionServiceTests {
  typealias Request = GRPCReflectionV1.ServerReflectionRequest
  typealias Response = GRPCReflectionV1.ServerReflectionResponse

  /// A service of every message module, as the simulator builds it: FleetProtos' and
  /// GRPCTestingProtos' files given, the runtime's and the standard services' its own.
  static let service = ReflectionService(
    files: ProtoFileDescriptor.fleetProtos + ProtoFileDescriptor.grpcTestingProtos)

  static let filesByName = Dictionary(
    uniqueKeysWithValues: service.files.map { ($0.name, $0) })

  func request(_ message: Request.MessageRequest?) -> Request {
    var request = Request()
    request.messageRequest = message
    return request
  }

  /// The answer to `message` as the first request of a stream, from a server with no services.
  func answerFirst(_ message: Request.MessageRequest?) -> Response {
    var sent = Set<String>()
    return Self.service.answer(request(message), sent: &sent) { [] }
  }

  /// The names of the files of a file-descriptor answer, in order (nil for another answer).
  func fileNames(_ response: Response) -> [String]? {
    guard case .fileDescriptorResponse(let files)? = response.messageResponse else { return nil }
    let names = Dictionary(
      uniqueKeysWithValues: Self.service.files.map { ($0.serializedBytes, $0.name) })
    return files.fileDescriptorProto.map { names[$0] ?? "unknown bytes" }
  }

  /// The error code of an error answer (nil for another answer).
  func errorCode(_ response: Response) -> StatusCode? {
    guard case .errorResponse(let error)? = response.messageResponse else { return nil }
    return StatusCode(rawValue: Int(error.errorCode))
  }

  /// `name` and every file it imports, directly or not.
  func closure(of name: String) -> Set<String> {
    var found: Set<String> = []
    var queue = [name]
    while let next = queue.popLast() {
      guard found.insert(next).inserted else { continue }
      queue += Self.filesByName[next]?.dependencies ?? []
    }
    return found
  }

  // MARK: The embedded descriptors

  @Test("every generated file's descriptor names itself and its imports are served too")
  func descriptorsAreSelfContained() {
    #expect(Self.service.files.count == 23)
    for file in Self.service.files {
      let bytes = file.serializedBytes
      let name = Array(file.name.utf8)
      // FileDescriptorProto field 1 (name), length-delimited: tag 0x0A, then a one-byte length.
      #expect(
        Array(bytes.prefix(2 + name.count)) == [0x0A, UInt8(name.count)] + name, "\(file.name)")
      for dependency in file.dependencies {
        #expect(Self.filesByName[dependency] != nil, "\(file.name) imports \(dependency)")
      }
    }
  }

  @Test("the runtime's and the standard services' files are always served; given twice, once")
  func ownFilesAlwaysServed() {
    let service = ReflectionService(files: ProtoFileDescriptor.protoRuntime)
    #expect(
      service.files.map(\.name)
        == (ProtoFileDescriptor.protoRuntime + ProtoFileDescriptor.grpcServiceProtos).map(\.name))
    var sent = Set<String>()
    let trips = service.answer(
      request(.fileByFilename("google/maps/fleetengine/v1/trips.proto")), sent: &sent
    ) { [] }
    #expect(errorCode(trips) == .notFound, "a module not given is not served: \(trips)")
  }

  // MARK: Answers

  @Test("file_by_filename: the file first, then everything it imports, each once")
  func fileByFilename() throws {
    let name = "google/maps/fleetengine/v1/trip_api.proto"
    let names = try #require(fileNames(answerFirst(.fileByFilename(name))))
    #expect(names.first == name)
    #expect(names.count == Set(names).count)
    #expect(Set(names) == closure(of: name))
    #expect(names.contains("google/protobuf/timestamp.proto"))
  }

  @Test("the files a stream was sent already are not sent again, but the one asked for is")
  func sentFilesAreNotRepeated() throws {
    let service = Self.service
    var sent = Set<String>()
    _ = service.answer(
      request(.fileByFilename("google/maps/fleetengine/v1/trips.proto")), sent: &sent
    ) { [] }
    let answer = service.answer(
      request(.fileContainingSymbol("maps.fleetengine.v1.TripService")), sent: &sent
    ) { [] }
    let names = try #require(fileNames(answer))
    #expect(names.first == "google/maps/fleetengine/v1/trip_api.proto")
    #expect(!names.contains("google/maps/fleetengine/v1/trips.proto"))
    #expect(!names.contains("google/protobuf/timestamp.proto"))
    let again = service.answer(
      request(.fileContainingSymbol("maps.fleetengine.v1.Trip")), sent: &sent
    ) { [] }
    #expect(fileNames(again) == ["google/maps/fleetengine/v1/trips.proto"])
  }

  @Test(
    "file_containing_symbol finds the file of each kind of symbol",
    arguments: [
      ("maps.fleetengine.v1.TripService", "google/maps/fleetengine/v1/trip_api.proto"),
      ("maps.fleetengine.v1.TripService.GetTrip", "google/maps/fleetengine/v1/trip_api.proto"),
      ("maps.fleetengine.v1.Trip", "google/maps/fleetengine/v1/trips.proto"),
      (".maps.fleetengine.v1.Trip", "google/maps/fleetengine/v1/trips.proto"),
      ("maps.fleetengine.v1.Trip.vehicle_id", "google/maps/fleetengine/v1/trips.proto"),
      ("maps.fleetengine.v1.TripStatus", "google/maps/fleetengine/v1/trips.proto"),
      ("maps.fleetengine.v1.TRIP_VIEW_UNSPECIFIED", "google/maps/fleetengine/v1/trips.proto"),
      ("grpc.health.v1.HealthCheckResponse.ServingStatus", "grpc/health/v1/health.proto"),
      ("grpc.health.v1.HealthCheckResponse.SERVING", "grpc/health/v1/health.proto"),
      (
        "grpc.reflection.v1.ServerReflectionRequest.message_request",
        "grpc/reflection/v1/reflection.proto"
      ),
      ("google.protobuf.Timestamp", "google/protobuf/timestamp.proto"),
    ])
  func fileContainingSymbol(symbol: String, file: String) throws {
    #expect(try #require(fileNames(answerFirst(.fileContainingSymbol(symbol)))).first == file)
  }

  @Test(
    "what is not served is an error answer NOT_FOUND",
    arguments: [
      Request.MessageRequest.fileByFilename("no/such/file.proto"),
      .fileContainingSymbol("no.such.Symbol"),
      .fileContainingSymbol("maps.fleetengine.v1"),  // a package is not a symbol
      .fileContainingExtension(extensionRequest("maps.fleetengine.v1.Trip", 100)),
      .allExtensionNumbersOfType("no.such.Message"),
    ])
  func notFound(message: Request.MessageRequest) {
    var sent = Set<String>()
    let answer = Self.service.answer(request(message), sent: &sent) { [] }
    #expect(errorCode(answer) == .notFound, "\(answer)")
    #expect(sent.isEmpty, "a failed request counts no file as sent")
  }

  @Test("all_extension_numbers_of_type of a message with no extensions: its name, no numbers")
  func extensionNumbers() {
    let answer = answerFirst(.allExtensionNumbersOfType("maps.fleetengine.v1.Trip"))
    var expected = GRPCReflectionV1.ExtensionNumberResponse()
    expected.baseTypeName = "maps.fleetengine.v1.Trip"
    #expect(answer.messageResponse == .allExtensionNumbersResponse(expected))
  }

  @Test("a request with no message_request is an error answer INVALID_ARGUMENT")
  func emptyRequest() {
    #expect(errorCode(answerFirst(nil)) == .invalidArgument)
  }

  @Test("every answer carries the request's host and the request itself")
  func echoesRequest() {
    var asked = request(.listServices(""))
    asked.host = "fleet.example"
    var sent = Set<String>()
    let answer = Self.service.answer(asked, sent: &sent) { ["a.Service"] }
    #expect(answer.validHost == "fleet.example" && answer.originalRequest == asked)
  }

  // MARK: Over the wire

  /// The answers to `requests`, sent one at a time on one stream of `path`, through our client.
  func ask<Req: ProtoMessage, Res: ProtoMessage>(
    _ channel: GRPCChannel, _ method: ProtoMethod<Req, Res>, _ requests: [Req]
  ) async throws -> [Res] {
    try await channel.bidirectionalStreaming(method) { writer, responses in
      var answers: [Res] = []
      var iterator = responses.makeAsyncIterator()
      for request in requests {
        try await writer.write(request)
        guard let answer = try await iterator.next() else { break }
        answers.append(answer)
      }
      return answers
    }
  }

  func withServer(_ body: (GRPCChannel) async throws -> Void) async throws {
    let server = GRPCServer()
    server.register(unary: GRPCTesting.TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    HealthService().register(on: server)
    Self.service.register(on: server)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    do {
      try await body(channel)
    } catch {
      await server.shutdown(gracePeriod: .zero)
      throw error
    }
    await server.shutdown(gracePeriod: .zero)
  }

  @Test("v1 over the wire: list_services names the server's services; one stream, many answers")
  func v1OverTheWire() async throws {
    try await withServer { channel in
      let answers = try await ask(
        channel, GRPCReflectionV1.ServerReflection.serverReflectionInfo,
        [
          request(.listServices("")),
          request(.fileContainingSymbol("grpc.testing.TestService.EmptyCall")),
          request(.fileContainingSymbol("grpc.testing.TestService")),
        ])
      #expect(answers.count == 3)
      var services = GRPCReflectionV1.ListServiceResponse()
      services.service = [
        "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection", "grpc.testing.TestService",
      ].map {
        var service = GRPCReflectionV1.ServiceResponse()
        service.name = $0
        return service
      }
      #expect(answers.first?.messageResponse == .listServicesResponse(services))
      #expect(
        answers.count == 3
          && Set(fileNames(answers[1]) ?? []) == closure(of: "grpc/testing/test.proto"))
      #expect(answers.count == 3 && fileNames(answers[2]) == ["grpc/testing/test.proto"])
    }
  }

  @Test("v1alpha over the wire, in v1alpha's own types: the same answers")
  func v1alphaOverTheWire() async throws {
    try await withServer { channel in
      var ask1 = GRPCReflectionV1Alpha.ServerReflectionRequest()
      ask1.messageRequest = .fileByFilename("grpc/health/v1/health.proto")
      var ask2 = GRPCReflectionV1Alpha.ServerReflectionRequest()
      ask2.messageRequest = .fileContainingSymbol("no.such.Symbol")
      let answers = try await ask(
        channel, GRPCReflectionV1Alpha.ServerReflection.serverReflectionInfo, [ask1, ask2])
      guard answers.count == 2,
        case .fileDescriptorResponse(let files)? = answers[0].messageResponse,
        case .errorResponse(let error)? = answers[1].messageResponse
      else {
        Issue.record("unexpected answers: \(answers)")
        return
      }
      let health = try #require(Self.filesByName["grpc/health/v1/health.proto"])
      #expect(files.fileDescriptorProto == [health.serializedBytes])
      #expect(error.errorCode == Int32(StatusCode.notFound.rawValue))
      #expect(answers[0].originalRequest == ask1)
    }
  }
}

func extensionRequest(_ type: String, _ number: Int32) -> GRPCReflectionV1.ExtensionRequest {
  var request = GRPCReflectionV1.ExtensionRequest()
  request.containingType = type
  request.extensionNumber = number
  return request
}
