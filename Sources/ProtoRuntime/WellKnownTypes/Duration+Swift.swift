extension GoogleProtobuf.Duration {
  /// The protobuf duration of `duration`, truncated to whole nanoseconds. Seconds and nanos
  /// share a sign, as the protobuf definition requires.
  public init(_ duration: Swift.Duration) {
    let (seconds, attoseconds) = duration.components
    self.init()
    self.seconds = seconds
    self.nanos = Int32(attoseconds / 1_000_000_000)
  }

  /// The duration as a Swift `Duration`.
  public var duration: Swift.Duration {
    .seconds(seconds) + .nanoseconds(Int64(nanos))
  }
}
