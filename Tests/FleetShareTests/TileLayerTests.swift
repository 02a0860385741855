import FleetShare
import PeerSupport
import Testing

@Suite("Tile layer flags")
struct TileLayerTests {
  @Test(
    "a template's origins: one, or one per subdomain with {s}",
    arguments: [
      ("https://tile.example.com/{z}/{x}/{y}.png", ["https://tile.example.com"]),
      (
        "HTTP://Tiles.Example.com:8080/map/{z}/{x}/{y}.png?key=k", ["http://tiles.example.com:8080"]
      ),
      (
        "https://{s}.tile.example.org/{z}/{x}/{y}@2x.png",
        ["https://a.tile.example.org", "https://b.tile.example.org", "https://c.tile.example.org"]
      ),
    ])
  func origins(template: String, origins: [String]) throws {
    let layer = try TileLayer(urlTemplate: template, attribution: "© someone")
    #expect(layer.origins == origins)
    #expect(layer.maxZoom == 19)
  }

  @Test(
    "bad templates and attributions name the flag at fault",
    arguments: [
      ("https://t.example.com/{z}/{x}.png", "A", 19, "--tiles"),
      ("ftp://t.example.com/{z}/{x}/{y}.png", "A", 19, "--tiles"),
      ("file:///tiles/{z}/{x}/{y}.png", "A", 19, "--tiles"),
      ("t.example.com/{z}/{x}/{y}.png", "A", 19, "--tiles"),
      ("https://t.example.com/{z}/{x}/{y}/{r}.png", "A", 19, "--tiles"),
      ("https://{z}.example.com/{z}/{x}/{y}.png", "A", 19, "--tiles"),
      ("https://user@t.example.com/{z}/{x}/{y}.png", "A", 19, "--tiles"),
      ("https://t.example.com/{z}/{x}/{y}.png\"><script>", "A", 19, "--tiles"),
      ("https://t.example.com/{z}/{x}/{y}.png", "", 19, "--tiles-attribution"),
      ("https://t.example.com/{z}/{x}/{y}.png", "A", 25, "--tiles-max-zoom"),
      ("https://t.example.com/{z}/{x}/{y}.png", "A", -1, "--tiles-max-zoom"),
    ])
  func refused(template: String, attribution: String, maxZoom: Int, flag: String) {
    #expect {
      try TileLayer(urlTemplate: template, attribution: attribution, maxZoom: maxZoom)
    } throws: { error in
      (error as? TileLayer.Invalid)?.flag == flag
    }
  }

  @Test("--tiles without attribution is refused")
  func noAttribution() {
    #expect(throws: TileLayer.Invalid.self) {
      try TileLayer(urlTemplate: "https://t.example.com/{z}/{x}/{y}.png", attribution: nil)
    }
  }
}

/// fleet-share's bad flags, as a user meets them: exit status 2 and a message naming the flag.
@Suite("fleet-share flags", .timeLimit(.minutes(2)))
struct FleetShareFlagsTests {
  @Test(
    "bad tile and stale flags exit 2 naming the flag",
    arguments: [
      (["--tiles", "https://t.example.com/{z}/{x}.png", "--tiles-attribution", "A"], "--tiles: "),
      (
        ["--tiles", "ftp://t.example.com/{z}/{x}/{y}.png", "--tiles-attribution", "A"], "--tiles: "
      ),
      (["--tiles", "https://t.example.com/{z}/{x}/{y}.png"], "--tiles-attribution: "),
      (
        [
          "--tiles", "https://t.example.com/{z}/{x}/{y}.png", "--tiles-attribution", "A",
          "--tiles-max-zoom", "40",
        ],
        "--tiles-max-zoom: "
      ),
      (["--tiles-attribution", "A"], "--tiles-attribution needs --tiles"),
      (["--stale-after", "0"], "--stale-after must"),
    ])
  func badFlags(arguments: [String], flag: String) async throws {
    let result = try await ToolProcess.run("fleet-share", ["--port", "0"] + arguments)
    #expect(result.status == 2, "\(result)")
    #expect(result.stderr.contains(flag), "\(result)")
    #expect(result.stdout.isEmpty, "it started anyway: \(result)")
  }
}
