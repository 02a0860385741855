import GRPCWire
import Testing

/// `Status` read from and written to trailer values.
@Suite("Status")
struct StatusTests {
  // grpc-status, grpc-message (nil: absent), code, decoded message
  static let received: [(String, String?, StatusCode, String)] = [
    ("0", nil, .ok, ""),
    (
      "5", "trip%20providers/p/trips/t%20not%20found", .notFound,
      "trip providers/p/trips/t not found"
    ),
    ("3", "Ung%C3%BCltiger Fahrtname", .invalidArgument, "Ungültiger Fahrtname"),
    ("14", "100%", .unavailable, "100%"),
    ("16", "", .unauthenticated, ""),
    ("17", nil, .unknown, "grpc-status 17 is not a gRPC status code"),
    ("17", "boom", .unknown, "grpc-status 17 is not a gRPC status code: boom"),
    ("-1", nil, .unknown, "grpc-status -1 is not a gRPC status code"),
    ("abc", "x", .unknown, "grpc-status \"abc\" is not a number: x"),
    ("", nil, .unknown, "grpc-status \"\" is not a number"),
  ]

  @Test("received grpc-status and grpc-message become a status", arguments: received)
  func fromTrailers(
    _ grpcStatus: String, _ grpcMessage: String?, _ code: StatusCode, _ message: String
  ) {
    let status = Status(grpcStatus: grpcStatus, grpcMessage: grpcMessage)
    #expect(status.code == code)
    #expect(status.message == message)
    #expect(status.detailsBytes == nil)
  }

  @Test("a hostile grpc-status is capped and escaped in the message")
  func hostileGRPCStatus() {
    let status = Status(grpcStatus: String(repeating: "x", count: 10_000) + "\n", grpcMessage: nil)
    #expect(status.code == .unknown)
    #expect(status.message.count < 100)
    #expect(!status.message.contains("\n"))
  }

  @Test(
    "a status written as trailer fields reads back the same",
    arguments: [
      Status.ok,
      Status(code: .notFound, message: "trip not found"),
      Status(code: .invalidArgument, message: "100% ungültig\n日本", detailsBytes: [0, 1, 2, 0xFF]),
      Status(code: .unavailable, detailsBytes: []),
    ])
  func trailerRoundTrip(_ status: Status) throws {
    let fields = status.headerFields()
    #expect(fields.first?.name == "grpc-status")
    #expect(fields.allSatisfy { $0.value.utf8.allSatisfy { (0x20...0x7E).contains($0) } })
    let value = { (name: String) in fields.first { $0.name == name }?.value }
    let details = try value("grpc-status-details-bin").map {
      try #require(Status.detailsBytes(fromHeaderValue: $0))
    }
    let read = Status(
      grpcStatus: try #require(value("grpc-status")), grpcMessage: value("grpc-message"),
      detailsBytes: details)
    #expect(read == status)
  }

  @Test("description is the code's name and the message")
  func description() {
    #expect(Status.ok.description == "OK")
    #expect(Status(code: .notFound, message: "no trip").description == "NOT_FOUND: no trip")
    #expect(Status.ok.isOK)
    #expect(!Status(code: .cancelled).isOK)
  }
}
