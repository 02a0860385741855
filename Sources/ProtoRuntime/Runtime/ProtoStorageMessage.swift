/// A generated message that keeps its fields in copy-on-write storage (`--cow-message`): one
/// decode may hand out a value of it again, its storage shared, when a later field of the
/// type holds the same (``ProtoDecodeStrings/message(_:as:)``).
///
/// A GetTrip answer repeats its stops: the first remaining waypoint's location is the pickup
/// point, the last one's the drop-off point, and `current_route_segment_end_point`'s location
/// the first waypoint's. Each repetition decoded anew cost a storage object and its strings.
///
/// Public like ``CBridgedMessage``, so that a message module can conform; its requirements
/// are for generated code only.
public protocol ProtoStorageMessage: CBridgedMessage {
  /// The storage object that copies of this value share.
  @_spi(GeneratedCode) var sharedStorage: AnyObject { get }

  /// The value over `storage`, which is the ``sharedStorage`` of a value of this type.
  @_spi(GeneratedCode) init(sharedStorage storage: AnyObject)
}
