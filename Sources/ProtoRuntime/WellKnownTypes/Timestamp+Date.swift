public import FoundationEssentials

extension GoogleProtobuf.Timestamp {
  /// The timestamp of `date`, rounded down to the nanosecond.
  public init(date: Date) {
    let interval = date.timeIntervalSince1970
    var seconds = interval.rounded(.down)
    var nanos = ((interval - seconds) * 1e9).rounded()
    if nanos >= 1e9 {
      seconds += 1
      nanos -= 1e9
    }
    self.init()
    self.seconds = Int64(seconds)
    self.nanos = Int32(nanos)
  }

  /// The point in time; `Date` keeps about a microsecond of precision today.
  public var date: Date {
    Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
  }
}
