#if canImport(Glibc)
  import Glibc
#endif
import GRPCWire
import ShopProtos

/// The fresh package's executable: `ShopApp client PORT` calls an OrderService on
/// 127.0.0.1:PORT (exit status 1 on the first failure); `ShopApp server` serves one on a port
/// the OS picks, prints `LISTENING <port>`, and stops when its standard input closes.
@main
enum ShopApp {
  static func main() async {
    let arguments = Array(CommandLine.arguments.dropFirst())
    do {
      switch (arguments.first, arguments.count) {
      case ("client", 2):
        guard let port = Int(arguments[1]) else { return usage() }
        let channel = GRPCChannel(host: "127.0.0.1", port: port)
        defer { channel.close() }
        try await OrderCalls(client: Shop.OrderService.Client(channel: channel)).run()
      case ("server", 1):
        let server = GRPCServer()
        server.register(OrderHandlers())
        let port = try await server.start(host: "127.0.0.1", port: 0)
        print("LISTENING \(port)")
        fflush(nil)
        // Whoever started us holds our stdin: its end (EOF, or that process gone) ends us.
        while readLine() != nil {}
        await server.shutdown(gracePeriod: .seconds(1))
      default:
        usage()
      }
    } catch {
      print("FAILED: \(error)")
      fflush(nil)
      exit(1)
    }
  }

  static func usage() {
    print("usage: ShopApp client PORT | ShopApp server")
    exit(2)
  }
}
