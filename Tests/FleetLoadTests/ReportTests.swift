import Foundation
import PeerSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// What fleet-load prints and writes, and how it ends: TLS, Ctrl-C, the SVG, bad flags.
@Suite("fleet-load reports and flags")
struct ReportTests {
  @Test(
    "--target is TLS by default: with --cacert it loads fleet-sim --tls-cert; without, it fails verification"
  )
  func tls() async throws {
    let fixtures = try await TLSFixtures.shared
    let sim = try await PeerServer.startFleetSim([
      "--trips", "2", "--tls-cert", fixtures.certificate(.server), "--tls-key",
      fixtures.key(.server),
    ])
    let common = [
      "--target", sim.target, "--trips-to-create", "2", "-n", "50", "-c", "4", "--warmup", "0",
      "--format", "json",
    ]
    let trusted = try await FleetLoadProcess.run(common + ["--cacert", fixtures.caCertificate])
    let named = try await FleetLoadProcess.run(
      common + ["--cacert", fixtures.caCertificate, "--server-name", TLSFixtures.serverName])
    let untrusted = try await FleetLoadProcess.run(common)
    try await sim.terminate(timeout: .seconds(15))
    for result in [trusted, named] {
      #expect(try FleetLoadProcess.report(result)["statusCodes"] as? [String: Int] == ["OK": 50])
    }
    let failed = try FleetLoadProcess.report(untrusted)
    #expect(failed["statusCodes"] as? [String: Int] == ["UNAVAILABLE": 50], "\(untrusted)")
    #expect((failed["target"] as? String)?.hasSuffix("(TLS)") == true)
  }

  @Test("SIGINT stops the run: a partial JSON report, exit status 130")
  func interrupted() async throws {
    let load = try ToolProcess.start(
      "fleet-load", ["-z", "60", "-c", "4", "--warmup", "0", "--format", "json"])
    // Running: the embedded server listens, the client connected, the server accepted.
    try await load.waitUntil("three sockets") { load.socketCount >= 3 }
    let status = try await load.terminate(SIGINT, timeout: .seconds(15))
    #expect(status == .exited(130), "\(load.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(load.stdout)) as? [String: Any],
      "\(load.stdoutText)")
    #expect(report["partial"] as? Bool == true)
    #expect((report["durationSeconds"] as? Double ?? 60) < 30)
  }

  @Test("--histogram-svg writes a well-formed SVG with bars")
  func histogramSVG() async throws {
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("fleet-load-\(UUID().uuidString).svg")
    defer { try? FileManager.default.removeItem(at: file) }
    let result = try await FleetLoadProcess.run([
      "-n", "300", "-c", "4", "--warmup", "0", "--histogram-svg", file.path,
    ])
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout.contains("Response time histogram:"))
    let data = try Data(contentsOf: file)
    let elements = SVGElements()
    let parser = XMLParser(data: data)
    parser.delegate = elements
    #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
    #expect(elements.names.first == "svg")
    #expect(elements.names.filter { $0 == "rect" }.count > 2)
  }

  @Test(
    "bad flag combinations are refused with a clear message",
    arguments: [
      (["-n", "5", "-z", "1"], "not both"),
      (
        ["--rps", "10", "--call", "grpc.testing.BenchmarkService/StreamingFromServer"],
        "--rps paces"
      ),
      (["-c", "2", "--connections", "3"], "more than -c"),
      (["--cacert", "/etc/hostname"], "need --target"),
      (
        ["--target", "127.0.0.1:1", "--plaintext", "--cacert", "/etc/hostname"],
        "cannot go with --plaintext"
      ),
      (["--target", "127.0.0.1:1", "--cert", "/etc/hostname"], "--cert and --key go together"),
      (["--target", "127.0.0.1:1", "--cacert", "/no/such/file"], "no such readable file"),
      (["--stream"], "--stream goes with --trips"),
      (["--call", "GetTrip", "--response-size", "10"], "set the grpc.testing payloads"),
      (["--trips", "5", "--rps", "10"], "cannot go with it"),
      (["-m", "novalue"], "key=value"),
      (["-m", "Bad Key=1"], "-m/--metadata"),
      (["--target", "nonsense"], "HOST:PORT"),
    ] as [([String], String)])
  func badFlags(arguments: [String], message: String) async throws {
    let result = try await FleetLoadProcess.run(arguments)
    #expect(result.status == 64, "\(result)")
    #expect(result.stderr.contains(message), "\(result)")
  }
}

/// The element names of an XML document, in order.
final class SVGElements: NSObject, XMLParserDelegate, @unchecked Sendable {
  // @unchecked Sendable: filled by one synchronous parse on the test's task, read after it.
  var names: [String] = []

  func parser(
    _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
  ) {
    names.append(elementName)
  }
}

/// fleet-load's report repeats its command line; credentials given with -m must not be in it.
@Suite("fleet-load redacts credentials in its report")
struct RedactionTests {
  @Test("-m authorization=Bearer SECRET (every spelling): the text and JSON reports show REDACTED, never the token")
  func redacted() async throws {
    let sim = try await PeerServer.startFleetSim(["--trips", "2"])
    let common = [
      "--target", sim.target, "--plaintext", "--trips-to-create", "2", "-n", "20", "-c", "2",
      "--warmup", "0",
    ]
    let spellings = [
      ["-m", "authorization=Bearer SECRET-1"],
      ["--metadata", "Authorization=Bearer SECRET-1"], ["--metadata=authorization=Bearer SECRET-1"],
    ]
    for spelling in spellings {
      let text = try await FleetLoadProcess.run(common + spelling + ["-m", "x-api-key=SECRET-2", "-m", "x-note=visible"])
      let json = try await FleetLoadProcess.run(
        common + spelling + ["-m", "x-api-key=SECRET-2", "-m", "x-note=visible", "--format", "json"])
      for result in [text, json] {
        #expect(result.status == 0, "\(result)")
        #expect(!result.stdout.contains("SECRET"), "\(spelling): \(result.stdout)")
        #expect(result.stdout.contains("REDACTED"), "\(spelling): \(result.stdout)")
        #expect(result.stdout.contains("x-note=visible"), "other metadata is shown: \(result.stdout)")
      }
      let command = try FleetLoadProcess.report(json)["command"] as? String
      #expect(command?.contains("SECRET") == false)
    }
    try await sim.terminate(timeout: .seconds(15))
  }
}
