/// The life of one client connection as a value: idle; connecting over TCP to each address
/// in turn; through a proxy, the CONNECT exchange that opens the tunnel; the TLS handshake; waiting for the server's SETTINGS; ready (going away once the
/// server sent GOAWAY); closed with the error that ended it. ``ClientConnection`` does the
/// I/O each answer asks for; this decides what comes next.
///
/// Events a state does not expect are documented no-ops (`ignore`, or false): a timer, a
/// readiness report or a frame may race with the close that already happened.
struct ClientConnectionStateMachine {
  enum State {
    case idle
    /// TCP to `addresses[index]`, after `failures` (one per address already tried).
    case connecting(addresses: [SocketAddress], index: Int, failures: [String])
    /// Asking the proxy (connected over TCP) for a tunnel to the target.
    case tunnelling
    case handshaking
    case awaitingSettings
    case ready
    case closed(RPCError)
  }

  /// What to do next while connecting.
  enum OnConnecting {
    /// Open a socket to this address and connect it.
    case attempt(SocketAddress)
    /// Every address failed: close with this error.
    case fail(RPCError)
    /// Not connecting (closed meanwhile, say).
    case ignore
  }

  /// What to do once TCP is up.
  enum OnConnected: Equatable {
    /// Ask the proxy for a tunnel (CONNECT).
    case tunnel
    /// Start the TLS handshake.
    case handshake
    /// Start the HTTP/2 session: our preface and SETTINGS.
    case startSession
    case ignore
  }

  private(set) var state = State.idle
  /// The server sent GOAWAY: no new calls; the connection closes once its last stream is done.
  private(set) var goingAway = false
  /// The server's SETTINGS arrived once: the connection was ready at some point.
  private(set) var becameReady = false

  /// Ready and not going away: new calls may start here.
  var isReady: Bool {
    if case .ready = state { return !goingAway }
    return false
  }

  var isClosed: Bool {
    if case .closed = state { return true }
    return false
  }

  /// Where a connection attempt stands, for the error that says it timed out.
  var connectPhase: String {
    switch state {
    case .idle, .connecting: "no TCP connection"
    case .tunnelling: "the proxy opened no tunnel"
    case .handshaking: "TLS handshake unfinished"
    case .awaitingSettings: "the server sent no HTTP/2 SETTINGS"
    case .ready, .closed: "done"
    }
  }

  /// Connect to the first of `addresses` that accepts; `target` names the destination in the
  /// error when none does.
  mutating func connect(to addresses: [SocketAddress], target: String) -> OnConnecting {
    guard case .idle = state else { return .ignore }
    state = .connecting(addresses: addresses, index: 0, failures: [])
    return next(target: target)
  }

  /// The attempt on the current address failed for `reason`: try the next one.
  mutating func attemptFailed(_ reason: String, target: String) -> OnConnecting {
    guard case .connecting(let addresses, let index, var failures) = state else { return .ignore }
    failures.append("\(addresses[index]): \(reason)")
    state = .connecting(addresses: addresses, index: index + 1, failures: failures)
    return next(target: target)
  }

  private func next(target: String) -> OnConnecting {
    guard case .connecting(let addresses, let index, let failures) = state else { return .ignore }
    guard index < addresses.count else {
      return .fail(
        RPCError(
          code: .unavailable,
          message: "cannot connect to \(target): " + failures.joined(separator: "; ")))
    }
    return .attempt(addresses[index])
  }

  /// TCP connected; `tunnel` says whether a proxy's tunnel, `tls` whether a handshake
  /// comes first.
  mutating func tcpConnected(tls: Bool, tunnel: Bool = false) -> OnConnected {
    guard case .connecting = state else { return .ignore }
    if tunnel {
      state = .tunnelling
      return .tunnel
    }
    if tls {
      state = .handshaking
      return .handshake
    }
    return .startSession
  }

  /// The proxy opened the tunnel: TLS (when `tls`) or HTTP/2 to the target through it.
  mutating func tunnelEstablished(tls: Bool) -> OnConnected {
    guard case .tunnelling = state else { return .ignore }
    if tls {
      state = .handshaking
      return .handshake
    }
    return .startSession
  }

  /// The TLS handshake is done.
  mutating func handshakeDone() -> OnConnected {
    guard case .handshaking = state else { return .ignore }
    return .startSession
  }

  /// Our preface and SETTINGS are queued: wait for the server's.
  mutating func sessionStarted() {
    switch state {
    case .connecting, .tunnelling, .handshaking: state = .awaitingSettings
    case .idle, .awaitingSettings, .ready, .closed: break
    }
  }

  /// The server's SETTINGS arrived; true when they make the connection ready (the first).
  mutating func settingsReceived() -> Bool {
    guard case .awaitingSettings = state else { return false }
    state = .ready
    becameReady = true
    return true
  }

  /// The server sent GOAWAY; true for the first.
  mutating func goAwayReceived() -> Bool {
    guard !goingAway, !isClosed else { return false }
    goingAway = true
    return true
  }

  /// How a close went.
  enum OnClose {
    /// The connection had been ready (or going away): calls on it are interrupted.
    case lost
    /// It never got ready: a failed attempt.
    case attemptFailed
    /// It was closed already.
    case ignore
  }

  /// The connection closes with `error`.
  mutating func close(_ error: RPCError) -> OnClose {
    if case .closed = state { return .ignore }
    let wasReady = isReady || goingAway
    state = .closed(error)
    return wasReady ? .lost : .attemptFailed
  }
}
