import FleetSync
import Foundation
import GRPCTestingProtos
import Logging
import PeerSupport
import Testing

@testable import GRPCWire

/// The glitch limiter of the server role (issue 34): the token bucket alone, a configured
/// limit against a raw HTTP/2 client sending PRIORITY frames, and an honest client that
/// never causes a glitch.
@Suite("Glitch limit", .timeLimit(.minutes(2)))
struct GlitchLimitTests {
  typealias Service = GRPCTesting.TestService
  static let second: UInt64 = 1_000_000_000

  @Test("the bucket holds the burst, refills at its rate, and runs dry past them")
  func bucket() {
    var limiter = GlitchLimiter(.init(burst: 10, refillPerSecond: 2), now: 0)
    for _ in 0..<10 { limiter.record() }
    let held1 = limiter.settle(now: 0)
    #expect(held1)
    limiter.record()
    let held2 = limiter.settle(now: 0)
    #expect(!held2)
    // Two seconds refill four glitches.
    var refilled = GlitchLimiter(.init(burst: 10, refillPerSecond: 2), now: 0)
    for _ in 0..<10 { refilled.record() }
    let held3 = refilled.settle(now: 0)
    #expect(held3)
    for _ in 0..<4 { refilled.record() }
    let held4 = refilled.settle(now: 2 * Self.second)
    #expect(held4)
    refilled.record()
    let held5 = refilled.settle(now: 2 * Self.second)
    #expect(!held5)
    // Never more than the burst, however long the quiet.
    var capped = GlitchLimiter(.init(burst: 10, refillPerSecond: 2), now: 0)
    for _ in 0..<11 { capped.record() }
    let held6 = capped.settle(now: 3600 * Self.second)
    #expect(!held6)
    #expect(capped.total == 11)
  }

  @Test("an address whose connection was ended for glitches is refused 1 s, then twice as long while it goes on, up to 30 s")
  func refusals() {
    let buckets = PeerGlitchBuckets(.init())
    #expect(!buckets.refuses("10.0.0.1", now: 0))
    buckets.connectionEnded("10.0.0.1", now: 0)
    #expect(buckets.refuses("10.0.0.1", now: Self.second - 1))
    #expect(!buckets.refuses("10.0.0.1", now: Self.second))
    #expect(!buckets.refuses("10.0.0.2", now: 0), "another address is not refused")
    // Ended again within twice its refusal: 2 s, then 4 s, ... up to 30 s.
    buckets.connectionEnded("10.0.0.1", now: Self.second)
    #expect(buckets.refuses("10.0.0.1", now: 3 * Self.second - 1))
    #expect(!buckets.refuses("10.0.0.1", now: 3 * Self.second))
    var now = 3 * Self.second
    for _ in 0..<10 { buckets.connectionEnded("10.0.0.1", now: now) }
    #expect(buckets.refuses("10.0.0.1", now: now + 30 * Self.second - 1))
    #expect(!buckets.refuses("10.0.0.1", now: now + 30 * Self.second))
    // Quiet for twice its last refusal after it ended: back to 1 s.
    now += 90 * Self.second
    buckets.connectionEnded("10.0.0.1", now: now)
    #expect(!buckets.refuses("10.0.0.1", now: now + Self.second))
  }

  @Test("the defaults are nghttp2 1.67's: burst 10,000, 330 a second")
  func defaults() {
    #expect(ServerOptions().glitchLimit == ServerOptions.GlitchLimit(burst: 10_000, refillPerSecond: 330))
  }

  static func server(_ options: ServerOptions) -> GRPCServer {
    let server = GRPCServer(options: options)
    server.register(unary: Service.emptyCall) { _, _ in GRPCTesting.Empty() }
    return server
  }

  @Test("a configured limit of 50: PRIORITY frames end every connection with ENHANCE_YOUR_CALM long before 10,000")
  func configuredLimit() async throws {
    var options = ServerOptions()
    options.glitchLimit = .init(burst: 50, refillPerSecond: 1)
    let server = Self.server(options)
    let port = try await server.start()
    let output = try await PythonPeer.run(
      "glitch_client.py", ["priority", "--target", "127.0.0.1:\(port)", "--seconds", "2"],
      timeout: .seconds(30))
    await server.shutdown(gracePeriod: .seconds(1))
    #expect(output.status == 0, "\(output.transcript)")
    let line = try #require(output.stdoutText.split(separator: "\n").last, "\(output.transcript)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    let connections = try #require(report["connections"] as? Int)
    let frames = try #require(report["frames_sent"] as? Int)
    let goaways = try #require(report["goaways"] as? [String: Int])
    print("[glitch limit 50] \(line)")
    #expect(goaways["ENHANCE_YOUR_CALM"] ?? 0 >= connections - 1, "\(line)")
    #expect(connections >= 2, "\(line)")
    // Frames a connection got in before the GOAWAY reached the client: socket buffers' worth,
    // far below the default burst.
    #expect(frames / connections < 10_000, "\(line)")
  }

  @Test("an honest client's 100,000 EmptyCalls at full rate cause no glitch at all")
  func honestClient() async throws {
    let lines = PosixMutex<[String]>([])
    var options = ServerOptions()
    options.logger = Logger(label: "glitches") { _ in
      var handler = CapturedLog(lines: lines)
      handler.logLevel = .debug
      return handler
    }
    let server = Self.server(options)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let total = 100_000
    let concurrency = 50
    let failures = try await withThrowingTaskGroup(of: Int.self) { group in
      for worker in 0..<concurrency {
        group.addTask(executorPreference: channel.eventLoop) {
          var failed = 0
          for _ in stride(from: worker, to: total, by: concurrency) {
            do {
              _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
            } catch {
              failed += 1
            }
          }
          return failed
        }
      }
      return try await group.reduce(0, +)
    }
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
    let logged = lines.withLock { $0 }
    let closed = logged.filter { $0.hasPrefix("debug connection closed ") }
    print("[glitch limit] honest client: \(total) calls, \(failures) failed; server: \(closed)")
    #expect(failures == 0)
    #expect(!closed.isEmpty, "the server logged no connection closing")
    #expect(closed.allSatisfy { $0.contains(" grpc.glitches=0 ") || $0.hasSuffix(" grpc.glitches=0") })
    #expect(!logged.contains { $0.contains("too many glitches") }, "\(logged)")
  }
}
