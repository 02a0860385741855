// Public: a public conformance to Foundation's CustomNSError needs Foundation in the interface.
// Only this file uses Foundation; status and metadata parsing on the hot path do not.
public import Foundation

extension RPCError: CustomNSError, LocalizedError {
  /// `"io.grpc"`, the domain Fleet Engine's consumer SDKs report gRPC errors in.
  public static var errorDomain: String { "io.grpc" }

  /// The status code's number, so `(error as NSError).code` is the wire value.
  public var errorCode: Int { code.rawValue }

  /// `NSLocalizedDescriptionKey`: ``description``; `NSLocalizedRecoverySuggestionErrorKey`: the
  /// code's ``StatusCode/explanation``; `NSUnderlyingErrorKey`: ``cause``, when there is one.
  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [
      NSLocalizedDescriptionKey: description,
      NSLocalizedRecoverySuggestionErrorKey: code.explanation,
    ]
    if let cause { info[NSUnderlyingErrorKey] = cause as NSError }
    return info
  }

  /// ``description``, for `localizedDescription`.
  public var errorDescription: String? { description }

  /// The code's ``StatusCode/explanation``.
  public var recoverySuggestion: String? { code.explanation }
}
