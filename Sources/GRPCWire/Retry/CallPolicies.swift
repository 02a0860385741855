internal import CoreMetrics
internal import Synchronization

/// What a channel whose service config has retry or hedging policies keeps for them: the
/// config, the retry throttle, and the attempt metrics per method. A channel without such a
/// config has none, and its calls pay one nil check.
///
/// Metrics (swift-metrics, to ``ChannelOptions/metricsFactory``), per call under a policy, with
/// dimensions `rpc.system` = `grpc`, `rpc.service` and `rpc.method`:
/// - `rpc.client.attempts_per_rpc` (a recorder): the attempts the call started;
/// - `rpc.client.retries` (a counter): attempts started by the retry policy;
/// - `rpc.client.hedges` (a counter): attempts started by the hedging policy, the first not
///   counted.
final class CallPolicies: Sendable {
  let serviceConfig: ServiceConfig
  let throttle: RetryThrottle?
  /// The request bytes the channel's streaming calls keep for replay (A6's per-channel limit).
  let buffer: RetryBufferBudget
  private let factory: any MetricsFactory
  private let made = Mutex<[String: AttemptMetrics]>([:])

  /// A method's retry or hedging policy.
  enum Policy: Sendable {
    case retry(ServiceConfig.RetryPolicy)
    case hedging(ServiceConfig.HedgingPolicy)
  }

  /// nil unless `options.serviceConfig` gives some method a retry or hedging policy.
  init?(_ options: ChannelOptions) {
    guard let config = options.serviceConfig,
      config.methodConfigs.contains(where: { $0.retryPolicy != nil || $0.hedgingPolicy != nil })
    else { return nil }
    serviceConfig = config
    throttle = config.retryThrottling.map(RetryThrottle.init)
    buffer = RetryBufferBudget(limit: options.retryBufferSize)
    factory = options.metricsFactory
  }

  /// The policy of calls to `path` and their method config; nil when the method has neither
  /// policy.
  func policy(for path: String) -> (Policy, ServiceConfig.MethodConfig)? {
    guard let method = serviceConfig.methodConfig(for: MethodDescriptor(path: path)) else {
      return nil
    }
    if let retry = method.retryPolicy { return (.retry(retry), method) }
    if let hedging = method.hedgingPolicy { return (.hedging(hedging), method) }
    return nil
  }

  /// The attempt metrics of `path`'s method, made once and kept (a bounded number of methods).
  func metrics(for path: String) -> AttemptMetrics {
    if let known = made.withLock({ $0[path] }) { return known }
    let method = MethodDescriptor(path: path)
    let dimensions = [
      ("rpc.system", "grpc"), ("rpc.service", method.service), ("rpc.method", method.method),
    ]
    let new = AttemptMetrics(
      attempts: Recorder(
        label: "rpc.client.attempts_per_rpc", dimensions: dimensions, factory: factory),
      retries: Counter(label: "rpc.client.retries", dimensions: dimensions, factory: factory),
      hedges: Counter(label: "rpc.client.hedges", dimensions: dimensions, factory: factory))
    return made.withLock { made in
      if let raced = made[path] { return raced }
      if made.count < 256 { made[path] = new }
      return new
    }
  }
}

/// One method's attempt metrics (see ``CallPolicies``).
struct AttemptMetrics: Sendable {
  let attempts: Recorder
  let retries: Counter
  let hedges: Counter
}
