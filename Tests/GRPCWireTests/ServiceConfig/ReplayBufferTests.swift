import Foundation
import PeerSupport
import Testing

@testable import GRPCWire

/// A6's replay buffer at work against grpcio's server (Tests/Python/retry_server.py):
/// client-streaming (`Collect`) and bidirectional (`Chat`) calls retried and hedged, every
/// attempt receiving the requests written so far, in order; the call committed by its first
/// response or by a buffer limit, per call or shared by the channel's calls.
@Suite("Replay buffer of streaming calls against grpcio", .timeLimit(.minutes(3)))
struct ReplayBufferTests {
  static let collect = "/fleet.test.Retry/Collect"
  static let chat = "/fleet.test.Retry/Chat"
  static let words = ["alpha", "bravo", "charlie", "delta", "echo"]

  static func retryConfig(maxAttempts: Int = 3) -> String {
    RetryPolicyTests.retryConfig(maxAttempts: maxAttempts, initial: "0.01s", max: "0.01s")
  }

  static let hedgingConfig = """
    {"methodConfig": [{"name": [{"service": "fleet.test.Retry"}],
      "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "0.2s",
        "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}
    """

  static func options(_ metadata: Metadata, bufferLimit: Int? = nil) -> CallOptions {
    var options = CallOptions(timeout: .seconds(60), metadata: metadata)
    options.retryBufferLimit = bufferLimit
    return options
  }

  /// A client-streaming call writing `messages`: the servicer's answer (the requests joined)
  /// or the call's error.
  static func collect(
    _ channel: GRPCChannel, _ messages: [String], _ options: CallOptions
  ) async -> Result<String, RPCError> {
    do {
      let response = try await channel.clientStreaming(
        path: collect, serializer: RawBytesSerializer(), deserializer: RawBytesDeserializer(),
        options: options
      ) { writer in
        for message in messages { try await writer.write(Array(message.utf8)) }
      }
      return .success(String(decoding: response.message, as: UTF8.self))
    } catch {
      return .failure(error as? RPCError ?? RPCError(code: .unknown, message: "\(error)"))
    }
  }

  /// The texts of the servicer's `kind` events of call `id`, by attempt number.
  static func texts(_ server: PeerServer, _ kind: String, _ id: String) -> [String: String] {
    var found: [String: String] = [:]
    for event in server.events where event.kind == kind && event["call"] == id {
      found[event["n"] ?? "?"] = event["texts"]
    }
    return found
  }

  static func waitForTexts(
    _ server: PeerServer, _ kind: String, _ id: String, attempt: Int
  ) async throws -> String? {
    let event = try await server.waitForEvent(kind, timeout: .seconds(30)) {
      $0["call"] == id && $0["n"] == "\(attempt)"
    }
    return event["texts"]
  }

  @Test(
    "a client-streaming call failing after reading every request is retried; each attempt receives every message, in order"
  )
  func clientStreamingRetried() async throws {
    try await RetryPolicyTests.withRetryServer(Self.retryConfig()) { server, channel in
      let outcome = await Self.collect(
        channel, Self.words, Self.options(RetryPolicyTests.hooks("collect", fail: 2)))
      #expect((try? outcome.get()) == Self.words.joined(), "\(outcome)")
      let attempts = try await RetryPolicyTests.attempts(server, "collect", count: 3)
      #expect(attempts.map { $0["previous"]! } == ["-", "1", "2"], "\(attempts)")
      for attempt in 1...3 {
        let texts = try await Self.waitForTexts(server, "collected", "collect", attempt: attempt)
        #expect(texts == Self.words.joined(separator: ","), "attempt \(attempt): \(server.events)")
      }
      #expect(channel.policies?.buffer.inUse == 0)
    }
  }

