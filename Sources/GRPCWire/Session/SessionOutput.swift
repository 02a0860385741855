internal import CNGHTTP2

/// What nghttp2 wants to send, on its way to the socket: both roles' connections drain the
/// session into this buffer and write it through their transport, many frames per write.
///
/// Loop-only, owned by one connection.
struct SessionOutput {
  /// How a flush ended.
  enum Outcome {
    /// Everything nghttp2 had is written.
    case drained
    /// The socket is full: wait for the readiness said.
    case wouldBlock(wantWrite: Bool)
    /// The peer closed the connection.
    case closed
    /// Writing failed; the reason names why.
    case writeFailed(String)
    /// nghttp2 failed to produce frames (an nghttp2 error code).
    case sessionFailed(Int32)

    var isDrained: Bool {
      switch self {
      case .drained: true
      case .wouldBlock, .closed, .writeFailed, .sessionFailed: false
      }
    }
  }

  private var bytes: [UInt8] = []
  private var offset = 0
  /// Bytes of the last fill that found something to send: the next one reserves as much.
  private var lastFill = 0

  /// The most capacity kept between fills: a busy tick of small frames.
  static let keptCapacity = 64 << 10

  /// Moves what `session` wants to send into the buffer (up to 1 MiB at a time) and writes it
  /// through `transport`, until nghttp2 has nothing more or the socket is full.
  mutating func flush(_ session: OpaquePointer, through transport: any ByteTransport) -> Outcome {
    while true {
      if offset == bytes.count {
        // All sent. A larger buffer goes now rather than staying at its high-water mark: a
        // burst (thousands of calls starting at once) grows it to hundreds of KiB, and a
        // connection left carrying only quiet long-lived streams would keep that for hours.
        // Steady bulk writes lose nothing: each fill reserves what the last one held.
        if bytes.capacity > Self.keptCapacity {
          bytes = []
        } else {
          bytes.removeAll(keepingCapacity: true)
        }
        offset = 0
        while bytes.count < 1 << 20 {
          var chunk: UnsafePointer<UInt8>? = nil
          let length = nghttp2_session_mem_send(session, &chunk)
          if length < 0 { return .sessionFailed(Int32(length)) }
          if length == 0 { break }
          if bytes.isEmpty && bytes.capacity < lastFill { bytes.reserveCapacity(lastFill) }
          bytes.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
        }
        if bytes.isEmpty { return .drained }
        lastFill = bytes.count
      }
      let result = bytes.withUnsafeBytes { raw in
        transport.write(UnsafeRawBufferPointer(rebasing: raw[offset...]))
      }
      switch result {
      case .bytes(let written): offset += written
      case .wouldBlock(let wantWrite): return .wouldBlock(wantWrite: wantWrite)
      case .closed: return .closed
      case .failed(let reason): return .writeFailed(reason)
      }
    }
  }
}
