internal import Foundation

/// The flags both executables take: `[--port N] [--features FILE]`.
public struct Options: Sendable {
  /// The server's port on 127.0.0.1 (default 10000; 0 for the server: a port the OS picks).
  public var port = 10000
  /// The features database (default `route_guide_db.json`, in the current folder).
  public var featuresPath = "route_guide_db.json"

  /// The options of this process's arguments; exits with status 2 and `tool`'s usage on
  /// anything else.
  public static func parse(tool: String) -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
      switch (flag, arguments.popFirst()) {
      case ("--port", let value?) where Int(value) != nil: options.port = Int(value)!
      case ("--features", let value?): options.featuresPath = value
      default:
        FileHandle.standardError.write(Data("usage: \(tool) [--port N] [--features FILE]\n".utf8))
        exit(2)
      }
    }
    return options
  }
}
