import FleetSync
import Testing

@testable import GRPCWire
import GRPCTestingProtos
import PeerSupport

/// Client and server interceptors over a real connection to our server: the order they run
/// in, metadata they add, calls they refuse, and what they learn of a call's end.
@Suite("Interceptors", .timeLimit(.minutes(1)))
struct InterceptorTests {
  typealias Service = GRPCTesting.TestService

  /// Records what interceptors see, in order, across client and server.
  final class Journal: Sendable {
    let entries = PosixMutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
  }

  /// A client interceptor that journals `name>` before the call and `<name STATUS` after it,
  /// and adds `x-seen-by: name` to the call's metadata.
  struct Named: ClientInterceptor {
    let name: String
    let journal: Journal

    func intercept(
      _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
    ) async throws -> ClientCallSummary {
      journal.add("\(name)>")
      var call = call
      call.options.metadata.add("x-seen-by", name)
      do {
        let summary = try await next(call)
        journal.add("<\(name) \(summary.status.code)")
        return summary
      } catch let error as RPCError {
        journal.add("<\(name) \(error.code)")
        throw error
      }
    }
  }

  /// A server interceptor journaling `name>`, the client's `x-seen-by` values, and `<name`.
  struct ServerNamed: ServerInterceptor {
    let name: String
    let journal: Journal

    func intercept(_ context: ServerContext, next: (ServerContext) async throws -> Void)
      async throws
    {
      journal.add("\(name)> \(context.method.method) seen-by=\(context.requestMetadata["x-seen-by"].map { "\($0)" }.joined(separator: ","))")
      defer { journal.add("<\(name)") }
      try await next(context)
    }
  }

  /// Refuses every call with `code`, before it is made.
  struct Refusing: ClientInterceptor {
    let code: StatusCode
    func intercept(
      _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
    ) async throws -> ClientCallSummary {
      throw RPCError(code: code, message: "refused by policy for \(call.method.method)")
    }
  }

  /// Refuses calls without `x-api-key: open-sesame`.
  struct KeyCheck: ServerInterceptor {
    func intercept(_ context: ServerContext, next: (ServerContext) async throws -> Void)
      async throws
    {
      guard context.requestMetadata.first("x-api-key") == "open-sesame" else {
        throw RPCError(code: .unauthenticated, message: "no API key")
      }
      try await next(context)
    }
  }

  /// A server with `serverInterceptors`; UnaryCall counts its calls in `handled` and returns
  /// the client's `x-seen-by` values in trailers; StreamingOutputCall sends one response per
  /// parameter, `interval_us` after the previous one.
  func makeServer(
    _ serverInterceptors: [any ServerInterceptor] = [], method: [any ServerInterceptor] = [],
    handled: PosixMutex<Int> = PosixMutex(0)
  ) -> GRPCServer {
    var options = ServerOptions()
    options.interceptors = serverInterceptors
    let server = GRPCServer(options: options)
    server.register(unary: Service.unaryCall, interceptors: method) { _, context in
      handled.withLock { $0 += 1 }
      var trailers = Metadata()
      for value in context.requestMetadata["x-seen-by"] { trailers.add("x-echo", value) }
      context.setTrailingMetadata(trailers)
      return GRPCTesting.SimpleResponse()
    }
    server.registerStreamingOutput(payloads: false)
    return server
  }

