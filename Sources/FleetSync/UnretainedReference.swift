internal import CSwiftRuntime

/// A reference to an object that does not keep it alive and adds nothing to it: unlike a
/// weak reference, which gives its object a side table for good and so sends every later
/// retain and release of it down the Swift runtime's slow path.
///
/// The price is the owner's part: it must forget the reference before the object's memory
/// is freed, typically by removing it, under a lock, in the object's `deinit`, and read it
/// (``retainedIfAlive``) only under that same lock. The object is then still allocated
/// whenever the reference is read; if its deinitialization has begun, the read gives nil.
public struct UnretainedReference<Object: AnyObject>: @unchecked Sendable {
  private let object: UnsafeMutableRawPointer
  /// The object's identity, known without reading the reference.
  public let id: ObjectIdentifier

  public init(_ object: Object) {
    self.object = Unmanaged.passUnretained(object).toOpaque()
    id = ObjectIdentifier(object)
  }

  /// The object, retained, unless its deinitialization has begun. See the type's rule on
  /// when this may be called.
  public var retainedIfAlive: Object? {
    guard fleet_swift_try_retain(object) else { return nil }
    return Unmanaged<Object>.fromOpaque(object).takeRetainedValue()
  }
}
