internal import Logging

/// What a server shares with its connections on every loop: the handlers, options and glitch
/// buckets, fixed when it starts listening, and the way back to its core.
///
/// The core (``ServerCore``) is loop-only, on the accepting loop; a connection lives on any of
/// the server's loops, and reads what it needs of the server here instead, from its own. A
/// class: each connection holds one reference and reads it per request, where a struct of
/// these fields (the options alone are some 25) would be copied, each reference retained.
final class ServerShared: Sendable {
  /// The server's core, reached on its loop only.
  let core: LoopBound<ServerCore>
  /// The server's methods by `:path`, as they were when it started.
  let handlers: [String: ServerMethod]
  let options: ServerOptions
  let logger: Logger
  /// The glitch buckets of client addresses, shared by the connections of every loop; nil
  /// when ``ServerOptions/glitchLimit`` is.
  let peerGlitches: PeerGlitchBuckets?

  init(
    core: LoopBound<ServerCore>, handlers: [String: ServerMethod], options: ServerOptions,
    logger: Logger, peerGlitches: PeerGlitchBuckets?
  ) {
    self.core = core
    self.handlers = handlers
    self.options = options
    self.logger = logger
    self.peerGlitches = peerGlitches
  }

  func handler(for path: String) -> ServerMethod? { handlers[path] }

  /// On any loop: the connection `id` names closed its socket; it leaves the core's table on
  /// the core's loop (at once when that is the caller's).
  func connectionClosed(_ id: ObjectIdentifier) {
    let core = self.core
    if core.loop.inEventLoop {
      core.value.connectionClosed(id)
    } else {
      core.loop.execute { core.value.connectionClosed(id) }
    }
  }
}
