import ArgumentParser
import Foundation

/// The entry point: ArgumentParser's parsing and help, with the exit status of the contract.
///
/// ArgumentParser exits 64 (EX_USAGE) for bad flags; `fleet-follow` promises 2, like most
/// command-line tools, so usage errors are printed here and mapped.
@main
enum FleetFollowMain {
  static func main() async {
    let command: FleetFollow
    do {
      command = try FleetFollow.parse(Array(CommandLine.arguments.dropFirst()))
    } catch {
      let code = FleetFollow.exitCode(for: error)
      let message = FleetFollow.fullMessage(for: error)
      if code == .success {
        print(message)  // --help
        exit(0)
      }
      FileHandle.standardError.write(Data((message + "\n").utf8))
      exit(code == .validationFailure ? 2 : code.rawValue)
    }
    do {
      try await command.run()
      exit(0)
    } catch let error as ValidationError {
      // A flag found bad only when used (a key file gone since it was checked): still a
      // usage error, 2.
      FileHandle.standardError.write(Data("fleet-follow: \(error.message)\n".utf8))
      exit(2)
    } catch {
      FleetFollow.exit(withError: error)
    }
  }
}
