internal import FleetProtos
internal import Foundation  // trimmingCharacters
internal import GRPCWire

/// `maps.fleetengine.v1.TripService` on a ``GRPCServer``: CreateTrip, GetTrip, UpdateTrip,
/// SearchTrips and DeleteTrip; ReportBillableTrip answers UNIMPLEMENTED.
///
/// CreateTrip of a SHARED trip on a vehicle that carries another joins the two
/// (``SimulatorCore/join(_:_:partner:now:)``); UpdateTrip may cancel a trip, reassign it to
/// another vehicle and change its passengers and attributes
/// (``SimulatorCore/updateTrip(_:paths:_:now:)``).
///
/// Every call first passes the fault injector, then the token check, then the request's own
/// checks — the order in which Fleet Engine answers: UNAUTHENTICATED before INVALID_ARGUMENT,
/// PERMISSION_DENIED before NOT_FOUND.
struct TripServiceHandlers: Sendable {
  let core: SimulatorCore

  /// The UpdateTrip mask paths the simulator can apply.
  static let updatablePaths = ["number_of_passengers", "attributes", "vehicle_id", "trip_status"]
  /// The largest SearchTrips page, and the size of a page when the request names none.
  static let maximumPageSize = 500
  static let defaultPageSize = 50

  func register(on server: GRPCServer) {
    typealias Service = FleetEngine.TripService
    add(Service.createTrip, on: server, createTrip)
    add(Service.getTrip, on: server, getTrip)
    add(Service.updateTrip, on: server, updateTrip)
    add(Service.searchTrips, on: server, searchTrips)
    add(Service.deleteTrip, on: server, deleteTrip)
    add(Service.reportBillableTrip, on: server) { _, _ in
      throw RPCError(
        code: .unimplemented, message: "the simulator does not bill trips (ReportBillableTrip)")
    }
  }

  /// Every handler answers from memory: on the server's event loop, with no task per call,
  /// unless faults add latency, which a task waits out first.
  private func add<Request, Response>(
    _ method: ProtoMethod<Request, Response>, on server: GRPCServer,
    _ handler: @escaping @Sendable (Request, ServerContext) throws -> Response
  ) {
    let faults = core.faults
    guard faults.options.latency > .zero else {
      return server.registerOnLoop(unary: method, handler)
    }
    server.register(unary: method) { request, context in
      try await faults.delay()
      return try handler(request, context)
    }
  }

  func createTrip(_ request: FleetEngine.CreateTripRequest, _ context: ServerContext) throws
    -> FleetEngine.Trip
  {
    try core.faults.beforeCall("CreateTrip", context)
    let grant = try core.access.authenticate(context.requestMetadata)
    let name = try TripName(requestParent: request.parent, tripID: request.tripID)
    try core.access.authorize(grant, tripID: name.tripID)
    let now = core.clock.now()
    let trip = request.trip ?? FleetEngine.Trip()
    let record = try core.makeRecord(name, trip, now: now)
    guard record.tripType == .shared && !trip.vehicleID.isEmpty else {
      let inserted = try core.store.insert([record])[0]
      return core.renderer.render(inserted, at: now, options: .provider)
    }
    // A second SHARED trip on a vehicle joins the first: one plan through both riders' stops.
    for _ in 0..<SimulatorCore.commitAttempts {
      guard let partner = try core.sharedPartner(for: name, vehicleID: trip.vehicleID, now: now)
      else {
        let inserted = try core.store.insert([record])[0]
        return core.renderer.render(inserted, at: now, options: .provider)
      }
      let (joined, joinedPartner) = try core.join(name, trip, partner: partner, now: now)
      if let stored = try core.store.commit([joinedPartner], inserting: [joined]) {
        return core.renderer.render(stored[1], at: now, options: .provider)
      }
    }
    throw FleetEngineError.make(
      .aborted,
      "vehicle \(trip.vehicleID)'s trips kept changing while this one joined them; "
        + "try again", reason: "CONCURRENT_UPDATE", metadata: ["vehicle_id": trip.vehicleID])
  }

  func getTrip(_ request: FleetEngine.GetTripRequest, _ context: ServerContext) throws
    -> FleetEngine.Trip
  {
    let record = try core.admittedRecord("GetTrip", tripName: request.name, context)
    return core.renderer.render(record, at: core.clock.now(), options: RenderOptions(request))
  }

