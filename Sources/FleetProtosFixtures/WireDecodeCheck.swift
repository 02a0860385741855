@_spi(GeneratedCode) public import ProtoRuntime

/// The differential check of the decode straight from the wire against protobuf-c's unpack
/// with the bridge (`decodeThroughC`), the codec of record, for the fuzz target and the tests
/// that read its corpora: not part of the library's API.
public enum WireDecodeCheck {
  /// What one input showed.
  public struct Verdict: Sendable {
    /// The straight decode (`init(wireBytes:strings:)`) succeeded without handing the input
    /// to protobuf-c.
    public var straight: Bool
    /// protobuf-c accepted the input.
    public var accepted: Bool
    /// What disagreed, nil when nothing did.
    public var problem: String?
  }

  /// Decodes `bytes` as an `M` three ways: straight from the wire, through protobuf-c, and
  /// through the public decode. A straight decode that succeeds must give protobuf-c's value
  /// (and protobuf-c must accept the bytes); the public decode must give protobuf-c's value or
  /// its error, exactly. Values are compared with ==, or by their encodings when a NaN makes
  /// == false.
  public static func check<M: CBridgedMessage>(_: M.Type, _ bytes: UnsafeRawBufferPointer)
    -> Verdict
  {
    let reference = Result { () throws(ProtoDecodingError) in try M.decodeThroughC(bytes) }
    var strings = ProtoDecodeStrings()
    let straight = Result { () throws(ProtoDecodingError) in
      try M(wireBytes: bytes, strings: &strings)
    }
    let viaPublicInit = Result { () throws(ProtoDecodingError) in try M(serializedBytes: bytes) }
    var verdict = Verdict(straight: false, accepted: false, problem: nil)
    let name = M.protoMessageName
    switch (straight, reference) {
    case (.success(let ours), .success(let theirs)):
      verdict.straight = true
      if !same(ours, theirs) { verdict.problem = "\(name): the straight decode differs" }
    case (.success, .failure(let error)):
      verdict.straight = true
      verdict.problem = "\(name): decoded straight what protobuf-c refuses (\(error))"
    case (.failure, _): break
    }
    switch (viaPublicInit, reference) {
    case (.success(let ours), .success(let theirs)):
      verdict.accepted = true
      if !same(ours, theirs) { verdict.problem = "\(name): the public decode differs" }
    case (.failure(let ours), .failure(let theirs)):
      if ours != theirs { verdict.problem = "\(name): errors differ: \(ours) vs \(theirs)" }
    case (.success, .failure(let error)):
      verdict.problem = "\(name): the public decode accepts what protobuf-c refuses (\(error))"
    case (.failure(let error), .success):
      verdict.problem = "\(name): the public decode refuses what protobuf-c accepts (\(error))"
    }
    return verdict
  }

  /// `check` of the bytes of an array.
  public static func check<M: CBridgedMessage>(_ type: M.Type, _ bytes: [UInt8]) -> Verdict {
    bytes.withUnsafeBytes { check(type, $0) }
  }

  private static func same<M: ProtoMessage>(_ a: M, _ b: M) -> Bool {
    a == b || a.serializedBytes() == b.serializedBytes()
  }
}
