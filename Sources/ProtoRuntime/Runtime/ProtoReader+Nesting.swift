extension ProtoReader {
  /// Whether `bytes` nest length-delimited payloads that frame as messages more than `limit`
  /// levels deep (the message itself is level 1), found without recursion: an explicit stack
  /// of readers, one per open payload.
  ///
  /// Schema-less, so it runs before protobuf-c's unpack whatever made the straight decode
  /// throw first in wire order (an invalid UTF-8 string, a message field sent twice): every
  /// length-delimited payload is entered as if it were a message, and one that does not frame
  /// as a message (a string, bytes, a packed run) is stepped over as opaque data from where it
  /// fails, so each byte is read once. It counts every level, as Google's protobuf's recursion
  /// limit does, not only those of recursive types; a payload that is not a message counts
  /// only if its own bytes frame as messages nested that deep, which text and the values our
  /// tests decode never do.
  @_spi(GeneratedCode) public static func nests(
    _ bytes: UnsafeRawBufferPointer, deeperThan limit: Int
  ) -> Bool {
    var open = [ProtoReader(bytes)]
    while let last = open.indices.last {
      do throws(ProtoDecodingError) {
        guard let tag = try open[last].nextTag() else {
          open.removeLast()
          continue
        }
        guard tag.wireType == 2 else {
          _ = try open[last].skip(wireType: tag.wireType)
          continue
        }
        let payload = try open[last].lengthDelimited()
        guard open.count < limit else { return true }
        open.append(ProtoReader(payload))
      } catch {
        // Not a message: opaque data, already stepped over by the reader around it. The
        // outermost failing is protobuf-c's to refuse.
        open.removeLast()
      }
    }
    return false
  }
}
