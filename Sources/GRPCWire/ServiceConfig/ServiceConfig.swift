/// gRPC's service config (doc/service_config.md, proposal A6): per-method timeouts,
/// wait-for-ready, message size limits and a retry or hedging policy, and the channel's retry
/// throttle, parsed from its JSON form.
///
/// ```swift
/// options.serviceConfig = try ServiceConfig(json: """
///   {"methodConfig": [{"name": [{"service": "maps.fleetengine.v1.TripService"}],
///     "timeout": "5s", "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s",
///     "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}
///   """)
/// ```
///
/// A config that breaks a rule of the format throws INVALID_ARGUMENT naming the field
/// (`methodConfig[0].retryPolicy.maxAttempts: …`); members the format does not know are
/// ignored, as other implementations do.
public struct ServiceConfig: Sendable, Hashable {
  /// The method configs, each for the methods its names select.
  public var methodConfigs: [MethodConfig]
  /// The channel's retry throttle; nil: none.
  public var retryThrottling: RetryThrottling?

  public init(methodConfigs: [MethodConfig] = [], retryThrottling: RetryThrottling? = nil) {
    self.methodConfigs = methodConfigs
    self.retryThrottling = retryThrottling
  }

  /// The config for `method`: the one naming the service and method, else the one naming the
  /// service, else the one with an empty name (the default), else nil.
  public func methodConfig(for method: MethodDescriptor) -> MethodConfig? {
    var serviceMatch: MethodConfig?
    var defaultMatch: MethodConfig?
    for config in methodConfigs {
      for name in config.names {
        if name.service == method.service, name.method == method.method { return config }
        if name.service == method.service, name.method == nil, serviceMatch == nil {
          serviceMatch = config
        }
        if name.service == nil, defaultMatch == nil { defaultMatch = config }
      }
    }
    return serviceMatch ?? defaultMatch
  }

  /// How calls of the methods it names behave.
  public struct MethodConfig: Sendable, Hashable {
    /// Which methods: a service and a method, a whole service (no method), or every method
    /// (neither: the default config).
    public struct Name: Sendable, Hashable {
      public var service: String?
      public var method: String?

      public init(service: String? = nil, method: String? = nil) {
        self.service = service
        self.method = method
      }
    }

    public var names: [Name]
    /// The calls' deadline unless the call sets a shorter one.
    public var timeout: Duration?
    /// Whether calls wait for the channel to be ready (a call's own setting wins).
    public var waitForReady: Bool?
    /// The largest request and response messages.
    public var maxRequestMessageBytes: Int?
    public var maxResponseMessageBytes: Int?
    /// Retries or hedging; at most one of them.
    public var retryPolicy: RetryPolicy?
    public var hedgingPolicy: HedgingPolicy?

    public init(
      names: [Name], timeout: Duration? = nil, waitForReady: Bool? = nil,
      maxRequestMessageBytes: Int? = nil, maxResponseMessageBytes: Int? = nil,
      retryPolicy: RetryPolicy? = nil, hedgingPolicy: HedgingPolicy? = nil
    ) {
      self.names = names
      self.timeout = timeout
      self.waitForReady = waitForReady
      self.maxRequestMessageBytes = maxRequestMessageBytes
      self.maxResponseMessageBytes = maxResponseMessageBytes
      self.retryPolicy = retryPolicy
      self.hedgingPolicy = hedgingPolicy
    }
  }

  /// A6's retry policy: up to `maxAttempts` attempts (at most 5), the next one after a random
  /// delay up to `initialBackoff × backoffMultiplier^(n−1)`, capped at `maxBackoff`, when an
  /// attempt fails with one of `retryableStatusCodes` before response headers arrived.
  public struct RetryPolicy: Sendable, Hashable {
    public var maxAttempts: Int
    public var initialBackoff: Duration
    public var maxBackoff: Duration
    public var backoffMultiplier: Double
    public var retryableStatusCodes: Set<StatusCode>

    public init(
      maxAttempts: Int, initialBackoff: Duration, maxBackoff: Duration, backoffMultiplier: Double,
      retryableStatusCodes: Set<StatusCode>
    ) {
      self.maxAttempts = maxAttempts
      self.initialBackoff = initialBackoff
      self.maxBackoff = maxBackoff
      self.backoffMultiplier = backoffMultiplier
      self.retryableStatusCodes = retryableStatusCodes
    }
  }

  /// A6's hedging policy: up to `maxAttempts` attempts (at most 5), one more every
  /// `hedgingDelay` until one commits; an attempt failing with a code outside
  /// `nonFatalStatusCodes` ends the call.
  public struct HedgingPolicy: Sendable, Hashable {
    public var maxAttempts: Int
    public var hedgingDelay: Duration
    public var nonFatalStatusCodes: Set<StatusCode>

    public init(maxAttempts: Int, hedgingDelay: Duration = .zero, nonFatalStatusCodes: Set<StatusCode> = []) {
      self.maxAttempts = maxAttempts
      self.hedgingDelay = hedgingDelay
      self.nonFatalStatusCodes = nonFatalStatusCodes
    }
  }

  /// A6's retry throttle: a token count starting at `maxTokens`; each failed attempt takes 1,
  /// each success gives back `tokenRatio`; at or below half of `maxTokens` no retry or hedge
  /// starts.
  public struct RetryThrottling: Sendable, Hashable {
    public var maxTokens: Int
    public var tokenRatio: Double

    public init(maxTokens: Int, tokenRatio: Double) {
      self.maxTokens = maxTokens
      self.tokenRatio = tokenRatio
    }
  }
}