  @Test(
    "a bidirectional call failing after two requests is retried: the new attempt gets those replayed and the later ones live, in order, and the caller sees each response once"
  )
  func bidiRetried() async throws {
    try await RetryPolicyTests.withRetryServer(Self.retryConfig()) { server, channel in
      var hooks = RetryPolicyTests.hooks("chat", fail: 1)
      hooks.add("x-retry-read", "2")
      // Attempt 1 has failed before the rest is written.
      let echoed = await Self.chat(channel, Self.words, Self.options(hooks), pauseAfter: 2) {
        _ = try await server.waitForEvent("answered", timeout: .seconds(30)) {
          $0["call"] == "chat" && $0["n"] == "1"
        }
      }
      #expect(echoed.echoed == Self.words && echoed.error == nil, "\(echoed)")
      #expect(Self.texts(server, "received", "chat")["1"] == "alpha,bravo", "\(server.events)")
      let second = try await Self.waitForTexts(server, "received", "chat", attempt: 2)
      #expect(second == Self.words.joined(separator: ","), "\(server.events)")
      let attempts = try await RetryPolicyTests.settledAttempts(server, channel, "chat")
      #expect(attempts.map { $0["previous"]! } == ["-", "1"], "\(attempts)")
    }
  }

  @Test(
    "a call whose requests outgrow its buffer limit is committed: one attempt, which receives every message, and its failure is the call's"
  )
  func perCallLimitCommits() async throws {
    try await RetryPolicyTests.withRetryServer(Self.retryConfig()) { server, channel in
      // 5 + 5 + 7 bytes and their prefixes: 32 bytes, past a 25-byte limit at the third.
      let outcome = await Self.collect(
        channel, Array(Self.words.prefix(3)),
        Self.options(RetryPolicyTests.hooks("big", fail: 1), bufferLimit: 25))
      guard case .failure(let error) = outcome else {
        Issue.record("the committed call was retried: \(outcome)")
        return
      }
      #expect(error.code == .unavailable && error.message == "attempt 1 fails as asked", "\(error)")
      let attempts = try await RetryPolicyTests.settledAttempts(server, channel, "big")
      #expect(attempts.count == 1, "\(attempts)")
      #expect(Self.texts(server, "collected", "big")["1"] == "alpha,bravo,charlie")
      #expect(channel.policies?.buffer.inUse == 0)

      // The same call within its limit is retried.
      let small = await Self.collect(
        channel, Array(Self.words.prefix(3)),
        Self.options(RetryPolicyTests.hooks("small", fail: 1), bufferLimit: 64))
      #expect((try? small.get()) == "alphabravocharlie", "\(small)")
    }
  }

  @Test("a bidirectional call whose server sent one response and then failed is not retried")
  func committedByFirstResponse() async throws {
    try await RetryPolicyTests.withRetryServer(Self.retryConfig()) { server, channel in
      let (echoed, failure) = await Self.chat(
        channel, Self.words,
        Self.options(RetryPolicyTests.hooks("first", fail: 1, failAfterFirst: true)))
      #expect(echoed == ["alpha"])
      #expect(failure?.code == .unavailable, "\(String(describing: failure))")
      let attempts = try await RetryPolicyTests.settledAttempts(server, channel, "first")
      #expect(attempts.count == 1, "\(attempts)")
    }
  }

  @Test(
    "hedged client-streaming and bidirectional calls: each attempt receives every request, the first OK wins and the servicer sees the loser CANCELLED"
  )
  func hedged() async throws {
    try await RetryPolicyTests.withRetryServer(Self.hedgingConfig) { server, channel in
      // Attempt 1 would answer after 30 s; attempt 2, hedgingDelay later, at once.
      let hooks = { (id: String) in
        RetryPolicyTests.hooks(id, delay: .seconds(30), succeedAttempt: 2)
      }
      let collected = await Self.collect(channel, Self.words, Self.options(hooks("hedged-collect")))
      #expect((try? collected.get()) == Self.words.joined(), "\(collected)")

      let chatted = await Self.chat(channel, Self.words, Self.options(hooks("hedged-chat")))
      #expect(chatted.echoed == Self.words && chatted.error == nil, "\(chatted)")

      // Server-streaming too: its one request is the whole replay.
      let streamed = try await channel.serverStreaming(
        path: RetryPolicyTests.stream, request: Array("hi".utf8), serializer: RawBytesSerializer(),
        deserializer: RawBytesDeserializer(), options: Self.options(hooks("hedged-stream"))
      ) { responses in
        var count = 0
        for try await response in responses where response == Array("hi".utf8) { count += 1 }
        return count
      }
      #expect(streamed == 3)
      _ = try await server.waitForEvent("cancelled", timeout: .seconds(30)) {
        $0["call"] == "hedged-stream" && $0["n"] == "1"
      }

      let all = Self.words.joined(separator: ",")
      for (id, kind) in [("hedged-collect", "collected"), ("hedged-chat", "received")] {
        for attempt in 1...2 {
          let texts = try await Self.waitForTexts(server, kind, id, attempt: attempt)
          #expect(texts == all, "\(id) attempt \(attempt): \(server.events)")
        }
        let attempts = try await RetryPolicyTests.attempts(server, id, count: 2)
        #expect(attempts.map { $0["previous"]! } == ["-", "1"], "\(attempts)")
        _ = try await server.waitForEvent("cancelled", timeout: .seconds(30)) {
          $0["call"] == id && $0["n"] == "1"
        }
      }
    }
  }

