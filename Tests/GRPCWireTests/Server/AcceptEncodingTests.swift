import Testing

@testable import GRPCWire

/// The server reads a client's `grpc-accept-encoding` list to decide whether it may gzip.
@Suite("grpc-accept-encoding lists")
struct AcceptEncodingTests {
  @Test(
    "a list naming gzip, with or without spaces, allows gzip",
    arguments: ["identity,gzip", "gzip", "identity, deflate, gzip", " gzip ", "gzip,identity", "deflate ,gzip,"])
  func listsGzip(_ list: String) {
    #expect(StreamStateMachine.listsGzip(list))
  }

  @Test(
    "a list without gzip as a whole name does not",
    arguments: ["", "identity", "identity,deflate", "gzipx", "x-gzip", "g zip", ",", "gzi", "GZIP"])
  func doesNotListGzip(_ list: String) {
    #expect(!StreamStateMachine.listsGzip(list))
  }
}
