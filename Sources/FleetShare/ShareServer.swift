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
///   Server-Sent Events, one JSON object per change of the trip, and one when the vehicle
///   turns stale or its "last seen" text changes. With a street map (``SharePageOptions``)
///   the page is Leaflet's, over the operator's tiles, and `/assets/…` serves Leaflet and the
///   page's script.
/// - A token that does not open: 404; an expired one: 410. Neither body names the trip.
/// - `GET /healthz`, `/readyz`, `/metrics` and the drain: ``ShareReplica``.
public struct ShareServer: Sendable {
  let fanOut: TripFanOut
  let links: ShareLinks
  let adminToken: String?
  let providerID: String
  let defaultTTL: Int64
  /// `http://HOST:PORT`, known once the server listens.
  let baseURL: @Sendable () -> String
  let replica: ShareReplica
  let renderer = SVGRenderer(width: 800, height: 600, showsCaption: false)
  let pageOptions: SharePageOptions
  /// The default style, with the stale threshold of ``pageOptions``.
  let style: JourneySharingStyle

  public init(
    fanOut: TripFanOut, links: ShareLinks, adminToken: String?, providerID: String,
    defaultTTLSeconds: Int64, baseURL: @escaping @Sendable () -> String,
    page: SharePageOptions = .init(),
    replica: ShareReplica = ShareReplica(instanceName: "fleet-share")
  ) {
    self.replica = replica
    self.fanOut = fanOut
    self.links = links
    self.adminToken = adminToken
    self.providerID = providerID
    self.defaultTTL = defaultTTLSeconds
    self.baseURL = baseURL
    self.pageOptions = page
    var style = JourneySharingStyle()
    style.staleLocationThreshold = page.staleAfter
    self.style = style
  }

  /// The routes, for an `Application`.
  public func router() -> Router<BasicRequestContext> {
    let router = Router()
    router.post("links") { request, context in try await self.makeLink(request, context) }
    router.get("s/:token") { _, context in await self.page(context) }
    router.get("s/:token/map.svg") { _, context in await self.snapshot(context) }
    router.get("s/:token/events") { _, context in self.events(context) }
    if let streetMap = pageOptions.streetMap {
      for (name, file) in streetMap.leaflet.files {
        router.get("\(LeafletAssets.path.dropFirst())/\(name)") { _, _ in
          Self.asset(file.bytes, file.contentType)
        }
      }
      router.get(RouterPath(String(SharePage.mapScriptPath.dropFirst()))) { _, _ in
        Self.asset(Array(SharePage.mapScript.utf8), "text/javascript; charset=utf-8")
      }
    }
    replica.addRoutes(to: router) { [fanOut] in fanOut.followedTrips }
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
    replica.createdLink()
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
    // A draining instance sends its viewers elsewhere: the balancer retries a 503.
    guard !replica.isDraining else {
      return .refused(Self.plain(.serviceUnavailable, "this instance is draining; try again"))
    }
    let token = context.parameters.get("token") ?? ""
    switch links.open(token, now: Int64(Date().timeIntervalSince1970)) {
    case .valid(let tripName, _): return .trip(tripName)
    case .expired: return .refused(Self.plain(.gone, "this link has expired"))
    case .invalid: return .refused(Self.plain(.notFound, "no such link"))
    }
  }

  // MARK: Page, snapshot, events

  private func page(_ context: BasicRequestContext) async -> Response {
    let current: Shown?
    switch await replica.servingPage({ await linkedTrip(context) }) {
    case .found(let trip): current = trip
    case .refused(let refusal): return refusal
    }
    let rendering = current.map { $0.rendering(style) }
    let (svg, status, eta) = (rendering.map(renderer.render), rendering?.statusName, rendering?.etaText)
    let tiles = pageOptions.streetMap?.tiles
    let html =
      tiles.map { SharePage.mapHTML(svg: svg, status: status, eta: eta, tiles: $0) }
      ?? SharePage.html(svg: svg, status: status, eta: eta)
    let policy = tiles.map(SharePage.policy(tiles:)) ?? SharePage.policy
    return Response(
      status: .ok,
      headers: [
        .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
        .contentSecurityPolicy: policy,
      ],
      body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
  }

  private func snapshot(_ context: BasicRequestContext) async -> Response {
    let current: Shown?
    switch await linkedTrip(context) {
    case .found(let trip): current = trip
    case .refused(let refusal): return refusal
    }
    guard let current else {
      return Self.plain(.serviceUnavailable, "the trip could not be fetched yet; try again")
    }
    return Response(
      status: .ok,
      headers: [
        .contentType: "image/svg+xml", .cacheControl: "no-store",
        .contentSecurityPolicy: "default-src 'none'",
      ],
      body: ResponseBody(byteBuffer: ByteBuffer(string: renderer.render(current.rendering(style)))))
  }

  private enum Linked {
    /// The link's trip now (nil: not fetched within the wait).
    case found(Shown?)
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
  private func currentTrip(_ tripName: String) async throws -> Shown? {
    let view = try fanOut.view(tripName)
    let fanOut = self.fanOut
    return await withTaskGroup(of: Shown?.self) { group in
      group.addTask {
        for await event in view {
          if case .trip(let trip) = event {
            // Asked while this view keeps the trip followed.
            return Shown(trip: trip, locationReceivedAt: fanOut.locationReceivedAt(tripName))
          }
        }
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
    let (renderer, style, withMap, fanOut, replica) = (
      self.renderer, self.style, pageOptions.streetMap != nil, self.fanOut, self.replica
    )
    let lines = AsyncStream<ByteBuffer> { continuation in
      // Ended by the drain from now on; already draining: ended with a retry hint at once.
      guard let id = replica.opened(continuation) else { return }
      // Reconnect a second after the stream breaks (an instance gone): the balancer then
      // sends the browser to another.
      continuation.yield(ByteBuffer(string: "retry: 1000\n\n"))
      let (inputs, input) = AsyncStream.makeStream(
        of: EventFeed.Input.self, bufferingPolicy: .bufferingNewest(64))
      let forward = Task {
        for await event in view { input.yield(.event(event)) }
        input.finish()
      }
      // A tick a second: a vehicle turns stale, and its "last seen" text changes, with no
      // update of the trip.
      let clock = Task {
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(1))
          input.yield(.tick)
        }
      }
      let relay = Task {
        var feed = EventFeed(renderer: renderer, style: style, withMap: withMap)
        var ticks = 0
        for await item in inputs {
          if let text = feed.next(item, locationReceivedAt: fanOut.locationReceivedAt(tripName)) {
            continuation.yield(ByteBuffer(string: text))
            replica.sentEvent()
          }
          // A comment line now and then: a viewer that went away is noticed at the next write.
          if case .tick = item {
            ticks += 1
            if ticks % 15 == 0 { continuation.yield(ByteBuffer(string: ": keep-alive\n\n")) }
          }
        }
        continuation.finish()
      }
      continuation.onTermination = { _ in
        forward.cancel()
        clock.cancel()
        relay.cancel()
        replica.closed(id)
      }
    }
    return Response(
      status: .ok,
      headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
      body: ResponseBody(asyncSequence: lines))
  }

  /// A file of the street-map page (Leaflet, the page's script), cached for a day.
  static func asset(_ bytes: [UInt8], _ contentType: String) -> Response {
    Response(
      status: .ok, headers: [.contentType: contentType, .cacheControl: "public, max-age=86400"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
  }

  static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
    Response(
      status: status, headers: [.contentType: "text/plain; charset=utf-8"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
  }
}
