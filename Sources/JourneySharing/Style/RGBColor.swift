/// An sRGB colour with an opacity, as the style options and the SVG renderer use it.
///
/// Written into SVG as `#rrggbb` plus a separate opacity attribute when it is below 1, which
/// every SVG 1.1 reader understands (eight-digit hex colours are newer).
public struct RGBColor: Sendable, Hashable, CustomStringConvertible {
  /// The red channel, 0 to 255.
  public var red: UInt8
  /// The green channel, 0 to 255.
  public var green: UInt8
  /// The blue channel, 0 to 255.
  public var blue: UInt8
  /// From 0 (transparent) to 1 (opaque); values outside are clamped when written.
  public var opacity: Double

  /// The colour of these channels.
  public init(red: UInt8, green: UInt8, blue: UInt8, opacity: Double = 1) {
    self.red = red
    self.green = green
    self.blue = blue
    self.opacity = opacity
  }

  /// The colour `0xRRGGBB` (the bits above the lowest 24 are ignored).
  public init(hex: UInt32, opacity: Double = 1) {
    self.init(
      red: UInt8(truncatingIfNeeded: hex >> 16), green: UInt8(truncatingIfNeeded: hex >> 8),
      blue: UInt8(truncatingIfNeeded: hex), opacity: opacity)
  }

  /// `#rrggbb`, lower-case.
  public var hexString: String {
    let digits = Array("0123456789abcdef")
    var text = "#"
    for byte in [red, green, blue] {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0xF)])
    }
    return text
  }

  /// `hexString`, followed by the opacity when it is not 1.
  public var description: String { opacity == 1 ? hexString : "\(hexString) @ \(opacity)" }
}

// The palette of Google's map and route colours the defaults use.
extension RGBColor {
  /// Google's route blue.
  public static let routeBlue = RGBColor(hex: 0x1A73E8)
  /// Free-flowing traffic.
  public static let trafficGreen = RGBColor(hex: 0x34A853)
  /// Slow traffic.
  public static let trafficOrange = RGBColor(hex: 0xF29900)
  /// A traffic jam.
  public static let trafficRed = RGBColor(hex: 0xD93025)
  /// The route beyond the next stop.
  public static let remainingGrey = RGBColor(hex: 0x9AA0A6)
  /// Text and dark marker fill.
  public static let nearBlack = RGBColor(hex: 0x202124)
  /// White, for outlines and arrows.
  public static let white = RGBColor(hex: 0xFFFFFF)
}
