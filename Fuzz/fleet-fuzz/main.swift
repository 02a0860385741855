import Foundation

// fleet-fuzz: libFuzzer targets for the parsers that take a peer's bytes (README "Fuzzing").
// Built only with FLEET_FUZZ=1 and -sanitize=fuzzer,address; scripts/fuzz is the way in.

let usage = """
  usage: fleet-fuzz TARGET [libFuzzer flags] [CORPUS_DIR...]
         fleet-fuzz --list
         fleet-fuzz --write-seeds DIR     (writes DIR/<target>/<seed> for every target)
  """

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "--list":
  let width = FuzzTarget.all.map(\.name.count).max() ?? 0
  for target in FuzzTarget.all {
    print(target.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + target.summary)
  }
case "--write-seeds":
  guard arguments.count == 3 else { fail(usage) }
  try writeSeeds(to: URL(fileURLWithPath: arguments[2]))
case let name? where !name.hasPrefix("-"):
  guard let target = FuzzTarget.named(name) else {
    fail("fleet-fuzz: no target \(name); --list shows them")
  }
  selectedTarget = target
  // libFuzzer reads its own flags and corpus folders: everything after the target's name.
  let driverArguments = [arguments[0]] + arguments.dropFirst(2)
  var argv: [UnsafeMutablePointer<CChar>?] = driverArguments.map { strdup($0) } + [nil]
  var argc = Int32(driverArguments.count)
  let status = argv.withUnsafeMutableBufferPointer { buffer in
    var pointer = buffer.baseAddress!
    return runLibFuzzerDriver(&argc, &pointer, fuzzOneInput)
  }
  exit(status)
default:
  fail(usage)
}

/// Replaces each target's seed folder under `root` with the seeds its ``FuzzTarget`` makes,
/// keeping the `recorded-*` seeds (bytes of real sessions, see scripts/record-session-seeds).
func writeSeeds(to root: URL) throws {
  let files = FileManager.default
  for target in FuzzTarget.all {
    let folder = root.appendingPathComponent(target.name)
    try files.createDirectory(at: folder, withIntermediateDirectories: true)
    for name in try files.contentsOfDirectory(atPath: folder.path) where !name.hasPrefix("recorded-") {
      try files.removeItem(at: folder.appendingPathComponent(name))
    }
    let seeds = target.seeds()
    for seed in seeds {
      try Data(seed.bytes).write(to: folder.appendingPathComponent(seed.name))
    }
    print("\(target.name): \(seeds.count) seeds")
  }
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data((message + "\n").utf8))
  exit(2)
}
