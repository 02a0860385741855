import Foundation

/// Reading `/proc` files whole.
public enum ProcFile {
  /// The file at `path` read to its end, or nil if it cannot be opened.
  ///
  /// `/proc` files say they are 0 bytes long, and `String(contentsOfFile:)` stops after the
  /// first page (4,096 bytes): `/proc/net/tcp` holds every socket of the machine's network
  /// namespace, many pages when other tests or programs have connections open.
  public static func read(_ path: String) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    var data = Data()
    while let chunk = try? handle.read(upToCount: 64 << 10), !chunk.isEmpty {
      data.append(chunk)
    }
    return String(decoding: data, as: UTF8.self)
  }
}
