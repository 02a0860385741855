import NIOCore
import NIOPosix

// --nio-executor: NIO's take-over of Swift concurrency's global executor must be installed
// once, from the main thread, before tasks run on that executor: hence here, before parsing.
if CommandLine.arguments.contains("--nio-executor") {
  guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
  else { fatalError("--nio-executor: NIO could not take over the global executor") }
}
do {
  let command = try GRPCSwiftLoad.parse()
  try await command.load()
} catch {
  GRPCSwiftLoad.exit(withError: error)
}
