// Public: a public conformance to Foundation's CustomNSError needs Foundation in the interface.
// Only this file uses Foundation; status and metadata parsing on the hot path do not.
public import Foundation

extension RPCError: CustomNSError {
  /// `"io.grpc"`, gRPC's error domain (as gRPC's Objective-C library and the apps built on it
  /// report gRPC errors).
  public static var errorDomain: String { "io.grpc" }

  /// The status code's number, so `(error as NSError).code` is the wire value.
  public var errorCode: Int { code.rawValue }

  /// `NSLocalizedDescriptionKey`: ``description``; `NSUnderlyingErrorKey`: ``cause``, when
  /// there is one; `NSLocalizedRecoverySuggestionErrorKey`: the `recoverySuggestion` of a
  /// `LocalizedError` conformance, when a module above gives `RPCError` one (advice depends on
  /// what the calls are for, so the transport has none of its own).
  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [NSLocalizedDescriptionKey: description]
    if let cause { info[NSUnderlyingErrorKey] = cause as NSError }
    // Foundation on Linux reads only errorUserInfo once a type is CustomNSError, not a
    // LocalizedError conformance beside it; so the suggestion is copied in here.
    if let suggestion = (self as any Error as? any LocalizedError)?.recoverySuggestion {
      info[NSLocalizedRecoverySuggestionErrorKey] = suggestion
    }
    return info
  }
}
