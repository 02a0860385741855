public import FleetConsumer

/// A point of the trip to mark on the map, with the style its ``MarkerKind`` has.
public struct MapMarker: Sendable, Hashable {
  /// What the marker stands for; it decides the shape.
  public var kind: MarkerKind
  /// Where it is.
  public var position: GoogleType.LatLng
  /// The vehicle's heading in degrees clockwise from north, when it reported one; nil for
  /// other markers.
  public var heading: Int32?
  /// For an intermediate destination, its index in the trip's `intermediate_destinations`;
  /// nil for other markers.
  public var index: Int?
  /// The style of its kind in the rendering's ``JourneySharingStyle``.
  public var style: MarkerStyleOptions
  /// Whether this is a vehicle whose location is older than the style's
  /// ``JourneySharingStyle/staleLocationThreshold``.
  public var isStale: Bool
  /// How opaque the shape is drawn: 1, or ``JourneySharingStyle/staleVehicleOpacity`` for a
  /// stale vehicle.
  public var opacity: Double
  /// A text written beside the marker (a stale vehicle's "last seen 3 min ago"); nil: none.
  public var label: String?

  /// A marker of `kind` at `position`.
  public init(
    kind: MarkerKind, position: GoogleType.LatLng, heading: Int32? = nil, index: Int? = nil,
    style: MarkerStyleOptions, isStale: Bool = false, opacity: Double = 1, label: String? = nil
  ) {
    self.kind = kind
    self.position = position
    self.heading = heading
    self.index = index
    self.style = style
    self.isStale = isStale
    self.opacity = opacity
    self.label = label
  }
}
