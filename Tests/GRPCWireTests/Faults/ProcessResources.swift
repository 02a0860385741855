import Foundation

/// The open file descriptors and threads of this test process, read from `/proc/self`.
///
/// Only meaningful while no other test runs in the process (`swift test --no-parallel`, as
/// scripts/test runs): a concurrent test's sockets and threads would be counted too.
struct ProcessResources: Sendable, CustomStringConvertible {
  /// fd number → what it is (`socket:[123]`, `anon_inode:[eventpoll]`, a path).
  var descriptors: [Int: String]
  /// Thread id → its name (`comm`; the channel's loop thread is `grpc-<host>`).
  var threads: [Int: String]

  static func now() -> ProcessResources {
    var descriptors: [Int: String] = [:]
    let fdDirectory = "/proc/self/fd"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: fdDirectory)) ?? [] {
      guard let fd = Int(name) else { continue }
      // The directory listing's own descriptor is gone by now: readlink fails for it.
      guard
        let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "\(fdDirectory)/\(name)")
      else { continue }
      descriptors[fd] = target
    }
    var threads: [Int: String] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
      guard let tid = Int(name) else { continue }
      let comm = (try? String(contentsOfFile: "/proc/self/task/\(name)/comm", encoding: .utf8))
      threads[tid] = comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }
    return ProcessResources(descriptors: descriptors, threads: threads)
  }

  /// Descriptors open now that were not open in `baseline` (fd → target).
  func descriptorsAdded(since baseline: ProcessResources) -> [Int: String] {
    descriptors.filter { baseline.descriptors[$0.key] != $0.value }
  }

  /// Threads alive now that were not in `baseline` (tid → name), except libdispatch's
  /// worker threads (Swift concurrency's global executor on Linux), which the runtime starts
  /// and ends by itself as load comes and goes.
  func threadsAdded(since baseline: ProcessResources) -> [Int: String] {
    threads.filter { baseline.threads[$0.key] == nil && !Self.isDispatchWorker($0.value) }
  }

  /// libdispatch names its workers `com.apple.root.<qos>-qos[.overcommit]`; `comm` keeps 15
  /// characters of that (on Linux, the last ones: `oot.default-qos`, `-qos.overcommit`).
  static func isDispatchWorker(_ name: String) -> Bool {
    name.hasSuffix("-qos") || name.hasSuffix("-qos.overcommit") || name.hasPrefix("com.apple.root")
  }

  var description: String {
    let named = threads.values.filter { !Self.isDispatchWorker($0) }.sorted()
    return "\(descriptors.count) fds, \(threads.count) threads (\(threads.count - named.count) "
      + "libdispatch workers, \(named.joined(separator: ", ")))"
  }
}
