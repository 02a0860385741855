import Testing

@testable import GRPCWire

/// The client connection's state machine, state by state: each state (idle, connecting,
/// tunnelling through a proxy, handshaking, awaiting SETTINGS, ready, going away, closed),
/// reached through events only, meets every event; each test says what the machine answers
/// and where it is left.
@Suite("Client connection state machine, state by state")
struct ClientConnectionStateMachineTests {
  typealias Machine = ClientConnectionStateMachine

  static let first = SocketAddress(numericHost: "127.0.0.1", port: 1)!
  static let second = SocketAddress(numericHost: "::1", port: 2)!
  static let target = "example.test:443"
  static let error = RPCError(code: .unavailable, message: "gone")

  enum Start: String, CaseIterable, CustomTestStringConvertible {
    case idle, connecting, tunnelling, handshaking, awaitingSettings, ready, goingAway, closed
    var testDescription: String { rawValue }

    func machine() -> Machine {
      var machine = Machine()
      if self == .idle { return machine }
      _ = machine.connect(to: [first, second], target: target)
      if self == .connecting { return machine }
      if self == .closed {
        _ = machine.close(error)
        return machine
      }
      if self == .tunnelling {
        _ = machine.tcpConnected(tls: true, tunnel: true)
        return machine
      }
      _ = machine.tcpConnected(tls: true)
      if self == .handshaking { return machine }
      _ = machine.handshakeDone()
      machine.sessionStarted()
      if self == .awaitingSettings { return machine }
      _ = machine.settingsReceived()
      if self == .goingAway { _ = machine.goAwayReceived() }
      return machine
    }

    /// The name of the state this start is in.
    var name: String { ClientConnectionStateMachineTests.name(of: machine()) }
  }

  static func name(of machine: Machine) -> String {
    switch machine.state {
    case .idle: "idle"
    case .connecting: "connecting"
    case .tunnelling: "tunnelling"
    case .handshaking: "handshaking"
    case .awaitingSettings: "awaitingSettings"
    case .ready: "ready"
    case .closed: "closed"
    }
  }

  @Test("each state is reached as its name says, and answers the pool's questions", arguments: Start.allCases)
  func reached(_ start: Start) {
    let machine = start.machine()
    #expect(start.name == (start == .goingAway ? "ready" : start.rawValue))
    #expect(machine.isReady == (start == .ready))
    #expect(machine.isClosed == (start == .closed))
    #expect(machine.goingAway == (start == .goingAway))
    #expect(machine.becameReady == (start == .ready || start == .goingAway))
  }

  @Test("the connect timeout names the phase it stopped in", arguments: Start.allCases)
  func connectPhase(_ start: Start) {
    let expected =
      switch start {
      case .idle, .connecting: "no TCP connection"
      case .tunnelling: "the proxy opened no tunnel"
      case .handshaking: "TLS handshake unfinished"
      case .awaitingSettings: "the server sent no HTTP/2 SETTINGS"
      case .ready, .goingAway, .closed: "done"
      }
    #expect(start.machine().connectPhase == expected)
  }

  /// Records `comment` as a failure (returns nothing, for `return fail(…)` in a guard).
  func fail(_ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record(comment, sourceLocation: sourceLocation)
  }

  // MARK: Idle

  @Test("idle: connect attempts the first address; a second connect is ignored")
  func idleConnect() {
    var machine = Machine()
    guard case .attempt(let address) = machine.connect(to: [Self.first, Self.second], target: Self.target)
    else { return fail("no attempt") }
    #expect("\(address)" == "\(Self.first)")
    guard case .ignore = machine.connect(to: [Self.second], target: Self.target) else {
      return fail("connected twice")
    }
  }

  @Test("idle: no addresses at all fails at once, naming the target")
  func idleNoAddresses() {
    var machine = Machine()
    guard case .fail(let error) = machine.connect(to: [], target: Self.target) else {
      return fail("did not fail")
    }
    #expect(error.code == .unavailable)
    #expect(error.message.hasPrefix("cannot connect to \(Self.target)"))
  }

  // MARK: Connecting

  @Test("connecting: a failed address moves to the next; the last failure fails with every reason")
  func connectingFailures() {
    var machine = Start.connecting.machine()
    guard case .attempt(let next) = machine.attemptFailed("refused", target: Self.target) else {
      return fail("no second attempt")
    }
    #expect("\(next)" == "\(Self.second)")
    guard case .fail(let error) = machine.attemptFailed("unreachable", target: Self.target) else {
      return fail("did not fail after the last address")
    }
    #expect(error.message.contains("\(Self.first): refused"))
    #expect(error.message.contains("\(Self.second): unreachable"))
  }