  @Test("Channel interceptors run first, in order, then the call's; the server's before the method's")
  func ordering() async throws {
    let journal = Journal()
    let server = makeServer(
      [ServerNamed(name: "S1", journal: journal)], method: [ServerNamed(name: "S2", journal: journal)])
    let port = try await server.start()
    var options = ChannelOptions()
    options.interceptors = [Named(name: "A", journal: journal), Named(name: "B", journal: journal)]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    _ = try await channel.unary(
      Service.unaryCall, GRPCTesting.SimpleRequest(),
      options: CallOptions(interceptors: [Named(name: "C", journal: journal)]))
    #expect(
      journal.all == [
        "A>", "B>", "C>", "S1> UnaryCall seen-by=A,B,C", "S2> UnaryCall seen-by=A,B,C", "<S2", "<S1",
        "<C OK", "<B OK", "<A OK",
      ])
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("Metadata an interceptor adds reaches the handler, and the summary carries the trailers")
  func metadataAdded() async throws {
    let server = makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let response = try await channel.unary(
      Service.unaryCall, GRPCTesting.SimpleRequest(),
      options: CallOptions(interceptors: [Named(name: "tagger", journal: Journal())]))
    #expect(response.trailingMetadata["x-echo"] == ["tagger"])
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("A client interceptor's refusal is the caller's error, and nothing reaches the server")
  func clientRefusal() async throws {
    let handled = PosixMutex(0)
    let server = makeServer(handled: handled)
    let port = try await server.start()
    var options = ChannelOptions()
    options.interceptors = [Refusing(code: .permissionDenied)]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
    }
    #expect(error.code == .permissionDenied && error.message == "refused by policy for UnaryCall")
    #expect(handled.withLock { $0 } == 0)
    let opened = await channel.connectionsOpened()
    #expect(opened == 0, "a refused call must not even connect")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("A server interceptor sees the client's metadata, and its refusal is the call's status")
  func serverRefusal() async throws {
    let handled = PosixMutex(0)
    let server = makeServer([KeyCheck()], handled: handled)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
    }
    #expect(error.code == .unauthenticated && error.message == "no API key")
    #expect(handled.withLock { $0 } == 0, "the handler ran behind a refusing interceptor")
    _ = try await channel.unary(
      Service.unaryCall, GRPCTesting.SimpleRequest(),
      options: CallOptions(metadata: ["x-api-key": "open-sesame"]))
    #expect(handled.withLock { $0 } == 1)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// Keeps the summaries `next` returned.
  struct Recorder: ClientInterceptor {
    let summaries = PosixMutex<[ClientCallSummary]>([])
    func intercept(
      _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
    ) async throws -> ClientCallSummary {
      let summary = try await next(call)
      summaries.withLock { $0.append(summary) }
      return summary
    }
  }

  @Test("A streaming call's summary counts its responses; one the caller leaves early is CANCELLED")
  func streamingSummary() async throws {
    let server = makeServer()
    let port = try await server.start()
    let recorder = Recorder()
    var options = ChannelOptions()
    options.interceptors = [recorder]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: GRPCTesting.ResponseParameters(), count: 5)
    let read = try await channel.serverStreaming(Service.streamingOutputCall, request) { responses in
      var count = 0
      for try await _ in responses { count += 1 }
      return count
    }
    #expect(read == 5)
    var slow = GRPCTesting.ResponseParameters()
    slow.intervalUs = 60_000_000
    request.responseParameters = [GRPCTesting.ResponseParameters(), slow]
    _ = try await channel.serverStreaming(Service.streamingOutputCall, request) { responses in
      for try await _ in responses { break }
    }
    let summaries = recorder.summaries.withLock { $0 }
    try #require(summaries.count == 2)
    #expect(summaries[0].status.code == .ok)
    #expect(summaries[0].requestMessages == 1 && summaries[0].responseMessages == 5)
    #expect(summaries[1].status.code == .cancelled)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("Loop-driven calls run the channel's interceptors and still complete on the loop thread")
  func loopCall() async throws {
    let server = makeServer()
    let port = try await server.start()
    let journal = Journal()
    var options = ChannelOptions()
    options.interceptors = [Named(name: "L", journal: journal)]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    let loop = channel.eventLoop
    let (onLoop, trailersOK) = try await withCheckedThrowingContinuation {
      (done: CheckedContinuation<(Bool, Bool), any Error>) in
      loop.execute {
        do {
          _ = try channel.startUnary(
            Service.unaryCall, GRPCTesting.SimpleRequest(), options: CallOptions()
          ) { result in
            done.resume(returning: (loop.inEventLoop, (try? result.get()) != nil))
          }
        } catch {
          done.resume(throwing: error)
        }
      }
    }
    #expect(onLoop && trailersOK)
    #expect(journal.all == ["L>", "<L OK"])
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
