/// The pool's part in ``ChannelOptions/sharedConnections``: a connection beyond the first
/// live one takes a shared place, and gives it back when it goes away or closes.
extension ConnectionPool {
  /// The connections this channel has or may still open: ``ChannelOptions/maxConnections``,
  /// or, sharing places with other channels, its live ones and the places free now.
  var reachableConnections: Int {
    guard let shared = options.sharedConnections else { return options.maxConnections }
    return min(options.maxConnections, max(liveConnectionCount, 1) + shared.free)
  }

  /// A new connection if the limits allow one: beyond the first live one, it takes a place
  /// shared with other channels, if there is such a budget.
  func openWithinLimits() -> ClientConnection? {
    guard hasRoomForConnection else { return nil }
    let shared = liveConnectionCount > 0 ? options.sharedConnections : nil
    // Another channel may have taken the last place since it was counted.
    if let shared, !shared.take() { return nil }
    let connection = openConnection()
    if shared != nil { placeHolders.insert(ObjectIdentifier(connection)) }
    return connection
  }

  /// `connection` no longer counts (it is going away, or closed): its shared place, if it
  /// held one, goes back to the other channels.
  func givePlaceBack(of connection: ClientConnection) {
    guard placeHolders.remove(ObjectIdentifier(connection)) != nil else { return }
    options.sharedConnections?.giveBack()
  }
}
