import FleetShare
import Foundation
import Logging
import ServiceLifecycle

/// The drain on SIGTERM (or SIGINT), as the first service the group shuts down: the replica
/// turns `/readyz` 503, refuses new viewers with 503 and ends every event stream with a
/// `retry:` hint; then a short linger lets requests already on their way get that 503 (which
/// a balancer retries elsewhere) rather than a refused connection, and the HTTP server and
/// the follows stop after it. The service group bounds the whole shutdown by
/// `--drain-seconds`.
struct DrainOnShutdown: Service {
  let replica: ShareReplica
  let linger: Duration
  let logger: Logger

  func run() async throws {
    // Returns when shutdown starts; throws when the group is cancelled instead.
    try await gracefulShutdown()
    var logger = self.logger
    logger[metadataKey: "instance"] = "\(replica.instanceName ?? "unnamed")"
    let ended = replica.drain(retryAfterMilliseconds: 500)
    logger.notice("draining: /readyz is 503, viewers go elsewhere", metadata: ["streams": "\(ended)"])
    try? await Task.sleep(for: linger)
    logger.notice("drained", metadata: ["open streams": "\(replica.openStreams)"])
  }
}
