internal import FoundationEssentials

/// The street map a share page draws the trip on: an operator's slippy-map tiles
/// (`fleet-share --tiles`), shown by Leaflet.
///
/// The URL template is Leaflet's: `{z}`, `{x}` and `{y}` in the path (all three required),
/// and optionally `{s}` in the host, replaced by one of ``subdomains``. Only http and https
/// URLs are taken, without user info; the page's Content-Security-Policy allows exactly
/// ``origins`` for images besides its own.
public struct TileLayer: Sendable, Hashable {
  /// The URL template, as given.
  public let urlTemplate: String
  /// The text shown in the map's corner (the tiles' licence usually asks for it); plain
  /// text, never read as HTML.
  public let attribution: String
  /// The highest zoom level the tiles exist for.
  public let maxZoom: Int
  /// What `{s}` is replaced by, one letter each (Leaflet's default, `abc`).
  public var subdomains: [String] { Self.subdomains }
  /// Every origin tiles come from (`https://tile.example.com`, one per subdomain with `{s}`).
  public let origins: [String]

  /// Why a tile flag was refused: the flag, and what is wrong, for a person to fix.
  public struct Invalid: Error, Sendable, CustomStringConvertible {
    /// The flag at fault (`--tiles`, `--tiles-attribution`, `--tiles-max-zoom`).
    public let flag: String
    /// What is wrong with it.
    public let message: String
    public var description: String { "\(flag): \(message)" }
  }

  private static let subdomains = ["a", "b", "c"]

  /// The zoom levels a layer may reach.
  public static let zoomLevels = 0...24

  /// A layer from the flags' values; throws ``Invalid`` naming the flag at fault.
  public init(urlTemplate: String, attribution: String?, maxZoom: Int = 19) throws(Invalid) {
    func refuse(_ flag: String, _ message: String) -> Invalid {
      Invalid(flag: flag, message: message)
    }
    guard let attribution, !attribution.allSatisfy(\.isWhitespace) else {
      throw refuse(
        "--tiles-attribution",
        "--tiles needs --tiles-attribution TEXT (the tiles' credit, shown on the map)")
    }
    guard attribution.count <= 500, !attribution.unicodeScalars.contains(where: { $0.value < 0x20 })
    else {
      throw refuse("--tiles-attribution", "must be one line of at most 500 characters")
    }
    guard Self.zoomLevels.contains(maxZoom) else {
      throw refuse(
        "--tiles-max-zoom",
        "must be within \(Self.zoomLevels.lowerBound)...\(Self.zoomLevels.upperBound)")
    }
    origins = try Self.origins(of: urlTemplate, subdomains: Self.subdomains).get()
    self.urlTemplate = urlTemplate
    self.attribution = attribution
    self.maxZoom = maxZoom
  }

  /// The origins `template` names, or why it is not a tile URL template.
  private static func origins(of template: String, subdomains: [String]) -> Result<
    [String], Invalid
  > {
    func refuse(_ message: String) -> Result<[String], Invalid> {
      .failure(Invalid(flag: "--tiles", message: message))
    }
    let example = "e.g. https://tile.example.com/{z}/{x}/{y}.png"
    guard let separator = template.range(of: "://") else {
      return refuse("\(template) is not an http(s) URL template (\(example))")
    }
    let scheme = template[..<separator.lowerBound].lowercased()
    guard scheme == "http" || scheme == "https" else {
      return refuse("only http and https tile URLs are served (\(example)); got \(scheme):")
    }
    // Characters a URL never needs and a page must not be handed: quotes, angle brackets,
    // spaces, backslashes and control characters.
    if let bad = template.unicodeScalars.first(where: {
      $0.value <= 0x20 || $0.value == 0x7F || "\"'<>\\`^|".unicodeScalars.contains($0)
    }) {
      return refuse(
        "the URL template contains \"\(bad.escaped(asASCII: true))\", which a URL cannot hold")
    }
    let rest = template[separator.upperBound...]
    let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    let path = rest.dropFirst(authority.count)
    guard !authority.isEmpty, !authority.contains("@") else {
      return refuse("the URL template needs a host and no user info (\(example))")
    }
    var placeholders: [Substring] = []
    var remaining = rest[...]
    while let open = remaining.firstIndex(of: "{") {
      guard let close = remaining[open...].firstIndex(of: "}") else {
        return refuse("an unclosed { in the URL template")
      }
      placeholders.append(remaining[remaining.index(after: open)..<close])
      remaining = remaining[remaining.index(after: close)...]
    }
    if remaining.contains("}") { return refuse("a } without { in the URL template") }
    if let unknown = placeholders.first(where: { !["z", "x", "y", "s"].contains($0) }) {
      return refuse(
        "{\(unknown)} is not a placeholder fleet-share fills; use {z}, {x}, {y} and optionally {s}")
    }
    for needed in ["{z}", "{x}", "{y}"] where !path.contains(needed) {
      return refuse(
        "the URL template needs {z}, {x} and {y} in its path; \(needed) is missing (\(example))")
    }
    for placeholder in ["{z}", "{x}", "{y}"] where authority.contains(placeholder) {
      return refuse("\(placeholder) belongs in the path, not in the host")
    }
    let host = authority.lowercased()
    guard host.contains("{s}") else { return .success(["\(scheme)://\(host)"]) }
    return .success(
      subdomains.map { "\(scheme)://\(host.replacingOccurrences(of: "{s}", with: $0))" })
  }
}
