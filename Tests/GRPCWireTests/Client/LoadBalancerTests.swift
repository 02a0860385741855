import Testing

@testable import GRPCWire

/// The pool's choice of connection for each call: ready connections with a free stream
/// first (the first of them, or each in turn), else one still connecting, else none.
@Suite("Load balancer")
struct LoadBalancerTests {
  final class Connection: BalancedConnection {
    let id: Int
    var hasFreeStream: Bool
    var isReady: Bool
    init(_ id: Int, free: Bool = true, ready: Bool = true) {
      self.id = id
      hasFreeStream = free
      isReady = ready
    }
  }

  static func picks(
    _ policy: ChannelOptions.LoadBalancing, _ connections: [Connection], times: Int
  ) -> [Int?] {
    var balancer = LoadBalancer(policy: policy)
    return (0..<times).map { _ in balancer.pick(from: connections)?.id }
  }

  @Test("pick first: always the first ready connection with a free stream")
  func pickFirst() {
    let connections = [Connection(0, ready: false), Connection(1, free: false), Connection(2), Connection(3)]
    #expect(Self.picks(.pickFirst, connections, times: 3) == [2, 2, 2])
  }

  @Test("round robin: the ready connections with a free stream in turn")
  func roundRobin() {
    let connections = [Connection(0), Connection(1, free: false), Connection(2), Connection(3)]
    #expect(Self.picks(.roundRobin, connections, times: 6) == [2, 3, 0, 2, 3, 0])
  }

  @Test("round robin follows connections that fill up or free a stream between calls")
  func roundRobinChanges() {
    let connections = [Connection(0), Connection(1), Connection(2)]
    var balancer = LoadBalancer(policy: .roundRobin)
    #expect(balancer.pick(from: connections)?.id == 1)
    connections[2].hasFreeStream = false
    #expect(balancer.pick(from: connections)?.id == 0)
    connections[2].hasFreeStream = true
    #expect(balancer.pick(from: connections)?.id == 1)
  }

  @Test(
    "none ready: the first one still connecting with room takes the call",
    arguments: [ChannelOptions.LoadBalancing.pickFirst, .roundRobin])
  func noneReady(_ policy: ChannelOptions.LoadBalancing) {
    let connections = [Connection(0, free: false, ready: false), Connection(1, ready: false), Connection(2, ready: false)]
    #expect(Self.picks(policy, connections, times: 2) == [1, 1])
  }

  @Test(
    "no connection with a free stream, or none at all: nil (the pool opens one or queues)",
    arguments: [ChannelOptions.LoadBalancing.pickFirst, .roundRobin])
  func noCandidate(_ policy: ChannelOptions.LoadBalancing) {
    #expect(Self.picks(policy, [Connection(0, free: false), Connection(1, free: false, ready: false)], times: 1) == [nil])
    #expect(Self.picks(policy, [], times: 1) == [nil])
  }
}
