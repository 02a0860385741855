/// The service config's JSON form (doc/service_config.md; A6 for the retry and hedging
/// policies and the throttle), checked rule by rule: each broken rule is INVALID_ARGUMENT
/// naming the field by its path (`methodConfig[1].retryPolicy.initialBackoff`).
extension ServiceConfig {
  /// The most attempts A6 allows; larger `maxAttempts` are taken as this.
  public static let maxAttemptsLimit = 5

  /// Parses a service config. Throws INVALID_ARGUMENT for text that is not JSON, and for a
  /// field that breaks the format's rules, naming it.
  public init(json: String) throws(RPCError) {
    let root: JSONValue
    do {
      root = try JSONValue.parse(json)
    } catch {
      throw RPCError(code: .invalidArgument, message: "service config: \(error.message)")
    }
    let members = try ConfigField(root, path: "").object()
    var configs: [MethodConfig] = []
    var seen: [MethodConfig.Name: Int] = [:]
    for (index, field) in try (members["methodConfig"]?.array() ?? []).enumerated() {
      let config = try Self.methodConfig(field)
      for (nameIndex, name) in config.names.enumerated() {
        if let first = seen[name] {
          throw field.member("name").element(nameIndex).invalid(
            "names a method that methodConfig[\(first)] names already")
        }
        seen[name] = index
      }
      configs.append(config)
    }
    methodConfigs = configs
    retryThrottling = try members["retryThrottling"].map { (field) throws(RPCError) in
      let throttle = try field.object()
      guard let tokens = throttle["maxTokens"] else { throw field.invalid("needs maxTokens") }
      guard let ratio = throttle["tokenRatio"] else { throw field.invalid("needs tokenRatio") }
      let maxTokens = try tokens.integer(in: 1...1000)
      let tokenRatio = try ratio.number()
      guard tokenRatio > 0 else { throw ratio.invalid("must be greater than 0") }
      // A6: up to three decimal places count; more are dropped.
      return RetryThrottling(maxTokens: maxTokens, tokenRatio: (tokenRatio * 1000).rounded(.down) / 1000)
    }
  }

  private static func methodConfig(_ field: ConfigField) throws(RPCError) -> MethodConfig {
    let members = try field.object()
    var names: [MethodConfig.Name] = []
    for name in try members["name"]?.array() ?? [] {
      let parts = try name.object()
      let service = try parts["service"]?.string()
      let method = try parts["method"]?.string()
      if method != nil, service?.isEmpty ?? true {
        throw name.invalid("a method needs its service")
      }
      names.append(
        MethodConfig.Name(
          service: service?.isEmpty == false ? service : nil,
          method: method?.isEmpty == false ? method : nil))
    }
    guard !names.isEmpty else { throw field.invalid("needs a non-empty name list") }
    var config = MethodConfig(names: names)
    config.timeout = try members["timeout"]?.duration(allowingZero: true)
    config.waitForReady = try members["waitForReady"]?.bool()
    config.maxRequestMessageBytes = try members["maxRequestMessageBytes"]?.integer(in: 0...Int(Int32.max))
    config.maxResponseMessageBytes = try members["maxResponseMessageBytes"]?.integer(in: 0...Int(Int32.max))
    if members["retryPolicy"] != nil, let hedging = members["hedgingPolicy"] {
      throw hedging.invalid("cannot go with retryPolicy: a method retries or hedges")
    }
    if let retry = members["retryPolicy"] {
      let policy = try retry.object()
      func required(_ name: String) throws(RPCError) -> ConfigField {
        guard let value = policy[name] else { throw retry.invalid("needs \(name)") }
        return value
      }
      let multiplierField = try required("backoffMultiplier")
      let multiplier = try multiplierField.number()
      guard multiplier > 0 else { throw multiplierField.invalid("must be greater than 0") }
      let codesField = try required("retryableStatusCodes")
      let codes = try codesField.statusCodes()
      guard !codes.isEmpty else { throw codesField.invalid("must name at least one status code") }
      config.retryPolicy = RetryPolicy(
        maxAttempts: try required("maxAttempts").attempts(),
        initialBackoff: try required("initialBackoff").duration(allowingZero: false),
        maxBackoff: try required("maxBackoff").duration(allowingZero: false),
        backoffMultiplier: multiplier, retryableStatusCodes: codes)
    }
    if let hedging = members["hedgingPolicy"] {
      let policy = try hedging.object()
      guard let attempts = policy["maxAttempts"] else { throw hedging.invalid("needs maxAttempts") }
      config.hedgingPolicy = HedgingPolicy(
        maxAttempts: try attempts.attempts(),
        hedgingDelay: try policy["hedgingDelay"]?.duration(allowingZero: true) ?? .zero,
        nonFatalStatusCodes: try policy["nonFatalStatusCodes"]?.statusCodes() ?? [])
    }
    return config
  }
}

