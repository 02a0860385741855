// The ETA and distance texts of a status panel, short as the phone apps write them ("4 min",
// "40 s", "arriving", "1 h 5 min", "850 m", "1.2 km"). Fixed English units and a '.' decimal
// point, whatever the process's locale: the same trip renders the same on every server.

extension TripRendering {
  /// An ETA as a person reads it: "arriving" under 15 seconds (and for an ETA already
  /// passed), whole seconds rounded up below a minute ("40 s"), else ``durationText(seconds:)``
  /// ("1 min", "4 min", "1 h 5 min").
  public static func etaText(seconds: Double) -> String {
    guard seconds.isFinite else { return "" }
    guard seconds >= 15 else { return "arriving" }
    let whole = Int(seconds.rounded(.up))
    return whole < 60 ? "\(whole) s" : durationText(seconds: seconds)
  }

  /// How long ago the vehicle last reported, as a person reads it: "last seen 40 s ago"
  /// below a minute, whole minutes rounded down below an hour ("last seen 3 min ago"), whole
  /// hours from then on ("last seen 2 h ago"). A time in the future (clocks apart) reads as
  /// "last seen 0 s ago".
  public static func lastSeenText(secondsAgo: Double) -> String {
    guard secondsAgo.isFinite else { return "" }
    let seconds = Int(max(0, min(secondsAgo, 1e9)))
    if seconds < 60 { return "last seen \(seconds) s ago" }
    if seconds < 3600 { return "last seen \(seconds / 60) min ago" }
    return "last seen \(seconds / 3600) h ago"
  }

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
