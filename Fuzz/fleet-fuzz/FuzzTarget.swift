/// One libFuzzer target: a parser that takes a peer's bytes, what it must never do with them,
/// and the seed inputs its committed corpus (`Fuzz/Corpus/<name>/`) is written from.
struct FuzzTarget: Sendable {
  /// The name `scripts/fuzz` and `fleet-fuzz` take, and the corpus folder's name.
  let name: String
  /// One line for `--list`: what is fuzzed and which invariants are checked.
  let summary: String
  /// Named seed inputs, made with the package's own encoders; only built for `--write-seeds`.
  let seeds: @Sendable () -> [(name: String, bytes: [UInt8])]
  /// Runs one input. The bytes are libFuzzer's and valid only during the call; a broken
  /// invariant traps (see ``invariant(_:_:file:line:)``) so libFuzzer saves the input.
  let run: @Sendable (UnsafeRawBufferPointer) -> Void

  /// Every target, in the order `--list` shows them.
  static let all: [FuzzTarget] = [
    .deframer, .protoDecode, .statusDetails, .base64, .grpcTimeout, .percentDecode, .gzip,
    .sessionServer, .sessionServerMidCall, .sessionClient, .sessionClientMidCall,
  ]

  static func named(_ name: String) -> FuzzTarget? {
    all.first { $0.name == name }
  }
}

/// Traps with `what` when `condition` is false: for a fuzz target a broken invariant is a
/// crash, and libFuzzer writes the input that caused it to the artifact folder.
func invariant(
  _ condition: Bool, _ what: @autoclosure () -> String, file: StaticString = #fileID,
  line: UInt = #line
) {
  if !condition { fatalError("invariant broken: \(what())", file: file, line: line) }
}