/// One value of the config with its path, for messages.
struct ConfigField {
  let value: JSONValue
  let path: String

  init(_ value: JSONValue, path: String) {
    self.value = value
    self.path = path
  }

  func invalid(_ why: String) -> RPCError {
    RPCError(
      code: .invalidArgument,
      message: path.isEmpty ? "service config: \(why)" : "service config: \(path): \(why)")
  }

  /// A field for member `name` of this object (which need not exist: for messages).
  func member(_ name: String) -> ConfigField {
    ConfigField(.null, path: path.isEmpty ? name : "\(path).\(name)")
  }

  func element(_ index: Int) -> ConfigField {
    ConfigField(.null, path: "\(path)[\(index)]")
  }

  func object() throws(RPCError) -> [String: ConfigField] {
    guard case .object(let members) = value else { throw invalid("must be an object, not \(value.kind)") }
    var result: [String: ConfigField] = [:]
    for (key, value) in members { result[key] = ConfigField(value, path: member(key).path) }
    return result
  }

  func array() throws(RPCError) -> [ConfigField] {
    guard case .array(let values) = value else { throw invalid("must be an array, not \(value.kind)") }
    return values.enumerated().map { ConfigField($1, path: element($0).path) }
  }

  func string() throws(RPCError) -> String {
    guard case .string(let text) = value else { throw invalid("must be a string, not \(value.kind)") }
    return text
  }

  func bool() throws(RPCError) -> Bool {
    guard case .bool(let flag) = value else { throw invalid("must be true or false, not \(value.kind)") }
    return flag
  }

  func number() throws(RPCError) -> Double {
    guard case .number(let text) = value, let number = Double(text), number.isFinite else {
      throw invalid("must be a number, not \(value.kind)")
    }
    return number
  }

  /// An integer within `range`, as a JSON number or (proto3 JSON's 64-bit form) a string.
  func integer(in range: ClosedRange<Int>) throws(RPCError) -> Int {
    let text: String
    switch value {
    case .number(let digits), .string(let digits): text = digits
    default: throw invalid("must be an integer, not \(value.kind)")
    }
    guard let integer = Int(text) else { throw invalid("must be an integer, not \(text)") }
    guard range.contains(integer) else {
      throw invalid("must be within \(range.lowerBound)...\(range.upperBound), not \(integer)")
    }
    return integer
  }

  /// `maxAttempts`: at least 2; above ``ServiceConfig/maxAttemptsLimit`` it is taken as that.
  func attempts() throws(RPCError) -> Int {
    min(try integer(in: 2...Int.max), ServiceConfig.maxAttemptsLimit)
  }

  /// A protobuf JSON duration: decimal seconds with up to 9 fractional digits and an `s`
  /// (`"0.25s"`, `"30s"`); zero only when `allowingZero`.
  func duration(allowingZero: Bool) throws(RPCError) -> Duration {
    guard case .string(let text) = value else {
      throw invalid("must be a duration string such as \"1.5s\", not \(value.kind)")
    }
    let bad = invalid("must be a duration such as \"1.5s\" (seconds, up to 9 decimals), not \"\(text)\"")
    guard text.hasSuffix("s") else { throw bad }
    let number = text.dropLast()
    let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit),
      let seconds = Int64(whole), seconds <= 315_576_000_000
    else { throw bad }
    var nanoseconds: Int64 = 0
    if parts.count == 2 {
      let fraction = parts[1]
      guard (1...9).contains(fraction.count), fraction.allSatisfy(\.isASCIIDigit) else { throw bad }
      nanoseconds = Int64(fraction + String(repeating: "0", count: 9 - fraction.count))!
    }
    let duration = Duration.seconds(seconds) + .nanoseconds(nanoseconds)
    guard allowingZero || duration > .zero else { throw invalid("must be greater than 0s") }
    return duration
  }

  /// Status codes by name (`"UNAVAILABLE"`) or number (14).
  func statusCodes() throws(RPCError) -> Set<StatusCode> {
    var codes: Set<StatusCode> = []
    for field in try array() {
      switch field.value {
      case .string(let name):
        guard let code = (0...16).compactMap({ StatusCode(rawValue: $0) }).first(where: { $0.name == name })
        else { throw field.invalid("'\(name)' is not a status code name") }
        codes.insert(code)
      case .number(let text):
        guard let number = Int(text), let code = StatusCode(rawValue: number) else {
          throw field.invalid("\(text) is not a status code")
        }
        codes.insert(code)
      default:
        throw field.invalid("must be a status code name or number, not \(field.value.kind)")
      }
    }
    return codes
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
