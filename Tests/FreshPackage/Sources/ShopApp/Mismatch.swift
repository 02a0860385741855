/// A message that is not what the side receiving it expected.
struct Mismatch: Error, CustomStringConvertible {
  var description: String

  /// Throws unless `received` is `expected`, naming `what` and both values.
  static func check<M: Equatable>(
    _ what: String, _ received: M, _ expected: M
  ) throws(Mismatch) {
    guard received != expected else { return }
    throw Mismatch(description: "\(what): received \(received), expected \(expected)")
  }
}
