import GRPCWire

// Built without package access, as LoopDrivenCallTests.swift says: public API only.

extension LoopDrivenCallTests {
  /// Starts `server`, runs `body` with a channel to it on a fresh loop named `loopName` (its
  /// options made by `options` for that loop), then closes the channel, stops the loop and
  /// shuts the server down, whether `body` threw or not.
  static func withChannel(
    to server: GRPCServer, loopName: String,
    options: (EventLoop) -> ChannelOptions = { _ in ChannelOptions() },
    _ body: (GRPCChannel) async throws -> Void
  ) async throws {
    let port = try await server.start()
    let loop = EventLoop(name: loopName)
    let channel = GRPCChannel(
      host: "127.0.0.1", port: port, options: options(loop), eventLoop: loop)
    let outcome: Result<Void, any Error>
    do { outcome = .success(try await body(channel)) } catch { outcome = .failure(error) }
    channel.close()
    loop.shutdown()
    await server.shutdown(gracePeriod: .seconds(1))
    try outcome.get()
  }
}
