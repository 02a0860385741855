internal import FleetConsumer
internal import FleetSigning
internal import FoundationEssentials
public import Hummingbird
internal import JourneySharing

/// fleet-share's HTTP side, on Hummingbird 2: share links made by an admin, and for each link
/// a live page, a snapshot and an event stream, all fed by one follow per trip
/// (``TripFanOut``).
///
/// - `POST /links` with `Authorization: Bearer <admin token>` and
///   `{"tripName": "providers/p/trips/t", "ttlSeconds": N}` → 201
///   `{"url": "<base>/s/<token>", "expiresAt": <unix s>}`; 401 without the admin token (or
///   when none is set); 400 for a body that is not that, or a trip of another provider.
/// - `GET /s/<token>`: the page; `/s/<token>/map.svg`: the snapshot now; `/s/<token>/events`:
///   Server-Sent Events, one JSON object per change of the trip.
/// - A token that does not open: 404; an expired one: 410. Neither body names the trip.
public struct ShareServer: Sendable {
  let fanOut: TripFanOut
  let links: ShareLinks
  let adminToken: String?
  let providerID: String
  let defaultTTL: Int64
  /// `http://HOST:PORT`, known once the server listens.
  let baseURL: @Sendable () -> String
  let renderer = SVGRenderer(width: 800, height: 600, showsCaption: false)

  public init(
    fanOut: TripFanOut, links: ShareLinks, adminToken: String?, providerID: String,
    defaultTTLSeconds: Int64, baseURL: @escaping @Sendable () -> String
  ) {
    self.fanOut = fanOut
    self.links = links
    self.adminToken = adminToken
    self.providerID = providerID
    self.defaultTTL = defaultTTLSeconds
    self.baseURL = baseURL
  }

  /// The routes, for an `Application`.
  public func router() -> Router<BasicRequestContext> {
    let router = Router()
    router.post("links") { request, context in try await self.makeLink(request, context) }
    router.get("s/:token") { _, context in await self.page(context) }
    router.get("s/:token/map.svg") { _, context in await self.snapshot(context) }
    router.get("s/:token/events") { _, context in self.events(context) }
    return router
  }

  // MARK: Links

  private struct LinkRequest: Decodable {
    let tripName: String
    let ttlSeconds: Int64?
  }

  private struct LinkResponse: Encodable {
    let url: String
    let expiresAt: Int64
  }

