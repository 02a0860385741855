/// The life of one accepted server connection as a value: the TLS handshake (with TLS); the
/// client's preface and SETTINGS, within the handshake timeout; serving; draining after our
/// GOAWAY, when the server shuts down or the connection is idle or old; closed.
/// ``ServerConnection`` does the I/O each answer asks for; this decides what comes next.
///
/// Events a state does not expect are documented no-ops (false, or `nothing`): timers and
/// frames race with the close that already happened.
struct ServerConnectionStateMachine {
  enum State: Equatable {
    case handshaking
    /// Our SETTINGS are queued; the client's preface and SETTINGS are awaited.
    case awaitingSettings
    case serving
    /// Our GOAWAY is queued: no new streams; the connection closes once the last call has
    /// ended and the GOAWAY naming the last stream has been written.
    case draining(Drain)
    case closed
  }

  /// How far a drain is (RFC 9113 §6.8: a notice, then the GOAWAY naming the last stream).
  enum Drain: Equatable {
    /// The notice (last stream 2^31-1) is queued: requests already on their way are still
    /// taken, so the connection stays open however few calls it has.
    case noticeQueued
    /// The final GOAWAY, naming the last stream taken, is queued: once no call is open the
    /// connection closes, as soon as that GOAWAY is written.
    case lastStreamAnnounced
  }

  /// What to do when the last open call has ended.
  enum OnLastCallEnded: Equatable {
    /// The server is shutting down: end the connection (final GOAWAY, close once written).
    case close
    /// Draining: close once our GOAWAY is written.
    case closeIfDrained
    /// Serving on: the idle timer may start.
    case idle
  }

  private(set) var state: State
  /// The server is shutting down: the connection closes once its last call has ended.
  private(set) var shuttingDown = false
  /// A final GOAWAY is queued (the client PINGed too often, or a drain is done): close once
  /// it is written.
  private(set) var closesWhenFlushed = false

  /// A connection just accepted; `tls` when a TLS handshake comes first.
  init(tls: Bool) {
    state = tls ? .handshaking : .awaitingSettings
  }

  var isHandshaking: Bool { state == .handshaking }
  var isDraining: Bool {
    if case .draining = state { return true }
    return false
  }
  var isClosed: Bool { state == .closed }

  /// The TLS handshake is done: start the session (true), unless it is no longer awaited.
  mutating func handshakeDone() -> Bool {
    guard state == .handshaking else { return false }
    state = .awaitingSettings
    return true
  }

  /// The client's SETTINGS arrived; true for the first while awaited (not after our GOAWAY).
  @discardableResult
  mutating func settingsReceived() -> Bool {
    guard state == .awaitingSettings else { return false }
    state = .serving
    return true
  }

  /// Our GOAWAY is to go out (idle, too old, shutting down); true when it should, once.
  /// Before the session started there is no HTTP/2 to say it in.
  mutating func beginDraining() -> Bool {
    switch state {
    case .awaitingSettings, .serving:
      state = .draining(.noticeQueued)
      return true
    case .handshaking, .draining, .closed:
      return false
    }
  }

  /// The server shuts down: true when the connection should drain (calls are open); with
  /// none it should close now.
  mutating func serverShuttingDown(openCalls: Int) -> Bool {
    shuttingDown = true
    return openCalls > 0
  }

  /// The last open call ended.
  func lastCallEnded() -> OnLastCallEnded {
    if shuttingDown { return .close }
    return isDraining ? .closeIfDrained : .idle
  }

  /// The GOAWAY naming the last stream is queued, after the notice.
  mutating func lastStreamAnnounced() {
    if state == .draining(.noticeQueued) { state = .draining(.lastStreamAnnounced) }
  }

  /// Whether a draining connection with `openCalls` calls is done: the last stream announced
  /// and no call open. Then it closes once everything queued is written
  /// (``flushed(sessionOver:)``), not before: a full socket takes the final GOAWAY later.
  mutating func drained(openCalls: Int) -> Bool {
    guard state == .draining(.lastStreamAnnounced), openCalls == 0 else { return false }
    closesWhenFlushed = true
    return true
  }

  /// A final GOAWAY is queued: close once it is written.
  mutating func finalGoAwayQueued() {
    if state != .closed { closesWhenFlushed = true }
  }

  /// Everything queued is written: true when the connection should close now (a final
  /// GOAWAY went, or nghttp2 wants no more I/O: `sessionOver`).
  func flushed(sessionOver: Bool) -> Bool {
    state != .closed && (closesWhenFlushed || sessionOver)
  }

  /// The socket closes; false when it was closed already.
  mutating func close() -> Bool {
    guard state != .closed else { return false }
    state = .closed
    return true
  }
}
