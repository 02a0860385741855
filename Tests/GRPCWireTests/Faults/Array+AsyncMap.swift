extension Array {
  /// `transform` applied to each element in turn, awaiting each: how a test collects the
  /// outcomes of the calls it started as tasks.
  func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
    var results: [T] = []
    for element in self { results.append(try await transform(element)) }
    return results
  }
}