  func updateTrip(_ request: FleetEngine.UpdateTripRequest, _ context: ServerContext) throws
    -> FleetEngine.Trip
  {
    let name = try core.admit("UpdateTrip", tripName: request.name, context)
    let paths = (request.updateMask?.paths ?? []).flatMap { $0.split(separator: ",") }
      .map { Self.snakeCase($0.trimmingCharacters(in: .whitespaces)) }
    guard !paths.isEmpty else {
      throw FleetEngineError.invalidArgument(
        field: "update_mask", "the update mask is empty: name the fields to update")
    }
    for path in paths where !Self.updatablePaths.contains(path) {
      throw FleetEngineError.invalidArgument(
        field: "update_mask",
        "the simulator cannot update '\(path)'; it updates "
          + Self.updatablePaths.joined(separator: ", "))
    }
    let update = request.trip ?? FleetEngine.Trip()
    if paths.contains("trip_status") && update.tripStatus != .canceled {
      throw FleetEngineError.invalidArgument(
        field: "trip.trip_status",
        "the simulator drives trips itself; the only status a provider may set is CANCELED, "
          + "not \(update.tripStatus)")
    }
    if paths.contains("number_of_passengers") && update.numberOfPassengers < 0 {
      throw FleetEngineError.invalidArgument(
        field: "trip.number_of_passengers", "the number of passengers must not be negative")
    }
    if paths.contains("vehicle_id") && update.vehicleID.isEmpty {
      throw FleetEngineError.invalidArgument(
        field: "trip.vehicle_id",
        "the simulator drives every trip with a vehicle: name the one to reassign the trip to")
    }
    let now = core.clock.now()
    let record = try core.updateTrip(name.description, paths: paths, update, now: now)
    return core.renderer.render(record, at: now, options: .provider)
  }

  func searchTrips(_ request: FleetEngine.SearchTripsRequest, _ context: ServerContext)
    throws -> FleetEngine.SearchTripsResponse
  {
    try core.faults.beforeCall("SearchTrips", context)
    let grant = try core.access.authenticate(context.requestMetadata)
    let providerID = try TripName.providerID(requestParent: request.parent)
    guard !request.vehicleID.isEmpty else {
      throw FleetEngineError.invalidArgument(
        field: "vehicle_id", "SearchTrips needs the vehicle whose trips to list")
    }
    try core.access.authorize(grant, tripID: nil)
    guard request.pageSize >= 0 else {
      throw FleetEngineError.invalidArgument(field: "page_size", "the page size is negative")
    }
    let offset: Int
    if request.pageToken.isEmpty {
      offset = 0
    } else if let parsed = Int(request.pageToken), parsed >= 0 {
      offset = parsed
    } else {
      throw FleetEngineError.invalidArgument(
        field: "page_token", "'\(request.pageToken)' is not a page token this server gave out")
    }
    let pageSize =
      request.pageSize == 0
      ? Self.defaultPageSize : min(Int(request.pageSize), Self.maximumPageSize)
    let now = core.clock.now()
    let prefix = "providers/\(providerID)/trips/"
    let matching = core.store.records(vehicleID: request.vehicleID).filter { record in
      guard record.name.hasPrefix(prefix) else { return false }
      // The store lists a trip under every vehicle it has had or will have.
      let state = record.state(at: now, clock: core.clock)
      return record.vehicleID(in: state) == request.vehicleID
        && !(request.activeTripsOnly && state.phase.isTerminal)
    }
    var response = FleetEngine.SearchTripsResponse()
    let page = matching.dropFirst(offset).prefix(pageSize)
    response.trips = page.map { core.renderer.render($0, at: now, options: .full) }
    if offset + page.count < matching.count { response.nextPageToken = "\(offset + page.count)" }
    return response
  }

  func deleteTrip(_ request: FleetEngine.DeleteTripRequest, _ context: ServerContext)
    throws -> GoogleProtobuf.Empty
  {
    let name = try core.admit("DeleteTrip", tripName: request.name, context)
    let now = core.clock.now()
    let clock = core.clock
    try core.store.remove(named: name.description) { record in
      guard record.state(at: now, clock: clock).phase.isTerminal else {
        return FleetEngineError.make(
          .failedPrecondition,
          "trip \(record.name) is active and assigned to a vehicle; cancel it first",
          reason: "TRIP_ACTIVE", metadata: ["trip": record.name])
      }
      return nil
    }
    return GoogleProtobuf.Empty()
  }

  /// `numberOfPassengers` → `number_of_passengers`; snake case stays as it is.
  static func snakeCase(_ path: String) -> String {
    var result = ""
    for character in path {
      if character.isUppercase {
        result += "_" + character.lowercased()
      } else {
        result.append(character)
      }
    }
    return result
  }
}
