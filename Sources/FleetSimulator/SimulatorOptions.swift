public import FleetProtos
public import GRPCWire
public import Logging

/// How a ``FleetSimulator`` behaves: the speed of simulated time and vehicles, the shape of
/// generated trips, token checks and injected faults.
///
/// Durations of the trip timeline (``newDuration``, ``pickupWait``, …) are simulated time;
/// ``feedInterval`` and everything in ``faults`` are real time. With the defaults a trip
/// takes about 15 simulated minutes — 15 real seconds at ``timeScale`` 60, of which it is NEW
/// for the first 2 and waits at the pickup for 2, long enough for a follower polling every
/// second to see every status.
public struct SimulatorOptions: Sendable {
  /// How much faster than real time the simulation runs: at 60 a simulated minute passes in
  /// one real second. Timestamps in responses (ETAs, versions, location times) are real
  /// wall-clock times, so they agree with the follower's clock; distances and speeds are the
  /// simulated ones.
  public var timeScale: Double = 60
  /// The vehicles' driving speed in km/h (simulated).
  public var speedKilometersPerHour: Double = 30
  /// How long a trip stays NEW before its vehicle sets off (simulated).
  public var newDuration: Duration = .seconds(120)
  /// How long the vehicle waits at the pickup (simulated).
  public var pickupWait: Duration = .seconds(120)
  /// How long the vehicle waits at each intermediate destination (simulated).
  public var intermediateWait: Duration = .seconds(60)
  /// How far, in metres as the crow flies, a trip's vehicle starts from the pickup.
  public var vehicleStartDistance: ClosedRange<Double> = 1_000...2_000
  /// How far, in metres as the crow flies, a generated drop-off is from the pickup (used when
  /// CreateTrip gives no drop-off).
  public var dropoffDistance: ClosedRange<Double> = 2_000...3_500
  /// Where generated pickups are placed, within ``cityRadius`` metres (default: Berlin).
  public var cityCenter: GoogleType.LatLng = {
    var center = GoogleType.LatLng()
    center.latitude = 52.5200
    center.longitude = 13.4050
    return center
  }()
  /// The radius around ``cityCenter`` for generated pickups, in metres.
  public var cityRadius: Double = 2_000
  /// How long the traffic on a route stays the same before it is drawn again (simulated).
  public var trafficPeriod: Duration = .seconds(120)
  /// How often a `WatchTrip` stream sends the moving vehicle's position (real time); status
  /// changes are sent as they happen.
  public var feedInterval: Duration = .milliseconds(500)
  /// Which bearer tokens calls must carry.
  public var tokenPolicy: TokenPolicy = .anyBearerToken
  /// Errors, latency and GOAWAYs to inject.
  public var faults = FaultOptions()
  /// Seeds generated trips and injected faults: the same seed and trip names give the same
  /// routes and traffic.
  public var seed: UInt64 = 1
  /// When set (real time), the simulated world moves in steps of this length and holds still
  /// in between, so two observers that each look more often than once a step — a poller and
  /// a stream, say — see exactly the same sequence of states. nil: continuous time.
  public var clockStep: Duration? = nil
  /// When set (simulated time since a trip's creation), every trip holds still at that moment
  /// of its timeline: each call sees the same state, and so an answer of the same size — a
  /// fixed trip for benchmarks. 180 s with the defaults: ENROUTE_TO_PICKUP, halfway to the
  /// pickup. nil: trips move.
  public var frozenAt: Duration? = nil
  /// Serve TLS with this PEM certificate chain and private key; nil: plaintext.
  public var tls: (certificateChainFile: String, privateKeyFile: String)?
  /// Interceptors of every call the simulator serves (``ServerOptions/interceptors``):
  /// metrics, tracing, logging of your own.
  public var interceptors: [any ServerInterceptor] = []
  /// Where the simulator's server logs (``ServerOptions/logger``); the default discards all.
  public var logger = Logger.disabled
  /// The event-loop threads its server spreads client connections over
  /// (``ServerOptions/eventLoops``); at least 1, the default.
  public var eventLoops = 1
  /// SETTINGS_MAX_CONCURRENT_STREAMS its server announces to each client connection
  /// (``ServerOptions/maxConcurrentStreams``): 1,000 by default; Google's front ends, Fleet
  /// Engine's among them, announce 100. At least 1.
  public var maxConcurrentStreams = 1_000

  /// The defaults: 60× real time, 30 km/h, any bearer token, no faults.
  public init() {}

  /// Why these options cannot be used, or nil when they can.
  public var problem: String? {
    if !(timeScale > 0 && timeScale.isFinite) { return "the time scale must be positive" }
    if eventLoops < 1 { return "the server needs at least 1 event loop, not \(eventLoops)" }
    if maxConcurrentStreams < 1 {
      return "the server must allow at least 1 stream per connection, not \(maxConcurrentStreams)"
    }
    if !(speedKilometersPerHour > 0 && speedKilometersPerHour.isFinite) {
      return "the speed must be positive"
    }
    for (name, duration) in [
      ("the NEW duration", newDuration), ("the pickup wait", pickupWait),
      ("the intermediate wait", intermediateWait),
    ] where duration < .zero {
      return "\(name) must not be negative"
    }
    if trafficPeriod <= .zero { return "the traffic period must be positive" }
    if feedInterval <= .zero { return "the feed interval must be positive" }
    if let clockStep, clockStep <= .zero { return "the clock step must be positive" }
    if let frozenAt, frozenAt < .zero { return "the frozen moment must not be negative" }
    if vehicleStartDistance.lowerBound < 0 || dropoffDistance.lowerBound < 0 || cityRadius < 0 {
      return "distances must not be negative"
    }
    if !GeoPoint(cityCenter).isValid { return "the city centre is not a valid position" }
    return faults.problem
  }
}

extension Duration {
  /// The duration in (fractional) seconds.
  var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}
