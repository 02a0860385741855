internal import ProtoRuntime

/// The `.proto` files a reflection service serves, found by file name, by a symbol they
/// declare, and by the extensions they declare; built once, read by every call.
struct DescriptorIndex: Sendable {
  private struct File: Sendable {
    var bytes: [UInt8]
    var dependencies: [String]
  }

  private struct ExtensionKey: Hashable, Sendable {
    var extendee: String
    var number: Int32
  }

  private var files: [String: File] = [:]
  private var fileOfSymbol: [String: String] = [:]
  private var fileOfExtension: [ExtensionKey: String] = [:]
  private var extensionNumbers: [String: [Int32]] = [:]

  /// Decodes every file's descriptor now, once (a few hundred kilobytes for all of the
  /// package's message modules).
  init(_ descriptors: [ProtoFileDescriptor]) {
    for descriptor in descriptors {
      files[descriptor.name] = File(
        bytes: descriptor.serializedBytes, dependencies: descriptor.dependencies)
      for symbol in descriptor.symbols { fileOfSymbol[symbol] = descriptor.name }
      for x in descriptor.extensions {
        fileOfExtension[ExtensionKey(extendee: x.extendee, number: x.number)] = descriptor.name
        extensionNumbers[x.extendee, default: []].append(x.number)
      }
    }
  }

  /// The name of the file that declares `symbol` (fully qualified; a leading dot is allowed).
  func file(declaring symbol: String) -> String? {
    fileOfSymbol[symbol.hasPrefix(".") ? String(symbol.dropFirst()) : symbol]
  }

  /// The name of the file that declares extension `number` of `extendee`.
  func file(extending extendee: String, number: Int32) -> String? {
    fileOfExtension[ExtensionKey(extendee: extendee, number: number)]
  }

  /// Whether `symbol` is declared by a file served. Every name counts, not only messages:
  /// the generated index does not say which kind each name is.
  func declares(_ symbol: String) -> Bool { file(declaring: symbol) != nil }

  /// The field numbers of the extensions of `extendee`, ascending.
  func extensionNumbers(of extendee: String) -> [Int32] {
    (extensionNumbers[extendee] ?? []).sorted()
  }

  /// The serialized descriptors of `name` and of every file it imports, directly or not, as
  /// reflection answers: `name` first and always, then its dependencies breadth first, each
  /// once and none already in `sent` (what this stream sent before, which the spec lets a
  /// server leave out; clients keep what they were sent). Adds what it returns to `sent`.
  /// Nil when `name` is not served.
  func descriptors(of name: String, sent: inout Set<String>) -> [[UInt8]]? {
    guard let file = files[name] else { return nil }
    var answer = [file.bytes]
    sent.insert(name)
    var queue = file.dependencies[...]
    var seen: Set<String> = [name]
    while let next = queue.popFirst() {
      guard seen.insert(next).inserted, let dependency = files[next] else { continue }
      queue.append(contentsOf: dependency.dependencies)
      if sent.insert(next).inserted { answer.append(dependency.bytes) }
    }
    return answer
  }
}
