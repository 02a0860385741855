import Foundation
import Histogram

/// The latency histogram as a standalone SVG picture (`--histogram-svg`): 40 equal-width
/// buckets from the fastest to the p99.9 latency (slower ones in the last bar, marked),
/// with lines at p50 and p99 and the run's title. Plain SVG 1.1 written by hand.
enum HistogramSVG {
  static func render(_ histogram: Histogram<UInt64>, title: String) -> String {
    let (width, height) = (800.0, 420.0)
    let (left, right, top, bottom) = (70.0, 20.0, 50.0, 60.0)
    let plotWidth = width - left - right
    let plotHeight = height - top - bottom
    var svg = [
      #"<?xml version="1.0" encoding="UTF-8"?>"#,
      #"<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="800" height="420" "#
        + #"viewBox="0 0 800 420" font-family="sans-serif" font-size="12">"#,
      #"<rect width="800" height="420" fill="white"/>"#,
      #"<text x="400" y="24" text-anchor="middle" font-size="14">\#(escape(title))</text>"#,
    ]
    guard histogram.totalCount > 0 else {
      svg.append(#"<text x="400" y="210" text-anchor="middle">no samples</text>"#)
      svg.append("</svg>")
      return svg.joined(separator: "\n") + "\n"
    }
    let low = histogram.min
    let cut = max(histogram.valueAtPercentile(99.9), low + 1)
    let bucketCount = 40
    let step = Double(cut - low) / Double(bucketCount)
    var counts: [UInt64] = []
    var lower = low
    for index in 1...bucketCount {
      let upper = index == bucketCount ? UInt64.max : low + UInt64((step * Double(index)).rounded())
      counts.append(lower <= upper ? histogram.count(within: lower...min(upper, histogram.max)) : 0)
      lower = upper &+ 1
    }
    let largest = Double(max(counts.max() ?? 1, 1))
    let barWidth = plotWidth / Double(bucketCount)
    for (index, count) in counts.enumerated() where count > 0 {
      let barHeight = Double(count) / largest * plotHeight
      let x = left + Double(index) * barWidth
      let fill = index == bucketCount - 1 ? "#c0504d" : "#4f81bd"
      svg.append(
        "<rect x=\"\(f(x))\" y=\"\(f(top + plotHeight - barHeight))\" width=\"\(f(barWidth - 1))\" "
          + "height=\"\(f(barHeight))\" fill=\"\(fill)\"><title>\(count)</title></rect>")
    }
    // Axes, with ticks at both ends and the middle.
    let axisY = top + plotHeight
    svg.append(
      "<line x1=\"\(f(left))\" y1=\"\(f(axisY))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(axisY))\" "
        + "stroke=\"black\"/>")
    svg.append(
      "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(axisY))\" stroke=\"black\"/>"
    )
    for fraction in [0.0, 0.5, 1.0] {
      let value = Double(low) + fraction * Double(cut - low)
      svg.append(
        "<text x=\"\(f(left + fraction * plotWidth))\" y=\"\(f(axisY + 16))\" "
          + "text-anchor=\"middle\">\(milliseconds(value))</text>")
    }
    svg.append(
      "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 12))\" text-anchor=\"middle\">"
        + "latency (ms); the last bar holds everything slower than p99.9</text>")
    svg.append(
      "<text x=\"\(f(left - 8))\" y=\"\(f(top + 4))\" text-anchor=\"end\">\(Int(largest))</text>")
    svg.append("<text x=\"\(f(left - 8))\" y=\"\(f(axisY))\" text-anchor=\"end\">0</text>")
    for (name, percentile) in [("p50", 50.0), ("p99", 99.0)] {
      let value = Double(histogram.valueAtPercentile(percentile))
      let x = left + (value - Double(low)) / Double(cut - low) * plotWidth
      svg.append(
        "<line x1=\"\(f(x))\" y1=\"\(f(top))\" x2=\"\(f(x))\" y2=\"\(f(axisY))\" stroke=\"#333\" "
          + "stroke-dasharray=\"4 3\"/>")
      svg.append(
        "<text x=\"\(f(x + 3))\" y=\"\(f(top + 12))\">\(name) \(milliseconds(value)) ms</text>")
    }
    svg.append("</svg>")
    return svg.joined(separator: "\n") + "\n"
  }

  private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

  private static func milliseconds(_ nanoseconds: Double) -> String {
    String(format: "%.3f", nanoseconds / 1_000_000)
  }

  /// Text as SVG character data.
  static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
  }
}
