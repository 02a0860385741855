import GRPCObservability
import GRPCWire
import Hummingbird
import Logging
import Prometheus

/// `--metrics-port`: the simulator's server metrics (``ServerMetricsInterceptor``, so
/// `rpc_server_duration` by `rpc_method` and `rpc_grpc_status_code`) in Prometheus' text
/// format at `http://127.0.0.1:PORT/metrics`, served by Hummingbird.
struct MetricsEndpoint {
  let registry = PrometheusCollectorRegistry()
  let interceptor: ServerMetricsInterceptor
  let application: Application<RouterResponder<BasicRequestContext>>

  /// An endpoint on `127.0.0.1:port` (0: one the OS picks); `ready` gets the bound port once
  /// it listens.
  init(port: Int, ready: @escaping @Sendable (Int) async -> Void) {
    let registry = self.registry
    interceptor = ServerMetricsInterceptor(factory: PrometheusMetricsFactory(registry: registry))
    let router = Router()
    router.get("metrics") { _, _ -> Response in
      Response(
        status: .ok,
        headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
    application = Application(
      router: router,
      configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
      onServerRunning: { channel in await ready(channel.localAddress?.port ?? port) },
      logger: Logger.disabled)
  }
}
