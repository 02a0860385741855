public import ArgumentParser
internal import GRPCObservability
public import GRPCWire
public import Logging

/// `--log-level` and `--log-format`, shared by the fleet-* tools through `@OptionGroup`: what
/// the libraries log (connections, calls, and for followers polls), as lines on stderr.
///
/// Lines never carry a token, a key or a proxy credential: the libraries never log metadata
/// values, and the tools' own lines name flags, not their secret values.
public struct LoggingOptions: ParsableArguments, Sendable {
  @Option(
    name: .customLong("log-level"),
    help: ArgumentHelp(
      "The least severe log lines written to stderr: trace, debug, info, notice, warning, "
        + "error or critical (default: notice for servers, warning for clients).",
      valueName: "level"))
  public var level: LogLevel?

  @Option(
    name: .customLong("log-format"),
    help: ArgumentHelp(
      "Log lines as text (time, level, tool, message, key=value metadata) or as one JSON "
        + "object each.",
      valueName: "format"))
  public var format: LogFormat = .text

  public init() {}

  /// A logger writing to stderr at `--log-level`, else at `defaultLevel`, labelled `label`
  /// (the tool's name).
  public func logger(label: String, defaultLevel: Logger.Level) -> Logger {
    let level = self.level?.level ?? defaultLevel
    let format = self.format
    var logger = Logger(label: label) { label in
      StandardErrorLogHandler(label: label, format: format)
    }
    logger.logLevel = level
    return logger
  }

  /// The client interceptors that log each call: one at `debug` or lower, else none, so that
  /// calls pay nothing for logging they do not write.
  public static func clientInterceptors(_ logger: Logger) -> [any ClientInterceptor] {
    logger.logLevel <= .debug ? [ClientLoggingInterceptor(logger: logger)] : []
  }

  /// The server interceptors that log each call: one at `debug` or lower, else none (an
  /// interceptor makes on-loop handlers run as tasks).
  public static func serverInterceptors(_ logger: Logger) -> [any ServerInterceptor] {
    logger.logLevel <= .debug ? [ServerLoggingInterceptor(logger: logger)] : []
  }
}

/// A `--log-level` value: swift-log's levels by their names.
public enum LogLevel: String, CaseIterable, ExpressibleByArgument, Sendable {
  case trace, debug, info, notice, warning, error, critical

  public var level: Logger.Level {
    switch self {
    case .trace: .trace
    case .debug: .debug
    case .info: .info
    case .notice: .notice
    case .warning: .warning
    case .error: .error
    case .critical: .critical
    }
  }
}

/// A `--log-format` value.
public enum LogFormat: String, CaseIterable, ExpressibleByArgument, Sendable {
  /// `2026-01-02T03:04:05.678Z debug fleet-follow: connection ready grpc.peer=…`
  case text
  /// `{"time":"…","level":"debug","logger":"fleet-follow","message":"…","metadata":{…}}`
  case json
}
