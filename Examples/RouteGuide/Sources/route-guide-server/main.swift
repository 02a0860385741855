import Foundation
import GRPCWire
import RouteGuideCommon
import RouteGuideProtos

// route-guide-server [--port N] [--features FILE]
//
// Serves routeguide.RouteGuide on 127.0.0.1:N (default 10000; 0: a port the OS picks) with the
// features of FILE (default route_guide_db.json), prints `LISTENING <port>` once it listens,
// and stops on SIGTERM or SIGINT.

let options = Options.parse(tool: "route-guide-server")

let features: [Routeguide.Feature]
do {
  features = try Features.load(options.featuresPath)
} catch {
  FileHandle.standardError.write(
    Data("route-guide-server: \(options.featuresPath): \(error)\n".utf8))
  exit(1)
}

// SIGTERM and SIGINT end the server; caught before the port is announced, so a signal right
// after it cannot kill us. Calls in flight get a second to finish.
let (stop, stopped) = AsyncStream<Void>.makeStream()
let signalSources = [SIGTERM, SIGINT].map { signalNumber in
  signal(signalNumber, SIG_IGN)
  let source = DispatchSource.makeSignalSource(signal: signalNumber)
  source.setEventHandler { stopped.yield() }
  source.resume()
  return source
}

let server = GRPCServer()
server.register(RouteGuideService(features: features))
let bound = try await server.start(host: "127.0.0.1", port: options.port)
print("LISTENING \(bound)")
// Whoever started us may read this line from a pipe: do not leave it in stdout's buffer.
fflush(nil)
for await _ in stop { break }
await server.shutdown(gracePeriod: .seconds(1))
for source in signalSources { source.cancel() }
