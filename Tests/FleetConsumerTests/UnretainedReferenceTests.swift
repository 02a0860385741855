import FleetSync
import Testing

/// FleetSync's UnretainedReference, which the service's registry of models is made of.
@Suite("A reference that neither retains nor weakens its object")
struct UnretainedReferenceTests {
  private final class Tracked {
    /// Read from `deinit`: what the registry would find while the object goes away.
    var onDeinit: (() -> Void)?
    deinit { onDeinit?() }
  }

  @Test("gives the object while it is alive, and nil once its deinitialization has begun")
  func aliveThenGone() {
    var object: Tracked? = Tracked()
    let reference = UnretainedReference(object!)
    #expect(reference.retainedIfAlive === object)
    #expect(reference.id == ObjectIdentifier(object!))
    var readInDeinit: Tracked?? = .none
    object!.onDeinit = { readInDeinit = .some(reference.retainedIfAlive) }
    object = nil
    // Read while the object was still allocated, its deinit running: nil, not a revived
    // object.
    #expect(readInDeinit != nil)
    #expect(readInDeinit! == nil)
  }

  @Test("reading it keeps nothing: the object goes as soon as it is let go")
  func balanced() {
    var deinitialized = false
    var object: Tracked? = Tracked()
    object!.onDeinit = { deinitialized = true }
    let reference = UnretainedReference(object!)
    for _ in 0..<3 { _ = reference.retainedIfAlive }
    object = nil
    #expect(deinitialized)
  }
}
