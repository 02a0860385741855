public import Logging

extension Logger {
  /// A logger that discards everything, whatever the process's logging backend: the default
  /// of ``ChannelOptions/logger`` and ``ServerOptions/logger``, as a library should not
  /// write to a service's logs unless asked to.
  public static let disabled = Logger(label: "grpc", factory: { _ in SwiftLogNoOpLogHandler() })
}
