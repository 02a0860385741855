/// Why a ``FleetSimulator`` could not start or do what it was asked in process.
public enum SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The options cannot be used; the text says which and why.
  case invalidOptions(String)
  /// The address could not be bound (in use, not an address of this machine, …).
  case cannotListen(host: String, port: Int, reason: String)
  /// A trip could not be created: a bad provider or trip ID, or a name already taken.
  case invalidTrip(String)

  /// The reason, for a person.
  public var description: String {
    switch self {
    case .invalidOptions(let why): "invalid simulator options: \(why)"
    case .cannotListen(let host, let port, let reason):
      "the simulator cannot listen on \(host):\(port): \(reason)"
    case .invalidTrip(let why): "cannot create the trip: \(why)"
    }
  }
}
