import FleetSync
import Foundation
import GRPCTestingProtos
import ProtoRuntime
import GRPCWire
import PeerSupport
import Testing

/// Responses that break gRPC, from raw_h2_server.py (a scripted h2 server): each call ends
/// promptly with the status the gRPC spec prescribes and a message naming the cause, nothing
/// crashes, and the connection serves the next call whenever HTTP/2 lets it survive.
///
/// Codes come from gRPC's PROTOCOL-HTTP2.md, doc/statuscodes.md and
/// doc/http-grpc-status-mapping.md (the HTTP mapping applies only when `grpc-status` is
/// absent), not from grpcio's client, which is lenient in several of these cases (see the
/// table at the top of raw_h2_server.py).
@Suite("Bad responses from a raw HTTP/2 server", .suitePeers("raw_h2_server.py"))
struct BadResponseTests {
  static let raw = "raw_h2_server.py"

  /// One scenario of raw_h2_server.py and how the call must end.
  struct BadResponse: Sendable, CustomTestStringConvertible {
    let scenario: String
    let code: StatusCode
    /// The message must contain at least one of these (case-insensitive): the cause by name.
    /// Several only where the wording is free but the cause is not.
    let mentions: [String]
    /// The spec's reason for `code`.
    let why: String
    /// The HTTP status the error must keep, for a response that was not gRPC.
    var httpStatus: Int? = nil

    var testDescription: String { "\(scenario) → \(code.name)" }
  }

  // Words that name "the stream ended inside a message" in any reasonable wording.
  static let endedMidMessage = [
    "truncated", "incomplete", "mid-message", "mid-frame", "partial", "inside a message",
    "before the message", "unfinished",
  ]

  static let table: [BadResponse] = [
    BadResponse(
      scenario: "wrong_content_type", code: .unknown, mentions: ["text/html"],
      why: "200 with a content-type that is not application/grpc is not a gRPC response; the "
        + "HTTP mapping gives 200 no row, so UNKNOWN (\"all other codes\"), as grpc-java does"),
    BadResponse(
      scenario: "http_503", code: .unavailable, mentions: ["503"],
      why: "no grpc-status: http-grpc-status-mapping.md maps 503 to UNAVAILABLE",
      httpStatus: 503),
    BadResponse(
      scenario: "truncated_prefix", code: .internalError, mentions: endedMidMessage + ["prefix"],
      why: "trailers after 3 of the 5 prefix bytes: the stream ended mid-frame, a malformed "
        + "response (grpc-java: INTERNAL \"Encountered end-of-stream mid-frame\"); not a "
        + "cardinality violation, since a message had begun"),
    BadResponse(
      scenario: "compressed_without_encoding", code: .internalError, mentions: ["grpc-encoding"],
      why: "PROTOCOL-HTTP2.md: without Message-Encoding the Compressed-Flag must be 0"),
    BadResponse(
      scenario: "unsupported_encoding", code: .internalError, mentions: ["snappy"],
      why: "the server used an encoding the client never offered in grpc-accept-encoding; "
        + "the message cannot be read (UNIMPLEMENTED is the server's answer to a request in an "
        + "unknown encoding, not the client's to a response)"),
    BadResponse(
      scenario: "longer_than_announced", code: .internalError, mentions: ["flag"],
      why: "the prefix announces 10 bytes and 20 follow: the first 10 are a message and the "
        + "next 10 start a new prefix whose flag byte is 'A' (65), neither 0 nor 1 — a framing "
        + "error, INTERNAL"),
    BadResponse(
      scenario: "shorter_than_announced", code: .internalError,
      mentions: endedMidMessage + ["announced", "100 bytes"],
      why: "100 bytes announced, 10 sent, then trailers: the stream ended mid-message, as "
        + "truncated_prefix"),
    BadResponse(
      scenario: "reset_mid_message", code: .internalError, mentions: ["INTERNAL_ERROR"],
      why: "PROTOCOL-HTTP2.md errors table: RST_STREAM INTERNAL_ERROR → INTERNAL"),
    BadResponse(
      scenario: "trailers_only", code: .notFound, mentions: ["not found here"],
      why: "a valid Trailers-Only response: the server's own status and message"),
    BadResponse(
      scenario: "missing_grpc_status", code: .unknown, mentions: ["grpc-status"],
      why: "trailers without grpc-status on HTTP 200: the mapping's \"all other codes\" row, "
        + "UNKNOWN (grpc-java: \"missing GRPC status in response\")"),
    BadResponse(
      scenario: "invalid_grpc_status", code: .unknown, mentions: ["abc"],
      why: "statuscodes.md: \"Error parsing returned status\" → UNKNOWN"),
    BadResponse(
      scenario: "rst_refused", code: .unavailable, mentions: ["REFUSED_STREAM"],
      why: "PROTOCOL-HTTP2.md: REFUSED_STREAM → UNAVAILABLE (nothing was processed)"),
    // Response cardinality, beyond the issue's list: statuscodes.md "Response cardinality
    // violation (method requires exactly one response but server sent some other number of
    // responses)" → UNIMPLEMENTED, for zero responses and for two alike.
    BadResponse(
      scenario: "trailers_only_ok", code: .unimplemented, mentions: cardinality,
      why: "OK with no message on a unary call: response cardinality violation"),
    BadResponse(
      scenario: "two_messages", code: .unimplemented, mentions: cardinality,
      why: "two messages on a unary call: response cardinality violation"),
  ]

