// The ETA and distance texts of a status panel, short as the phone apps write them ("4 min",
// "1 h 5 min", "850 m", "1.2 km"). Fixed English units and a '.' decimal point, whatever the
// process's locale: the same trip renders the same on every server.

extension TripRendering {
  /// A time to wait as a person reads it: "now" when it is not positive, else whole minutes
  /// rounded up ("1 min" for 20 seconds, "4 min"), and hours with minutes from an hour on
  /// ("1 h", "1 h 5 min").
  public static func durationText(seconds: Double) -> String {
    guard seconds.isFinite else { return "" }
    guard seconds > 0 else { return "now" }
    let minutes = Int((min(seconds, 1e9) / 60).rounded(.up))
    guard minutes >= 60 else { return "\(minutes) min" }
    let (hours, rest) = minutes.quotientAndRemainder(dividingBy: 60)
    return rest == 0 ? "\(hours) h" : "\(hours) h \(rest) min"
  }

  /// A distance as a person reads it: meters to the nearest 10 below a kilometer ("850 m"),
  /// kilometers with one decimal below 100 km ("1.2 km"), whole kilometers above ("123 km").
  /// Negative or non-finite distances (a broken server's) read as "0 m".
  public static func distanceText(meters: Double) -> String {
    guard meters.isFinite, meters > 0 else { return "0 m" }
    let tens = Int((min(meters, 1e12) / 10).rounded())
    if tens < 100 { return "\(tens * 10) m" }
    let tenths = Int((meters / 100).rounded())
    if tenths < 1000 { return "\(tenths / 10).\(tenths % 10) km" }
    return "\(Int((meters / 1000).rounded())) km"
  }
}