  private func makeLink(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
    guard let adminToken, let given = request.headers[.authorization],
      LinkSealing.constantTimeEqual(Array(given.utf8), Array("Bearer \(adminToken)".utf8))
    else {
      return Self.plain(.unauthorized, "an admin token is needed (Authorization: Bearer …)")
    }
    let body = try await request.body.collect(upTo: 16 << 10)
    guard let link = try? JSONDecoder().decode(LinkRequest.self, from: Data(buffer: body)) else {
      return Self.plain(.badRequest, #"the body must be {"tripName": "providers/<id>/trips/<id>", "ttlSeconds": N}"#)
    }
    guard let name = try? TripName(link.tripName), name.providerID == providerID else {
      return Self.plain(.badRequest, "tripName must be providers/\(providerID)/trips/<trip id>")
    }
    let ttl = link.ttlSeconds ?? defaultTTL
    guard (1...31_536_000).contains(ttl) else {
      return Self.plain(.badRequest, "ttlSeconds must be within 1...31536000")
    }
    let expiresAt = Int64(Date().timeIntervalSince1970) + ttl
    let token = try links.token(for: name.description, expiresAt: expiresAt)
    let json = try JSONEncoder().encode(LinkResponse(url: "\(baseURL())/s/\(token)", expiresAt: expiresAt))
    return Response(
      status: .created, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
  }

  /// The trip a request's token names, or the response refusing it.
  private enum Link {
    case trip(String)
    case refused(Response)
  }

  private func trip(_ context: BasicRequestContext) -> Link {
    let token = context.parameters.get("token") ?? ""
    switch links.open(token, now: Int64(Date().timeIntervalSince1970)) {
    case .valid(let tripName, _): return .trip(tripName)
    case .expired: return .refused(Self.plain(.gone, "this link has expired"))
    case .invalid: return .refused(Self.plain(.notFound, "no such link"))
    }
  }

  // MARK: Page, snapshot, events

  private func page(_ context: BasicRequestContext) async -> Response {
    let current: FleetEngine.Trip?
    switch await linkedTrip(context) {
    case .found(let trip): current = trip
    case .refused(let refusal): return refusal
    }
    let rendering = current.map { TripRendering(trip: $0) }
    let html = SharePage.html(
      svg: rendering.map(renderer.render), status: rendering?.statusName, eta: rendering?.etaText)
    return Response(
      status: .ok,
      headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
  }

  private func snapshot(_ context: BasicRequestContext) async -> Response {
    let current: FleetEngine.Trip?
    switch await linkedTrip(context) {
    case .found(let trip): current = trip
    case .refused(let refusal): return refusal
    }
    guard let trip = current else {
      return Self.plain(.serviceUnavailable, "the trip could not be fetched yet; try again")
    }
    return Response(
      status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "no-store"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: renderer.render(TripRendering(trip: trip)))))
  }

  private enum Linked {
    /// The link's trip now (nil: not fetched within the wait).
    case found(FleetEngine.Trip?)
    case refused(Response)
  }

  /// The trip of the request's link as it is now, or the refusal.
  private func linkedTrip(_ context: BasicRequestContext) async -> Linked {
    switch trip(context) {
    case .refused(let refusal): return .refused(refusal)
    case .trip(let tripName):
      do {
        return .found(try await currentTrip(tripName))
      } catch {
        // A token this server sealed for a trip its service cannot follow: as unknown as any.
        return .refused(Self.plain(.notFound, "no such link"))
      }
    }
  }

  /// The trip now: as its viewers last got it, or fetched for this request (waiting up to
  /// 10 s for the first update).
  private func currentTrip(_ tripName: String) async throws -> FleetEngine.Trip? {
    let view = try fanOut.view(tripName)
    return await withTaskGroup(of: FleetEngine.Trip?.self) { group in
      group.addTask {
        for await event in view { if case .trip(let trip) = event { return trip } }
        return nil
      }
      group.addTask {
        try? await Task.sleep(for: .seconds(10))
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
  }

  private func events(_ context: BasicRequestContext) -> Response {
    let tripName: String
    switch trip(context) {
    case .trip(let name): tripName = name
    case .refused(let refusal): return refusal
    }
    // A token this server sealed for a trip its service cannot follow: as unknown as any.
    guard let view = try? fanOut.view(tripName) else { return Self.plain(.notFound, "no such link") }
    let renderer = self.renderer
    let lines = AsyncStream<ByteBuffer> { continuation in
      let relay = Task {
        for await event in view { continuation.yield(ByteBuffer(string: Self.sse(event, renderer))) }
        continuation.finish()
      }
      // A comment line now and then: a viewer that went away is noticed at the next write.
      let heartbeat = Task {
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(15))
          continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
        }
      }
      continuation.onTermination = { _ in
        relay.cancel()
        heartbeat.cancel()
      }
    }
    return Response(
      status: .ok,
      headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
      body: ResponseBody(asyncSequence: lines))
  }

  /// One SSE event: `data: <JSON>` and a blank line.
  static func sse(_ event: TripFanOut.Event, _ renderer: SVGRenderer) -> String {
    "data: \(eventJSON(event, renderer))\n\n"
  }

  private struct EventBody: Encodable {
    var status: String?
    var statusText: String?
    var eta: String?
    var distance: String?
    var vehicle: Position?
    var svg: String?
    var error: String?
    var category: String?
  }

  private struct Position: Encodable {
    let lat: Double
    let lng: Double
  }

  static func eventJSON(_ event: TripFanOut.Event, _ renderer: SVGRenderer) -> String {
    var body = EventBody()
    switch event {
    case .trip(let trip):
      let rendering = TripRendering(trip: trip)
      body.status = rendering.statusName
      body.statusText = rendering.statusName.replacingOccurrences(of: "_", with: " ").capitalized
      body.eta = rendering.etaText
      body.distance = rendering.distanceText
      body.vehicle = rendering.markers.first { $0.kind == .vehicle }.map {
        Position(lat: $0.position.latitude, lng: $0.position.longitude)
      }
      body.svg = renderer.render(rendering)
    case .failed(let error):
      // The code and category only: an error's message may name the trip.
      body.error = "\(error.code)"
      body.category = "\(error.category)"
    }
    let data = (try? JSONEncoder().encode(body)) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
    Response(
      status: status, headers: [.contentType: "text/plain; charset=utf-8"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
  }
}
