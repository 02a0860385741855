import ArgumentParser
import FleetSimulator

// `--trip-kind` takes the kinds by their raw values (exclusive, multi-stop, …). The library
// does not depend on swift-argument-parser, so the conformance lives with the command.
extension SimulatedTripKind: ExpressibleByArgument {}
