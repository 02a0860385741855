/// What the map shows: bounds to fit into the viewport, and the padding to keep around them
/// (the SDK's camera update `fit(bounds, withPadding:)`).
public struct Camera: Sendable, Hashable {
  /// The rectangle every visible route point and marker lies in, grown to
  /// ``JourneySharingStyle/minimumCameraSpan``; ``CoordinateBounds/world`` for a trip with
  /// nothing to show yet.
  public var bounds: CoordinateBounds
  /// The space kept free between ``bounds`` and each edge of the viewport, in the renderer's
  /// units.
  public var padding: Double

  /// A camera fitting `bounds` with `padding` on every side.
  public init(bounds: CoordinateBounds, padding: Double) {
    self.bounds = bounds
    self.padding = padding
  }
}
