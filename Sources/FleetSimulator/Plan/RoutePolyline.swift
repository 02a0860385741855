/// The points of a trip's whole route, packed for holding thousands of trips in memory.
///
/// Coordinates are kept as integers of 1e-7 degrees (about a centimetre, as Google's E7
/// fields) and the distance from the first point as a `Float` (a millimetre at 10 km):
/// 12 bytes a point, against 40 for an array of `GoogleType.LatLng`.
struct RoutePolyline: Sendable {
  /// Latitude and longitude of each point in 1e-7 degrees, interleaved.
  private var coordinates: ContiguousArray<Int32> = []
  /// Metres along the route from the first point to each point.
  private var cumulativeMeters: ContiguousArray<Float> = []

  init() {}

  /// The number of points.
  var count: Int { cumulativeMeters.count }

  /// The length of the whole route in metres.
  var length: Double { Double(cumulativeMeters.last ?? 0) }

  /// The point at `index`.
  func point(_ index: Int) -> GeoPoint {
    GeoPoint(
      latitude: Double(coordinates[2 * index]) / 1e7,
      longitude: Double(coordinates[2 * index + 1]) / 1e7)
  }

  /// Metres along the route from the first point to the point at `index`.
  func distance(at index: Int) -> Double {
    Double(cumulativeMeters[index])
  }

  /// Appends `point` (rounded to 1e-7 degrees); a point equal to the last one is dropped.
  mutating func append(_ point: GeoPoint) {
    let latitude = Int32((point.latitude * 1e7).rounded())
    let longitude = Int32((point.longitude * 1e7).rounded())
    guard let last = coordinates.indices.last else {
      coordinates.append(contentsOf: [latitude, longitude])
      cumulativeMeters.append(0)
      return
    }
    guard coordinates[last - 1] != latitude || coordinates[last] != longitude else { return }
    let previous = self.point(count - 1)
    coordinates.append(contentsOf: [latitude, longitude])
    // Measured between the stored (rounded) points, so distances agree with the points.
    let step = previous.distance(to: self.point(count))
    cumulativeMeters.append(Float(Double(cumulativeMeters[count - 1]) + step))
  }

  /// The index of the last point at most `meters` along the route, searching `range`.
  func lastIndex(atOrBefore meters: Double, in range: ClosedRange<Int>) -> Int {
    var low = range.lowerBound
    var high = range.upperBound
    // Invariant: distance(at: low) <= meters (or low is the range's start).
    while low < high {
      let middle = (low + high + 1) / 2
      if distance(at: middle) <= meters { low = middle } else { high = middle - 1 }
    }
    return low
  }

  /// Releases spare capacity left over from building.
  mutating func shrinkToFit() {
    coordinates = Self.exactCopy(coordinates)
    cumulativeMeters = Self.exactCopy(cumulativeMeters)
  }

  // Initialising from another array may share its (oversized) buffer; copy element-wise into
  // a buffer of exactly the right size instead.
  private static func exactCopy<Element>(_ source: ContiguousArray<Element>)
    -> ContiguousArray<Element>
  {
    ContiguousArray(unsafeUninitializedCapacity: source.count) { buffer, initialized in
      for (index, element) in source.enumerated() {
        buffer.initializeElement(at: index, to: element)
      }
      initialized = source.count
    }
  }

  /// Heap bytes used by the points (not counting allocator overhead).
  var storageBytes: Int {
    coordinates.capacity * MemoryLayout<Int32>.stride
      + cumulativeMeters.capacity * MemoryLayout<Float>.stride
  }
}
