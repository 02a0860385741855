import FleetConsumer
import Foundation

extension RPCError {
  /// An error as the server sends it, read from its trailers: status `code` and `message`,
  /// with a RetryInfo of `retryDelay` when given.
  static func fromServer(
    _ code: StatusCode, message: String, retryDelay: GoogleProtobuf.Duration? = nil
  ) -> RPCError {
    var status = GoogleRPC.Status()
    status.code = Int32(code.rawValue)
    if let retryDelay {
      var info = GoogleRPC.RetryInfo()
      info.retryDelay = retryDelay
      status.details = [ErrorDetail.retryInfo(info).packed]
    }
    return RPCError(
      grpcStatus: String(code.rawValue), grpcMessage: message,
      grpcStatusDetailsBin: Data(status.serializedBytes()).base64EncodedString(), metadata: [:])
  }
}
