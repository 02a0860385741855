import Testing

@testable import GRPCWire

/// The service config's JSON form: a full config read field by field, the method lookup, and a
/// test per rule a field can break, each INVALID_ARGUMENT naming the field.
@Suite("Service config parsing")
struct ServiceConfigParsingTests {
  static let full = """
    {
      "methodConfig": [
        {
          "name": [{"service": "grpc.testing.TestService", "method": "UnaryCall"}],
          "timeout": "1.5s", "waitForReady": true,
          "maxRequestMessageBytes": 1024, "maxResponseMessageBytes": "2048",
          "retryPolicy": {
            "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", 10]
          }
        },
        {
          "name": [{"service": "grpc.testing.TestService"}],
          "hedgingPolicy": {
            "maxAttempts": 9, "hedgingDelay": "0.025s", "nonFatalStatusCodes": ["ABORTED"]
          }
        },
        {"name": [{}], "timeout": "30s"}
      ],
      "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.12345},
      "loadBalancingConfig": [{"round_robin": {}}]
    }
    """

  @Test("a full config: every field read, maxAttempts capped at 5, tokenRatio to 3 decimals")
  func full() throws {
    let config = try ServiceConfig(json: Self.full)
    #expect(config.methodConfigs.count == 3)
    let unary = config.methodConfigs[0]
    #expect(unary.names == [.init(service: "grpc.testing.TestService", method: "UnaryCall")])
    #expect(unary.timeout == .milliseconds(1500))
    #expect(unary.waitForReady == true)
    #expect(unary.maxRequestMessageBytes == 1024)
    #expect(unary.maxResponseMessageBytes == 2048)
    #expect(
      unary.retryPolicy
        == ServiceConfig.RetryPolicy(
          maxAttempts: 4, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1),
          backoffMultiplier: 2, retryableStatusCodes: [.unavailable, .aborted]))
    #expect(
      config.methodConfigs[1].hedgingPolicy
        == ServiceConfig.HedgingPolicy(
          maxAttempts: 5, hedgingDelay: .milliseconds(25), nonFatalStatusCodes: [.aborted]))
    #expect(config.methodConfigs[2].names == [.init()])
    #expect(config.retryThrottling == ServiceConfig.RetryThrottling(maxTokens: 10, tokenRatio: 0.123))
  }

  @Test("the lookup: service and method, else the service, else the default")
  func lookup() throws {
    let config = try ServiceConfig(json: Self.full)
    let unary = config.methodConfig(for: MethodDescriptor(path: "/grpc.testing.TestService/UnaryCall"))
    #expect(unary?.retryPolicy != nil)
    let other = config.methodConfig(for: MethodDescriptor(path: "/grpc.testing.TestService/EmptyCall"))
    #expect(other?.hedgingPolicy != nil)
    let elsewhere = config.methodConfig(for: MethodDescriptor(path: "/other.Service/Call"))
    #expect(elsewhere?.timeout == .seconds(30))
    #expect(try ServiceConfig(json: "{}").methodConfig(for: MethodDescriptor(path: "/a.B/C")) == nil)
  }

  /// A config with one method config made of `members` (JSON text inside its braces).
  static func method(_ members: String) -> String {
    #"{"methodConfig": [{"name": [{"service": "s.S"}], \#(members)}]}"#
  }

  static let retry = #""maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1"#

  @Test(
    "an invalid field is INVALID_ARGUMENT naming it and the rule",
    arguments: [
      // Not JSON, or not the right shape.
      ("{", "service config: not JSON at byte 1: expected a member name in quotes"),
      (#"{"a": 1,}"#, "service config: not JSON at byte 8: expected a member name in quotes"),
      (#"{"a": 1, "a": 2}"#, "service config: not JSON at byte 12: the member \"a\" appears twice"),
      ("[]", "service config: must be an object, not an array"),
      (#"{"methodConfig": {}}"#, "service config: methodConfig: must be an array, not an object"),
      (#"{"methodConfig": [1]}"#, "service config: methodConfig[0]: must be an object, not a number"),
      // name
      (#"{"methodConfig": [{"timeout": "1s"}]}"#, "service config: methodConfig[0]: needs a non-empty name list"),
      (#"{"methodConfig": [{"name": "s.S"}]}"#, "service config: methodConfig[0].name: must be an array, not a string"),
      (#"{"methodConfig": [{"name": [{"method": "M"}]}]}"#, "service config: methodConfig[0].name[0]: a method needs its service"),
      (#"{"methodConfig": [{"name": [{"service": 7}]}]}"#, "service config: methodConfig[0].name[0].service: must be a string, not a number"),
      (
        #"{"methodConfig": [{"name": [{"service": "s.S"}]}, {"name": [{"service": "t.T"}, {"service": "s.S"}]}]}"#,
        "service config: methodConfig[1].name[1]: names a method that methodConfig[0] names already"
      ),
      // timeout, waitForReady, message sizes
      (method(#""timeout": 5"#), "service config: methodConfig[0].timeout: must be a duration string such as \"1.5s\", not a number"),
      (method(#""timeout": "5""#), "service config: methodConfig[0].timeout: must be a duration such as \"1.5s\" (seconds, up to 9 decimals), not \"5\""),
      (method(#""timeout": "-1s""#), "service config: methodConfig[0].timeout: must be a duration such as \"1.5s\" (seconds, up to 9 decimals), not \"-1s\""),
      (method(#""timeout": "0.1234567890s""#), "service config: methodConfig[0].timeout: must be a duration such as \"1.5s\" (seconds, up to 9 decimals), not \"0.1234567890s\""),
      (method(#""waitForReady": "yes""#), "service config: methodConfig[0].waitForReady: must be true or false, not a string"),
      (method(#""maxRequestMessageBytes": -1"#), "service config: methodConfig[0].maxRequestMessageBytes: must be within 0...2147483647, not -1"),
      (method(#""maxResponseMessageBytes": 1.5"#), "service config: methodConfig[0].maxResponseMessageBytes: must be an integer, not 1.5"),
      // retryPolicy
      (method(#""retryPolicy": []"#), "service config: methodConfig[0].retryPolicy: must be an object, not an array"),
      (method(#""retryPolicy": {"maxAttempts": 2}"#), "service config: methodConfig[0].retryPolicy: needs backoffMultiplier"),
      (method(#""retryPolicy": {\#(retry)}"#), "service config: methodConfig[0].retryPolicy: needs retryableStatusCodes"),
      (
        method(#""retryPolicy": {"maxAttempts": 1, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": [14]}"#),
        "service config: methodConfig[0].retryPolicy.maxAttempts: must be within 2...\(Int.max), not 1"
      ),
      (
        method(#""retryPolicy": {"maxAttempts": 2, "initialBackoff": "0s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": [14]}"#),
        "service config: methodConfig[0].retryPolicy.initialBackoff: must be greater than 0s"
      ),
      (
        method(#""retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "x", "backoffMultiplier": 1, "retryableStatusCodes": [14]}"#),
        "service config: methodConfig[0].retryPolicy.maxBackoff: must be a duration such as \"1.5s\" (seconds, up to 9 decimals), not \"x\""
      ),
      (
        method(#""retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 0, "retryableStatusCodes": [14]}"#),
        "service config: methodConfig[0].retryPolicy.backoffMultiplier: must be greater than 0"
      ),
      (method(#""retryPolicy": {\#(retry), "retryableStatusCodes": []}"#), "service config: methodConfig[0].retryPolicy.retryableStatusCodes: must name at least one status code"),
      (method(#""retryPolicy": {\#(retry), "retryableStatusCodes": ["UNAVAIL"]}"#), "service config: methodConfig[0].retryPolicy.retryableStatusCodes[0]: 'UNAVAIL' is not a status code name"),
      (method(#""retryPolicy": {\#(retry), "retryableStatusCodes": [14, 17]}"#), "service config: methodConfig[0].retryPolicy.retryableStatusCodes[1]: 17 is not a status code"),
      // hedgingPolicy
      (method(#""hedgingPolicy": {}"#), "service config: methodConfig[0].hedgingPolicy: needs maxAttempts"),
      (method(#""hedgingPolicy": {"maxAttempts": "two"}"#), "service config: methodConfig[0].hedgingPolicy.maxAttempts: must be an integer, not two"),
      (method(#""hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "soon"}"#), "service config: methodConfig[0].hedgingPolicy.hedgingDelay: must be a duration such as \"1.5s\" (seconds, up to 9 decimals), not \"soon\""),
      (method(#""hedgingPolicy": {"maxAttempts": 2, "nonFatalStatusCodes": [true]}"#), "service config: methodConfig[0].hedgingPolicy.nonFatalStatusCodes[0]: must be a status code name or number, not a boolean"),
      (method(#""retryPolicy": {}, "hedgingPolicy": {}"#), "service config: methodConfig[0].hedgingPolicy: cannot go with retryPolicy: a method retries or hedges"),
      // retryThrottling
      (#"{"retryThrottling": 1}"#, "service config: retryThrottling: must be an object, not a number"),
      (#"{"retryThrottling": {"tokenRatio": 1}}"#, "service config: retryThrottling: needs maxTokens"),
      (#"{"retryThrottling": {"maxTokens": 10}}"#, "service config: retryThrottling: needs tokenRatio"),
      (#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 1}}"#, "service config: retryThrottling.maxTokens: must be within 1...1000, not 0"),
      (#"{"retryThrottling": {"maxTokens": 1001, "tokenRatio": 1}}"#, "service config: retryThrottling.maxTokens: must be within 1...1000, not 1001"),
      (#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0}}"#, "service config: retryThrottling.tokenRatio: must be greater than 0"),
      (#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": "1"}}"#, "service config: retryThrottling.tokenRatio: must be a number, not a string"),
    ])
  func invalid(_ json: String, _ message: String) {
    #expect {
      try ServiceConfig(json: json)
    } throws: { error in
      let error = error as? RPCError
      return error?.code == .invalidArgument && error?.message == message
    }
  }

  @Test("hostile JSON: deep nesting and broken strings fail with a message, never a crash")
  func hostile() {
    for json in [
      String(repeating: "[", count: 10_000), #"{"a": "\u"#, #"{"a": "\ud800"}"#, "\u{0}",
      #"{"a": "x"#, "nul", "01", "1.", "-", "1e",
    ] {
      #expect(throws: RPCError.self) { try ServiceConfig(json: json) }
    }
  }
}
