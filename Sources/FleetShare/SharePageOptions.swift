/// How share pages show a trip: on today's self-contained SVG map or on a street map, and
/// when the vehicle counts as stale.
public struct SharePageOptions: Sendable {
  /// The street map pages draw the trip on; nil (the default): the self-contained SVG page,
  /// which fetches nothing from anywhere else.
  public var streetMap: StreetMap?
  /// How old the vehicle's location may get before pages show it stale (dimmed, "last seen
  /// N min ago", `"stale": true` in the events): from the location's `update_time`, else
  /// from when this server received it. 60 s by default.
  public var staleAfter: Duration

  /// Options with these values.
  public init(streetMap: StreetMap? = nil, staleAfter: Duration = .seconds(60)) {
    self.streetMap = streetMap
    self.staleAfter = staleAfter
  }
}

/// A street map for share pages: the operator's tiles, shown by Leaflet that fleet-share
/// serves from its own origin.
public struct StreetMap: Sendable {
  /// The tiles.
  public let tiles: TileLayer
  /// Leaflet's files.
  public let leaflet: LeafletAssets

  /// The street map of `tiles`, shown by `leaflet`.
  public init(tiles: TileLayer, leaflet: LeafletAssets) {
    self.tiles = tiles
    self.leaflet = leaflet
  }
}
