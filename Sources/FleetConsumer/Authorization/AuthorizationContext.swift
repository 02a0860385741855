/// What a token is requested for: one trip of one provider.
public struct AuthorizationContext: Sendable, Hashable {
  /// The trip the token must be minted for (its JWT's `tripid` claim).
  public var tripID: String { tripName.tripID }
  /// The provider (Google Cloud project) the trip belongs to.
  public var providerID: String { tripName.providerID }
  /// The trip's full resource name.
  public let tripName: TripName

  /// The context of a token for trip `tripName`.
  public init(tripName: TripName) {
    self.tripName = tripName
  }
}
