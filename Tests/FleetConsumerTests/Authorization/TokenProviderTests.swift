import FleetConsumer
import Foundation
import PeerSupport
import Testing

@Suite("Built-in token providers")
struct TokenProviderTests {
  private let context = AuthorizationContext(tripName: try! TripName("providers/p/trips/trip-7"))

  @Test("the command runs under /bin/sh with FLEET_TRIP_ID and its JSON becomes the token")
  func command() async throws {
    let provider = CommandAccessTokenProvider(
      command: #"printf '{"token": "jwt-%s-%s", "expiresAt": 1900000000}' "#
        + #""$FLEET_TRIP_ID" "$FLEET_PROVIDER_ID""#)
    let token = try await provider.accessToken(for: context)
    #expect(token.token == "jwt-trip-7-p")
    #expect(token.expiresAt == Date(timeIntervalSince1970: 1_900_000_000))
  }

  @Test("without expiresAt the token has no known expiry")
  func commandNoExpiry() async throws {
    let provider = CommandAccessTokenProvider(command: #"echo '{"token": "t"}'"#)
    #expect(try await provider.accessToken(for: context) == AccessToken("t"))
  }

  @Test(
    "a failing or misbehaving command is an error that never quotes its stdout",
    arguments: [
      (
        "echo secret-token; echo 'it broke' >&2; exit 3",
        "exited with status 3; its stderr ends: it broke"
      ),
      (
        "echo '{\"token\": \"secret-token\", \"expiresAt\": \"tomorrow\"}'",
        "\"expiresAt\" that is not a number"
      ),
      ("echo secret-token", "did not return JSON"),
      ("echo '{\"jwt\": \"secret-token\"}'", "no non-empty string under \"token\""),
      ("echo '[\"secret-token\"]'", "not an object"),
      ("kill -9 $$", "killed by signal 9"),
    ])
  func commandFailures(command: String, problem: String) async throws {
    let provider = CommandAccessTokenProvider(command: command)
    let error = await #expect(throws: AccessTokenProviderError.self) {
      try await provider.accessToken(for: context)
    }
    #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
    #expect(error?.message.contains("secret-token") == false)
  }

  @Test("a command that outlives its timeout is killed and reported")
  func commandTimeout() async throws {
    let provider = CommandAccessTokenProvider(command: "sleep 30", timeout: .milliseconds(200))
    let started = ContinuousClock.now
    let error = await #expect(throws: AccessTokenProviderError.self) {
      try await provider.accessToken(for: context)
    }
    #expect(error?.message.contains("still running") == true)
    #expect(ContinuousClock.now - started < .seconds(5))
  }

  @Test("many commands at once all finish")
  func manyCommands() async throws {
    let provider = CommandAccessTokenProvider(command: #"echo "{\"token\": \"$FLEET_TRIP_ID\"}""#)
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
      for index in 0..<40 {
        let context = AuthorizationContext(tripName: try TripName("providers/p/trips/t\(index)"))
        group.addTask { try await provider.accessToken(for: context).token }
      }
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(tokens.count == 40)
  }

  @Test("the HTTP provider GETs the token, with {tripID} filled in and extra headers sent")
  func http() async throws {
    try await withPeerServer("fake_token_server.py") { server in
      let provider = HTTPAccessTokenProvider(
        url: "http://127.0.0.1:\(server.port)/token/consumer/{tripID}", headers: ["X-Api-Key": "k1"]
      )
      let token = try await provider.accessToken(for: context)
      #expect(token.token == "tok-trip-7")
      let expiry = try #require(token.expiresAt)
      #expect(expiry.timeIntervalSinceNow > 3000)
      let event = try await server.waitForEvent("token")
      #expect(event.path == "/token/consumer/trip-7")
      #expect(event["header_x_api_key"] == "k1")
    }
  }

  @Test("the HTTP provider's key names and unit are configurable")
  func httpKeys() async throws {
    try await withPeerServer("fake_token_server.py") { server in
      // The server answers "token" and "expiresAt" in seconds: read as milliseconds, the
      // expiry lands in 1970, which shows the unit is applied.
      let provider = HTTPAccessTokenProvider(
        url: "http://127.0.0.1:\(server.port)/t/{tripID}", expirationUnit: .unixMilliseconds)
      let token = try await provider.accessToken(for: context)
      #expect(try #require(token.expiresAt) < Date(timeIntervalSince1970: 10_000_000))
      let renamed = HTTPAccessTokenProvider(
        url: "http://127.0.0.1:\(server.port)/t/{tripID}", tokenKey: "jwt")
      await #expect(throws: AccessTokenProviderError.self) {
        try await renamed.accessToken(for: context)
      }
    }
  }

  @Test(
    "HTTP failures name the host and status, never the body",
    arguments: [
      ("/status/503/{tripID}", "answered HTTP 503"), ("/status/401/{tripID}", "answered HTTP 401"),
      ("/garbage/{tripID}", "did not return JSON"),
    ])
  func httpFailures(path: String, problem: String) async throws {
    try await withPeerServer("fake_token_server.py") { server in
      let provider = HTTPAccessTokenProvider(url: "http://127.0.0.1:\(server.port)\(path)")
      let error = await #expect(throws: AccessTokenProviderError.self) {
        try await provider.accessToken(for: context)
      }
      #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
      #expect(error?.message.contains("127.0.0.1") == true)
      #expect(error?.message.contains("not json") == false)
      #expect(error?.message.contains("no token for you") == false)
    }
  }

  @Test("an unreachable endpoint or a URL that is not http(s) fails clearly")
  func httpUnreachable() async throws {
    let port = try unusedPort()
    let unreachable = HTTPAccessTokenProvider(url: "http://127.0.0.1:\(port)/t")
    let error = await #expect(throws: AccessTokenProviderError.self) {
      try await unreachable.accessToken(for: context)
    }
    #expect(error?.message.contains("could not be reached") == true)
    let ftp = HTTPAccessTokenProvider(url: "ftp://example.com/t")
    await #expect(throws: AccessTokenProviderError.self) { try await ftp.accessToken(for: context) }
  }
}
