import Foundation
import PeerSupport

@testable import GRPCWire

/// The thread and sockets one channel holds in this test process, read from `/proc`: its
/// loop thread (by thread id, learnt on the loop) and its TCP connections to one server port
/// (this process's socket descriptors whose peer, in `/proc/net/tcp`, is that port).
///
/// Only what the channel owns is counted, so the tests that check it may run in parallel with
/// suites that start and stop their own loops and sockets. The loop's epoll and eventfd are
/// not counted: every loop's look the same (`anon_inode:[eventpoll]`), and a closed one's
/// descriptor number is reused by the next loop of another test.
struct ChannelResources: Sendable, CustomStringConvertible {
  /// The loop thread's id, and its name if it is still alive (`grpc-<host>`).
  var loopThread: Int32
  var loopThreadName: String?
  /// Descriptor → `socket:[inode]`, for each socket of this process connected to the port.
  var sockets: [Int32: String]

  /// The resources of `channel`'s loop and of its connections to `127.0.0.1:port`.
  static func of(_ channel: GRPCChannel, port: Int) async -> ChannelResources {
    let tid = await loopThreadID(channel.eventLoop)
    return now(loopThread: tid, port: port)
  }

  /// The same, after the channel closed: its loop thread is known from before.
  static func now(loopThread: Int32, port: Int) -> ChannelResources {
    let comm = try? String(
      contentsOfFile: "/proc/self/task/\(loopThread)/comm", encoding: .utf8)
    return ChannelResources(
      loopThread: loopThread,
      loopThreadName: comm?.trimmingCharacters(in: .whitespacesAndNewlines),
      sockets: sockets(connectedTo: port))
  }

  /// The id of `loop`'s thread, read on it (`/proc/thread-self` is `<pid>/task/<tid>`).
  static func loopThreadID(_ loop: EventLoop) async -> Int32 {
    await loop.answer(within: .seconds(10)) {
      let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
      return path.flatMap { Int32($0.split(separator: "/").last!) } ?? -1
    } ?? -1
  }

  /// This process's descriptors that are TCP sockets whose peer is `127.0.0.1:port`.
  static func sockets(connectedTo port: Int) -> [Int32: String] {
    let inodes = Set(
      ["/proc/net/tcp", "/proc/net/tcp6"].flatMap { socketInodes(in: $0, remotePort: port) })
    var found: [Int32: String] = [:]
    let fdDirectory = "/proc/self/fd"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: fdDirectory)) ?? [] {
      guard let fd = Int32(name),
        let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "\(fdDirectory)/\(name)"),
        target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast()))
      else { continue }
      found[fd] = target
    }
    return found
  }

  /// The inodes of the sockets in a `/proc/net/tcp`-format table whose remote port is `port`
  /// (columns: `sl local_address rem_address st … uid timeout inode`; addresses `HEX:PORT`).
  /// A socket in TIME_WAIT or closed has inode 0 and is nobody's descriptor.
  private static func socketInodes(in table: String, remotePort port: Int) -> [String] {
    guard let text = ProcFile.read(table) else { return [] }
    return text.split(separator: "\n").dropFirst().compactMap { line in
      let columns = line.split(separator: " ", omittingEmptySubsequences: true)
      guard columns.count > 9, let portHex = columns[2].split(separator: ":").last,
        Int(portHex, radix: 16) == port, columns[9] != "0"
      else { return nil }
      return String(columns[9])
    }
  }

  var description: String {
    let thread = loopThreadName.map { "loop thread \(loopThread) (\($0))" } ?? "no loop thread"
    let held = sockets.sorted { $0.key < $1.key }.map { "fd \($0.key) \($0.value)" }
    return "\(thread), \(sockets.count) sockets to the server [\(held.joined(separator: ", "))]"
  }
}