  @Test(
    "the channel's buffer limit is shared: a call that would take it past the limit while another holds its replay is committed"
  )
  func channelLimitShared() async throws {
    try await withPeerServer("retry_server.py") { server in
      var options = ChannelOptions()
      options.serviceConfig = try ServiceConfig(json: Self.retryConfig())
      options.retryBufferSize = 150
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      let hundred = String(repeating: "x", count: 95)  // 100 bytes framed
      func hooks(_ id: String) -> Metadata {
        var hooks = RetryPolicyTests.hooks(id, fail: 1)
        hooks.add("x-retry-read", "1")
        return hooks
      }
      try await channel.bidirectionalStreaming(
        path: Self.chat, serializer: RawBytesSerializer(), deserializer: RawBytesDeserializer(),
        options: Self.options(hooks("holder"))
      ) { writer, responses in
        // The holder keeps 100 bytes for replay; its first attempt fails, its second waits.
        try await writer.write(Array(hundred.utf8))
        _ = try await server.waitForEvent("attempt", timeout: .seconds(30)) {
          $0["call"] == "holder" && $0["n"] == "2"
        }
        #expect(channel.policies?.buffer.inUse == 100)
        // Another call's 100 bytes do not fit beside them: it is committed, and not retried.
        let other = await Self.chat(channel, [hundred], Self.options(hooks("other")))
        #expect(other.error?.code == .unavailable, "\(other)")
        let otherAttempts = try await RetryPolicyTests.settledAttempts(server, channel, "other")
        #expect(otherAttempts.count == 1, "\(otherAttempts)")

        writer.finish()
        var echoed: [String] = []
        for try await response in responses {
          echoed.append(String(decoding: response, as: UTF8.self))
        }
        #expect(echoed == [hundred])
      }
      #expect(channel.policies?.buffer.inUse == 0)
      // Alone, the same call is retried.
      let alone = await Self.chat(channel, [hundred], Self.options(hooks("alone")))
      #expect(alone.error == nil && alone.echoed == [hundred], "\(alone)")
    }
  }

  /// A bidirectional call writing `messages` (running `pause` after the first `pauseAfter` of
  /// them), then finishing and reading: what it echoed and how it ended.
  static func chat(
    _ channel: GRPCChannel, _ messages: [String], _ options: CallOptions, pauseAfter: Int = -1,
    _ pause: () async throws -> Void = {}
  ) async -> (echoed: [String], error: RPCError?) {
    var echoed: [String] = []
    do {
      try await channel.bidirectionalStreaming(
        path: chat, serializer: RawBytesSerializer(), deserializer: RawBytesDeserializer(),
        options: options
      ) { writer, responses in
        for (index, message) in messages.enumerated() {
          if index == pauseAfter { try await pause() }
          try await writer.write(Array(message.utf8))
        }
        writer.finish()
        for try await response in responses {
          echoed.append(String(decoding: response, as: UTF8.self))
        }
      }
      return (echoed, nil)
    } catch {
      return (echoed, error as? RPCError ?? RPCError(code: .unknown, message: "\(error)"))
    }
  }
}