  // Words that name "a unary call needs exactly one response".
  static let cardinality = [
    "cardinality", "exactly one", "one message", "more than one", "no message", "sent 0",
    "sent 2",
  ]

  @Test(
    "a broken response ends the call with the spec's status; the connection serves the next",
    .timeLimit(.minutes(1)), arguments: table)
  func badResponse(_ row: BadResponse) async throws {
    let raw = try SuitePeers.peer(Self.raw)
    let id = "\(row.scenario)-\(UUID().uuidString.prefix(8))"
    let timeout = Duration.seconds(5)

    let error = try #require(
      await #expect(throws: RPCError.self, "\(row.scenario) must fail the call") {
        try await raw.channel.scenario(row.scenario, caseID: id, timeout: timeout)
      })
    #expect(
      error.code != .deadlineExceeded, "the call hung until its \(timeout) deadline: \(error)")
    #expect(error.code == row.code, "\(row.why); got \(error)")
    #expect(
      row.mentions.contains { error.message.lowercased().contains($0.lowercased()) },
      "the message should name the cause (one of \(row.mentions)): \(error.message)")
    #expect(!error.isInterrupted, "a stream-level problem must not look like a lost connection")
    if let httpStatus = row.httpStatus {
      #expect(error.httpStatus == httpStatus)
    }

    let request = Array("after \(row.scenario)".utf8)
    let echo = try await raw.channel.scenario(
      "ok_echo", request: request, caseID: "\(id)-next", timeout: timeout)
    #expect(echo.message == request)
    let failed = try await raw.server.requestEvent(caseID: id)
    let next = try await raw.server.requestEvent(caseID: "\(id)-next")
    #expect(
      failed["conn"] != nil && next["conn"] == failed["conn"],
      "the next call should reuse the connection: \(failed) / \(next)")
  }

  @Test(
    "a second response to a unary call fails it at once with UNIMPLEMENTED, without waiting for the server's end",
    .timeLimit(.minutes(1)))
  func secondResponseFailsAtOnce() async throws {
    let raw = try SuitePeers.peer(Self.raw)
    let start = ContinuousClock.now
    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await raw.channel.scenario(
          "two_messages_open", caseID: "two_messages_open-\(UUID().uuidString.prefix(8))",
          timeout: .seconds(20))
      })
    let waited = ContinuousClock.now - start
    #expect(error.code == .unimplemented, "\(error)")
    #expect(waited < .seconds(5), "the call waited \(waited): for the deadline, not the second message")
  }

  @Test(
    "a server stream that ends inside a message fails with INTERNAL instead of ending OK",
    .timeLimit(.minutes(1)), arguments: ["truncated_prefix", "shorter_than_announced"])
  func streamEndsMidMessage(_ scenario: String) async throws {
    let raw = try SuitePeers.peer(Self.raw)
    var messages = 0
    let error = try #require(
      await #expect(throws: RPCError.self, "OK trailers must not hide the unfinished message") {
        try await raw.channel.serverStreaming(
          path: "/scenario/\(scenario)", request: Array("ping".utf8),
          serializer: RawBytesSerializer(), deserializer: RawBytesDeserializer(),
          options: CallOptions(timeout: .seconds(5))
        ) { responses in
          for try await _ in responses { messages += 1 }
        }
      })
    #expect(messages == 0)
    #expect(error.code == .internalError, "\(error)")
    #expect(
      Self.endedMidMessage.contains { error.message.lowercased().contains($0) },
      "\(error.message)")
  }

  @Test(
    "a loop-driven server stream hears no message after a framing error ended it",
    .timeLimit(.minutes(1)))
  func loopStreamFramingError() async throws {
    let raw = try SuitePeers.peer(Self.raw)
    let channel = raw.channel
    let loop = channel.eventLoop
    let method = ProtoMethod<GRPCTesting.SimpleRequest, GRPCTesting.SimpleResponse>(
      path: "/scenario/bad_flag_then_message", kind: .serverStreaming)
    // Messages heard, those heard after the end, and the end.
    let seen = PosixMutex<(messages: Int, afterEnd: Int, end: RPCError?)>((0, 0, nil))
    let ended: RPCError? = try await withCheckedThrowingContinuation { continuation in
      loop.execute {
        do {
          // Raw bytes: any message read, garbage or not, would reach onMessage.
          _ = try channel.startServerStreaming(
            method, GRPCTesting.SimpleRequest(),
            prepared: channel.prepare(
              path: method.path, options: CallOptions(timeout: .seconds(5))),
            deserializer: RawBytesDeserializer(),
            onMessage: { _ in
              seen.withLock { seen in
                seen.messages += 1
                if seen.end != nil { seen.afterEnd += 1 }
              }
            },
            onEnd: { error in
              seen.withLock { $0.end = error }
              continuation.resume(returning: error)
            })
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
    // A message read after the end would have been queued on the loop before this runs.
    for _ in 0..<2 {
      await withCheckedContinuation { done in loop.execute { done.resume() } }
    }
    let error = try #require(ended)
    #expect(error.code == .internalError, "\(error)")
    #expect(error.message.contains("flag"), "\(error.message)")
    let counts = seen.withLock { ($0.messages, $0.afterEnd) }
    #expect(counts.0 == 0 && counts.1 == 0, "\(counts)")
  }

  @Test(
    "a connection closed mid-call: interrupted UNAVAILABLE, then a new connection serves",
    .timeLimit(.minutes(1)))
  func connectionClosedMidCall() async throws {
    let raw = try SuitePeers.peer(Self.raw)
    // Its own channel: this scenario takes the whole connection down.
    let channel = raw.makeChannel()
    defer { channel.close() }
    let id = "close_mid_call-\(UUID().uuidString.prefix(8))"

    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await channel.scenario("close_mid_call", caseID: id)
      })
    #expect(error.code == .unavailable, "\(error)")
    #expect(error.isInterrupted, "\(error)")
    #expect(error.message.contains("interrupted"), "\(error.message)")
    #expect(error.httpStatus == nil)

    let request = Array("after close_mid_call".utf8)
    let echo = try await channel.scenario("ok_echo", request: request, caseID: "\(id)-next")
    #expect(echo.message == request)
    let lost = try await raw.server.requestEvent(caseID: id)
    let next = try await raw.server.requestEvent(caseID: "\(id)-next")
    #expect(lost["conn"] != nil && next["conn"] != lost["conn"], "\(lost) / \(next)")
    _ = try await raw.server.waitForEvent("connection_closed", timeout: .seconds(5)) {
      $0["conn"] == lost["conn"]
    }
  }

  @Test(
    "a server that never answers: DEADLINE_EXCEEDED after 200 ms and RST_STREAM CANCEL",
    .timeLimit(.minutes(1)))
  func noResponse() async throws {
    let raw = try SuitePeers.peer(Self.raw)
    let id = "no_response-\(UUID().uuidString.prefix(8))"
    // A channel of its own, connected by a first call: a deadline that passed while the
    // connection was still being set up (the Python server is slow on a loaded machine, and
    // other tests' scenarios close the suite channel's connection) would fail the call before
    // it had a stream, and the server would see neither the request nor the reset.
    let channel = GRPCChannel(host: "127.0.0.1", port: raw.server.port)
    defer { channel.close() }
    _ = try await channel.scenario("ok_echo", caseID: "\(id)-first")

    let start = ContinuousClock.now
    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await channel.scenario("no_response", caseID: id, timeout: .milliseconds(200))
      })
    let elapsed = ContinuousClock.now - start
    #expect(error.code == .deadlineExceeded, "\(error)")
    #expect(error.message.contains("deadline"), "\(error.message)")
    #expect(
      elapsed >= .milliseconds(200) && elapsed < .seconds(2), "ended after \(elapsed)")

    let request = try await raw.server.requestEvent(caseID: id)
    let reset = try await raw.server.waitForEvent(
      "rst_stream", path: "/scenario/no_response", timeout: .seconds(5)
    ) { $0["conn"] == request["conn"] && $0["stream"] == request["stream"] }
    #expect(reset["from"] == "client" && reset["code"] == "CANCEL", "\(reset)")

    let echo = try await channel.scenario("ok_echo", caseID: "\(id)-next")
    #expect(echo.message == Array("ping".utf8))
  }

  @Test(
    "a stream refused every time is sent again eight times, the later ones further apart, then fails UNAVAILABLE",
    .timeLimit(.minutes(1)))
  func refusedAgainAndAgain() async throws {
    let raw = try SuitePeers.peer(Self.raw)
    let id = "rst_refused-\(UUID().uuidString.prefix(8))"

    let start = ContinuousClock.now
    let error = try #require(
      await #expect(throws: RPCError.self) {
        try await raw.channel.scenario("rst_refused", caseID: id, timeout: .seconds(20))
      })
    let elapsed = ContinuousClock.now - start
    #expect(error.code == .unavailable, "\(error)")
    // Eight retries: the first at once, the next seven after 10, 20, … 640 ms, 1,270 ms in
    // all.
    #expect(elapsed >= .milliseconds(1_270), "all nine attempts within \(elapsed)")
    // The call can end before the server has logged its ninth request: wait for the ninth
    // (at most 10 s), then count them all.
    _ = try await raw.server.waitForEvents("request", count: 9, timeout: .seconds(10)) {
      $0.header("x-fleet-case") == id
    }
    let attempts = raw.server.events.filter {
      $0.kind == "request" && $0.header("x-fleet-case") == id
    }.count
    #expect(attempts == 9, "\(attempts) attempts")
  }

  @Test(
    "a channel closed while a refused call waits to be sent again ends the call at once",
    .timeLimit(.minutes(1)))
  func closedWhileRetrying() async throws {
    let raw = try SuitePeers.peer(Self.raw)
    let id = "rst_refused-close-\(UUID().uuidString.prefix(8))"
    // A channel of its own, with its own loop: closing it stops the loop, and a retry left to
    // a loop timer would never fire.
    let channel = GRPCChannel(host: "127.0.0.1", port: raw.server.port)
    let call = Task {
      try await channel.scenario("rst_refused", caseID: id, timeout: .seconds(30))
    }
    // The fifth attempt (stream 9 on the one connection) is refused at once; the next waits
    // 80 ms, and the close comes within that wait.
    _ = try await raw.server.waitForEvent("request", timeout: .seconds(10)) {
      $0.header("x-fleet-case") == id && $0["stream"] == "9"
    }
    channel.close()
    let closedAt = ContinuousClock.now
    let result = await call.result
    let ended = ContinuousClock.now - closedAt
    #expect(ended < .seconds(5), "the call ended \(ended) after the close")
    guard case .failure(let error as RPCError) = result else {
      Issue.record("the call did not fail with an RPCError: \(result)")
      return
    }
    #expect(error.code == .unavailable || error.code == .cancelled, "\(error)")
  }
}
