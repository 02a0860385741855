public import CoreMetrics
internal import FleetSync
internal import Hummingbird

/// What makes a fleet-share instance one replica among several behind a balancer: its name,
/// health (`GET /healthz`), readiness (`GET /readyz`), the drain on SIGTERM, and its metrics
/// (`GET /metrics`).
///
/// - `/healthz` is 200 while the process serves. `/readyz` is 200, and 503 once
///   ``drain(retryAfterMilliseconds:)`` started.
/// - Draining refuses new viewers (page, snapshot, events) with 503, so that a balancer
///   retries them on another instance, and ends every open event stream with a `retry:` hint,
///   so that the browser reconnects through the balancer.
/// - Metrics, through swift-metrics with the dimension `instance_name`:
///   `fleet_share_trips_followed` (a gauge: trips this instance follows now),
///   `fleet_share_viewers` (a gauge: open event streams and pages being served),
///   `fleet_share_events_sent_total` and `fleet_share_links_created_total` (counters). The
///   two gauges are set when `/metrics` is read; `exposition` writes whatever the metrics
///   backend holds (Prometheus' text format in fleet-share).
public final class ShareReplica: Sendable {
  private let state = PosixMutex(State())
  private let factory: any MetricsFactory
  private let exposition: (@Sendable () -> [UInt8])?

  /// The metrics, made when the instance is named.
  private struct Metrics {
    let tripsFollowed: Gauge
    let viewers: Gauge
    let eventsSent: Counter
    let linksCreated: Counter

    init(_ name: String, _ factory: any MetricsFactory) {
      let dimensions = [("instance_name", name)]
      tripsFollowed = Gauge(label: "fleet_share_trips_followed", dimensions: dimensions, factory: factory)
      viewers = Gauge(label: "fleet_share_viewers", dimensions: dimensions, factory: factory)
      eventsSent = Counter(label: "fleet_share_events_sent_total", dimensions: dimensions, factory: factory)
      linksCreated = Counter(label: "fleet_share_links_created_total", dimensions: dimensions, factory: factory)
    }
  }

  private struct State {
    var name: String?
    var metrics: Metrics?
    var draining = false
    var pages = 0
    var nextStream: UInt64 = 0
    var streams: [UInt64: AsyncStream<ByteBuffer>.Continuation] = [:]
  }

  /// A replica whose metrics go to `factory`; `exposition`, when given, is served at
  /// `/metrics` as Prometheus' text format. Named now, or later by ``name(_:)`` (a name may
  /// wait for the port the OS picks); nothing is counted before.
  public init(
    instanceName: String? = nil, metricsFactory factory: any MetricsFactory = MetricsSystem.factory,
    exposition: (@Sendable () -> [UInt8])? = nil
  ) {
    self.factory = factory
    self.exposition = exposition
    if let instanceName { name(instanceName) }
  }

  /// Names the instance, once: the `instance_name` of its metrics.
  public func name(_ instanceName: String) {
    let factory = self.factory
    state.withLock { state in
      guard state.name == nil else { return }
      state.name = instanceName
      state.metrics = Metrics(instanceName, factory)
    }
  }

  /// The instance's name, in its logs and metrics (nil until named).
  public var instanceName: String? { state.withLock { $0.name } }

  /// Whether the drain has started.
  public var isDraining: Bool { state.withLock { $0.draining } }

  /// Open event streams now.
  public var openStreams: Int { state.withLock { $0.streams.count } }

  /// Adds `/healthz`, `/readyz` and (with an exposition) `/metrics` to `router`;
  /// `followedTrips` tells how many trips are followed now.
  func addRoutes(to router: Router<BasicRequestContext>, followedTrips: @escaping @Sendable () -> Int) {
    router.get("healthz") { _, _ in ShareServer.plain(.ok, "serving") }
    router.get("readyz") { _, _ in
      self.isDraining ? ShareServer.plain(.serviceUnavailable, "draining") : ShareServer.plain(.ok, "ready")
    }
    guard let exposition else { return }
    router.get("metrics") { _, _ -> Response in
      let (open, metrics) = self.state.withLock { ($0.streams.count + $0.pages, $0.metrics) }
      metrics?.viewers.record(open)
      metrics?.tripsFollowed.record(followedTrips())
      return Response(
        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: exposition())))
    }
  }

  /// Counts a page being served while `body` runs.
  func servingPage<T>(_ body: () async -> T) async -> T {
    state.withLock { $0.pages += 1 }
    defer { state.withLock { $0.pages -= 1 } }
    return await body()
  }

  /// Registers an event stream, to be ended by the drain; nil (and the stream ended with the
  /// retry hint) when the drain has started.
  func opened(_ stream: AsyncStream<ByteBuffer>.Continuation) -> UInt64? {
    let id = state.withLock { state -> UInt64? in
      guard !state.draining else { return nil }
      state.nextStream += 1
      state.streams[state.nextStream] = stream
      return state.nextStream
    }
    if id == nil { Self.end(stream, retryAfterMilliseconds: 500) }
    return id
  }

  func closed(_ id: UInt64) {
    _ = state.withLock { $0.streams.removeValue(forKey: id) }
  }

  func sentEvent() { state.withLock { $0.metrics }?.eventsSent.increment() }
  func createdLink() { state.withLock { $0.metrics }?.linksCreated.increment() }

  /// Starts the drain: `/readyz` turns 503, new viewers are refused, and every open event
  /// stream gets `retry: <retryAfterMilliseconds>` and ends. Returns how many streams it
  /// ended.
  @discardableResult
  public func drain(retryAfterMilliseconds: Int = 500) -> Int {
    let streams = state.withLock { state -> [AsyncStream<ByteBuffer>.Continuation] in
      state.draining = true
      defer { state.streams = [:] }
      return Array(state.streams.values)
    }
    for stream in streams { Self.end(stream, retryAfterMilliseconds: retryAfterMilliseconds) }
    return streams.count
  }

  private static func end(_ stream: AsyncStream<ByteBuffer>.Continuation, retryAfterMilliseconds: Int) {
    stream.yield(ByteBuffer(string: "retry: \(retryAfterMilliseconds)\n\n"))
    stream.finish()
  }
}
