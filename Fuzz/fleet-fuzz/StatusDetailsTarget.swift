import FleetProtos
import FleetSync

@testable import GRPCWire

extension FuzzTarget {
  /// `grpc-status-details-bin`: the `google.rpc.Status` in a failed call's trailers, read as
  /// RPCError reads it.
  ///
  /// Input: a byte for the `grpc-status` code (modulo 17), then the details' bytes; the same
  /// bytes are also tried as the header's text, mostly not base64.
  static let statusDetails = FuzzTarget(
    name: "status-details",
    summary: "grpc-status-details-bin into RPCError: code kept, bytes passed on unchanged, "
      + "details re-pack",
    seeds: statusDetailsSeeds,
    run: fuzzStatusDetails)
}

private func fuzzStatusDetails(_ input: UnsafeRawBufferPointer) {
  guard let codeByte = input.first else { return }
  let code = StatusCode(rawValue: Int(codeByte) % 17)!
  let bytes = Array(input[1...])

  let (details, problem) = RPCError.decodeDetails(bytes, wireCode: code)
  // Through the trailers as the client reads them, base64 and all.
  let received = RPCError(
    grpcStatus: String(code.rawValue), grpcMessage: "failed",
    grpcStatusDetailsBin: Base64.encodeUnpadded(bytes), metadata: [:])
  invariant(received.code == code, "details changed the code to \(received.code)")
  invariant(
    received.details == details && received.detailsProblem == problem,
    "the trailers give other details than the bytes")
  invariant(received.status.detailsBytes == bytes, "the details are not passed on unchanged")
  if problem == nil, let rpcStatus = try? GoogleRPC.Status(serializedBytes: bytes) {
    invariant(details.count == rpcStatus.details.count, "details lost without a problem said")
  }
  for detail in details {
    invariant(ErrorDetail(unpacking: detail.packed) == detail, "\(detail) does not re-pack")
  }
  _ = received.description

  // The same bytes as the header's text: almost never base64, which must be said, not trapped.
  let text = String(decoding: bytes, as: UTF8.self)
  let fromText = RPCError(
    grpcStatus: String(code.rawValue), grpcMessage: nil, grpcStatusDetailsBin: text,
    metadata: [:])
  if Base64.decode(text) == nil {
    invariant(
      fromText.details.isEmpty && fromText.detailsProblem != nil,
      "details that are not base64 were not reported")
  }
}

private func statusDetailsSeeds() -> [(name: String, bytes: [UInt8])] {
  func seed(_ name: String, _ code: StatusCode, _ bytes: [UInt8]) -> (
    name: String, bytes: [UInt8]
  ) {
    (name, [UInt8(code.rawValue)] + bytes)
  }
  let all = SeedMessages.details
  var unknown = GoogleProtobuf.AnyMessage()
  unknown.typeURL = "type.googleapis.com/maps.fleetengine.v1.Trip"
  unknown.value = SeedMessages.trip.serializedBytes()
  var undecodable = GoogleProtobuf.AnyMessage()
  undecodable.typeURL = "type.googleapis.com/google.rpc.ErrorInfo"
  undecodable.value = [0x0A, 0x02, 0xC3, 0x28]  // reason: two bytes that are not UTF-8
  let withOthers = SeedMessages.statusDetails(.notFound, [.other(unknown), .other(undecodable)])
  return [
    seed(
      "every-detail-type", .resourceExhausted, SeedMessages.statusDetails(.resourceExhausted, all)),
    seed("retry-info", .unavailable, SeedMessages.statusDetails(.unavailable, [all[1]])),
    seed("bad-request", .invalidArgument, SeedMessages.statusDetails(.invalidArgument, [all[5]])),
    seed("unknown-and-undecodable", .notFound, withOthers),
    seed("code-mismatch", .internalError, SeedMessages.statusDetails(.permissionDenied, [all[0]])),
    seed("empty", .unknown, []),
    seed("base64-text", .aborted, Array(Base64.encodeUnpadded(withOthers).utf8)),
  ]
}
