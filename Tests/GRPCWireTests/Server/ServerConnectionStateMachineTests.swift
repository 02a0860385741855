import Testing

@testable import GRPCWire

/// The server connection's state machine, state by state: each state (handshaking, awaiting
/// the client's SETTINGS, serving, draining before and after the last stream is announced,
/// closed), reached through events only, meets every event; each test says what the machine
/// answers and where it is left.
@Suite("Server connection state machine, state by state")
struct ServerConnectionStateMachineTests {
  typealias Machine = ServerConnectionStateMachine

  enum Start: String, CaseIterable, CustomTestStringConvertible {
    case handshaking, awaitingSettings, serving, draining, lastStreamAnnounced, closed
    var testDescription: String { rawValue }
    var isDraining: Bool { self == .draining || self == .lastStreamAnnounced }

    func machine() -> Machine {
      var machine = Machine(tls: true)
      switch self {
      case .handshaking:
        break
      case .awaitingSettings:
        _ = machine.handshakeDone()
      case .serving:
        _ = machine.handshakeDone()
        machine.settingsReceived()
      case .draining:
        _ = machine.handshakeDone()
        machine.settingsReceived()
        _ = machine.beginDraining()
      case .lastStreamAnnounced:
        _ = machine.handshakeDone()
        machine.settingsReceived()
        _ = machine.beginDraining()
        machine.lastStreamAnnounced()
      case .closed:
        _ = machine.close()
      }
      return machine
    }

    var state: Machine.State {
      switch self {
      case .handshaking: .handshaking
      case .awaitingSettings: .awaitingSettings
      case .serving: .serving
      case .draining: .draining(.noticeQueued)
      case .lastStreamAnnounced: .draining(.lastStreamAnnounced)
      case .closed: .closed
      }
    }
  }

  @Test("each state is reached as its name says", arguments: Start.allCases)
  func reached(_ start: Start) {
    let machine = start.machine()
    #expect(machine.state == start.state)
    #expect(machine.isHandshaking == (start == .handshaking))
    #expect(machine.isDraining == start.isDraining)
    #expect(machine.isClosed == (start == .closed))
    #expect(!machine.shuttingDown && !machine.closesWhenFlushed)
  }

  @Test("without TLS the connection starts awaiting the client's SETTINGS")
  func plain() {
    #expect(Machine(tls: false).state == .awaitingSettings)
  }

  @Test("the handshake ends once, and only while handshaking", arguments: Start.allCases)
  func handshakeDone(_ start: Start) {
    var machine = start.machine()
    let started = machine.handshakeDone()
    #expect(started == (start == .handshaking))
    #expect(machine.state == (start == .handshaking ? .awaitingSettings : start.state))
  }

  @Test("the client's SETTINGS start serving only while awaited", arguments: Start.allCases)
  func settings(_ start: Start) {
    var machine = start.machine()
    let serving = machine.settingsReceived()
    #expect(serving == (start == .awaitingSettings))
    #expect(machine.state == (start == .awaitingSettings ? .serving : start.state))
  }

  @Test("GOAWAY goes once, and only once the session has started", arguments: Start.allCases)
  func drain(_ start: Start) {
    var machine = start.machine()
    let drains = machine.beginDraining()
    #expect(drains == (start == .awaitingSettings || start == .serving))
    #expect(machine.state == (drains ? .draining(.noticeQueued) : start.state))
    let again = machine.beginDraining()
    #expect(!again)
  }

  @Test("the last call ending: closes when shutting down, when draining; else the idle timer")
  func lastCall() {
    #expect(Start.serving.machine().lastCallEnded() == .idle)
    #expect(Start.draining.machine().lastCallEnded() == .closeIfDrained)
    #expect(Start.lastStreamAnnounced.machine().lastCallEnded() == .closeIfDrained)
    var shutting = Start.serving.machine()
    let drains = shutting.serverShuttingDown(openCalls: 3)
    #expect(drains)
    _ = shutting.beginDraining()
    #expect(shutting.lastCallEnded() == .close)
  }

  @Test("the server shutting down: drain with calls open, close now with none", arguments: Start.allCases)
  func shutdown(_ start: Start) {
    var busy = start.machine()
    let drains = busy.serverShuttingDown(openCalls: 1)
    #expect(drains && busy.shuttingDown)
    var idle = start.machine()
    let idleDrains = idle.serverShuttingDown(openCalls: 0)
    #expect(!idleDrains && idle.shuttingDown)
  }

  @Test("a flush closes once a final GOAWAY is written, or when the session is over", arguments: Start.allCases)
  func flushed(_ start: Start) {
    var machine = start.machine()
    let open = start != .closed
    #expect(machine.flushed(sessionOver: false) == false)
    #expect(machine.flushed(sessionOver: true) == open)
    machine.finalGoAwayQueued()
    #expect(machine.closesWhenFlushed == open)
    #expect(machine.flushed(sessionOver: false) == open)
  }

  @Test("the last stream is announced only after the notice, once", arguments: Start.allCases)
  func lastStream(_ start: Start) {
    var machine = start.machine()
    machine.lastStreamAnnounced()
    let announced = start == .draining || start == .lastStreamAnnounced
    #expect(machine.state == (announced ? .draining(.lastStreamAnnounced) : start.state))
  }

  @Test(
    "drained only with the last stream announced and no call open; then it closes once flushed",
    arguments: Start.allCases)
  func drained(_ start: Start) {
    var busy = start.machine()
    let busyDrained = busy.drained(openCalls: 1)
    #expect(!busyDrained && !busy.closesWhenFlushed)
    var idle = start.machine()
    let drained = idle.drained(openCalls: 0)
    #expect(drained == (start == .lastStreamAnnounced))
    #expect(idle.closesWhenFlushed == drained)
    // A full socket: nothing closes until the flush that writes the final GOAWAY.
    #expect(idle.state == start.state)
    #expect(idle.flushed(sessionOver: false) == drained)
  }

  @Test("close: once, from any state; then every event is a no-op", arguments: Start.allCases)
  func close(_ start: Start) {
    var machine = start.machine()
    let closed = machine.close()
    #expect(closed == (start != .closed))
    #expect(machine.state == .closed)
    let again = machine.close()
    let handshake = machine.handshakeDone()
    let settings = machine.settingsReceived()
    let drains = machine.beginDraining()
    machine.lastStreamAnnounced()
    let drained = machine.drained(openCalls: 0)
    #expect(!again && !handshake && !settings && !drains && !drained)
    #expect(machine.state == .closed)
  }
}
