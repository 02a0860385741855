/// A connection as the load balancer sees it.
protocol BalancedConnection: AnyObject {
  /// It takes another call now (or queues it while it connects).
  var hasFreeStream: Bool { get }
  /// TCP, TLS and the server's SETTINGS are through.
  var isReady: Bool { get }
}

/// Which of a channel's connections takes the next call
/// (``ChannelOptions/LoadBalancing``): a value the pool keeps on its loop.
///
/// Only connections with a free stream are candidates. Ready ones come first: with
/// `pickFirst` the first of them, with `roundRobin` each in turn. With none ready, the first
/// still connecting takes the call and starts it once ready. With no candidate at all the
/// answer is nil: the pool opens another connection or makes the call wait for a stream.
struct LoadBalancer {
  let policy: ChannelOptions.LoadBalancing
  /// The last ready connection picked, by position among the ready candidates (round-robin).
  private var last = 0

  init(policy: ChannelOptions.LoadBalancing) {
    self.policy = policy
  }

  /// The connection for the next call, if one can take it.
  mutating func pick<Connection: BalancedConnection>(from connections: [Connection]) -> Connection? {
    // Every call passes here: counted in place rather than filtered into new arrays, and each
    // connection looked at borrowed from the array, without a retain and a release (two
    // atomic operations, each pass) for every connection of the channel.
    connections.withUnsafeBufferPointer { connections in
      var firstUsable = -1
      var readyCount = 0
      for index in connections.indices where Self.usable(connections[index]) {
        if firstUsable < 0 { firstUsable = index }
        if Self.ready(connections[index]) { readyCount += 1 }
      }
      guard firstUsable >= 0 else { return nil }
      guard readyCount > 0 else { return connections[firstUsable] }
      let wanted: Int
      switch policy {
      case .pickFirst:
        wanted = 0
      case .roundRobin:
        last = (last + 1) % readyCount
        wanted = last
      }
      var seen = 0
      for index in connections.indices
      where Self.usable(connections[index]) && Self.ready(connections[index]) {
        if seen == wanted { return connections[index] }
        seen += 1
      }
      return connections[firstUsable]
    }
  }

  private static func usable<Connection: BalancedConnection>(_ connection: Connection) -> Bool {
    Unmanaged.passUnretained(connection)._withUnsafeGuaranteedRef { $0.hasFreeStream }
  }

  private static func ready<Connection: BalancedConnection>(_ connection: Connection) -> Bool {
    Unmanaged.passUnretained(connection)._withUnsafeGuaranteedRef { $0.isReady }
  }
}
