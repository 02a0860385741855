/// A generated message that keeps its fields in copy-on-write storage (`--cow-message`): one
/// decode may hand out a value of it again, its storage shared, when a later field of the
/// type holds the same (``ProtoDecodeStrings/message(_:as:)``).
///
/// A message repeated in one decode, decoded anew each time, would cost a storage object and
/// its strings and lists each time; shared, it costs a retain.
///
/// Public like ``CBridgedMessage``, so that a message module can conform; its requirements
/// are for generated code only.
public protocol ProtoStorageMessage: CBridgedMessage {
  /// The storage object that copies of this value share.
  @_spi(GeneratedCode) var sharedStorage: AnyObject { get }

  /// The value over `storage`, which is the ``sharedStorage`` of a value of this type.
  @_spi(GeneratedCode) init(sharedStorage storage: AnyObject)
}