  @Test("connecting: TCP up hands over to TLS or, without it, to the session")
  func connectingConnected() {
    var plain = Start.connecting.machine()
    let plainNext = plain.tcpConnected(tls: false)
    #expect(plainNext == .startSession)
    plain.sessionStarted()
    guard case .awaitingSettings = plain.state else { return fail("\(plain.state)") }
    var tls = Start.connecting.machine()
    let tlsNext = tls.tcpConnected(tls: true)
    #expect(tlsNext == .handshake)
    guard case .handshaking = tls.state else { return fail("\(tls.state)") }
  }

  // MARK: Tunnelling

  @Test("connecting through a proxy: TCP up asks for the tunnel; once open, TLS or the session")
  func tunnelling() {
    var machine = Start.connecting.machine()
    let connected = machine.tcpConnected(tls: true, tunnel: true)
    #expect(connected == .tunnel)
    guard case .tunnelling = machine.state else { return fail("\(machine.state)") }
    let tls = machine.tunnelEstablished(tls: true)
    #expect(tls == .handshake)
    guard case .handshaking = machine.state else { return fail("\(machine.state)") }

    var plain = Start.tunnelling.machine()
    let session = plain.tunnelEstablished(tls: false)
    #expect(session == .startSession)
    plain.sessionStarted()
    guard case .awaitingSettings = plain.state else { return fail("\(plain.state)") }
  }

  // MARK: Events a state does not expect

  @Test("events of another phase are ignored and leave the state as it was", arguments: Start.allCases)
  func unexpectedEvents(_ start: Start) {
    var machine = start.machine()
    if start != .connecting {
      guard case .ignore = machine.attemptFailed("late", target: Self.target) else {
        return fail("a late connect failure was taken")
      }
      let connected = machine.tcpConnected(tls: false)
      #expect(connected == .ignore)
    }
    // Our SETTINGS are queued only after TCP (and the tunnel, and TLS): elsewhere it changes
    // nothing.
    if ![.connecting, .tunnelling, .handshaking].contains(start) { machine.sessionStarted() }
    if start != .tunnelling {
      let tunnel = machine.tunnelEstablished(tls: true)
      #expect(tunnel == .ignore)
    }
    if start != .handshaking {
      let handshake = machine.handshakeDone()
      #expect(handshake == .ignore)
    }
    if start != .awaitingSettings {
      let readied = machine.settingsReceived()
      #expect(!readied)
    }
    if start != .idle {
      guard case .ignore = machine.connect(to: [Self.first], target: Self.target) else {
        return fail("connected again")
      }
    }
    #expect(Self.name(of: machine) == start.name)
    #expect(machine.goingAway == (start == .goingAway))
  }

  // MARK: Handshaking, awaiting SETTINGS

  @Test("handshaking: done starts the session; awaiting SETTINGS: they make it ready, once")
  func handshakeAndSettings() {
    var machine = Start.handshaking.machine()
    let handshake = machine.handshakeDone()
    #expect(handshake == .startSession)
    machine.sessionStarted()
    let readied = machine.settingsReceived()
    #expect(readied)
    #expect(machine.isReady && machine.becameReady)
    let again = machine.settingsReceived()
    #expect(!again)
  }

  // MARK: Ready, going away

  @Test("ready: the first GOAWAY makes it go away (no new calls), a second changes nothing")
  func readyGoAway() {
    var machine = Start.ready.machine()
    let first = machine.goAwayReceived()
    #expect(first)
    #expect(!machine.isReady && machine.goingAway)
    let second = machine.goAwayReceived()
    #expect(!second)
  }

  // MARK: Closing

  @Test(
    "close: a ready or going-away connection is lost, an earlier one a failed attempt; then closed",
    arguments: Start.allCases)
  func close(_ start: Start) {
    var machine = start.machine()
    let closing = machine.close(Self.error)
    switch start {
    case .ready, .goingAway: #expect(closing == .lost)
    case .idle, .connecting, .tunnelling, .handshaking, .awaitingSettings:
      #expect(closing == .attemptFailed)
    case .closed: #expect(closing == .ignore)
    }
    #expect(machine.isClosed && !machine.isReady)
    let goAway = machine.goAwayReceived()
    #expect(!goAway)
    let closedAgain = machine.close(Self.error)
    #expect(closedAgain == .ignore)
  }
}
