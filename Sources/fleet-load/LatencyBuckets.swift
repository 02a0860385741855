import Histogram

/// Equal-width latency buckets between the fastest and the slowest of a histogram.
struct LatencyBuckets {
  /// Each bucket's highest latency, nanoseconds.
  var upperBounds: [UInt64] = []
  var counts: [UInt64] = []

  init(_ histogram: Histogram<UInt64>, count: Int) {
    let low = histogram.min
    let high = max(histogram.max, low + 1)
    let width = Double(high - low) / Double(count)
    var lower = low
    for index in 1...count {
      let upper = index == count ? high : low + UInt64((width * Double(index)).rounded())
      upperBounds.append(upper)
      counts.append(lower <= upper ? histogram.count(within: lower...upper) : 0)
      lower = upper + 1
    }
  }
}
