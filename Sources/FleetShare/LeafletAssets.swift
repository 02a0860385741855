internal import FoundationEssentials

/// Leaflet's script, style sheet and images, read once from Debian's `libjs-leaflet` and
/// served by fleet-share itself under ``path``: the street-map page loads nothing from a CDN.
public struct LeafletAssets: Sendable {
  /// Where Debian's `libjs-leaflet` installs Leaflet.
  public static let debianDirectory = "/usr/share/javascript/leaflet"
  /// The URL path the files are served under.
  static let path = "/assets/leaflet"

  /// A file to serve: its bytes and content type.
  struct File: Sendable {
    let bytes: [UInt8]
    let contentType: String
  }

  /// The files by the name they are served under (`leaflet.js`, `images/layers.png`).
  let files: [String: File]

  /// Why Leaflet could not be read.
  public struct Missing: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// Reads Leaflet from `directory`; throws ``Missing`` naming the file and the package
  /// when it is not there.
  public init(directory: String = debianDirectory) throws(Missing) {
    // The minified build, served as leaflet.js; the images its style sheet names.
    var wanted: [(served: String, file: String, type: String)] = [
      ("leaflet.js", "leaflet.min.js", "text/javascript; charset=utf-8"),
      ("leaflet.css", "leaflet.css", "text/css; charset=utf-8"),
    ]
    for image in [
      "layers.png", "layers-2x.png", "marker-icon.png", "marker-icon-2x.png", "marker-shadow.png",
    ] {
      wanted.append((served: "images/\(image)", file: "images/\(image)", type: "image/png"))
    }
    var files: [String: File] = [:]
    for item in wanted {
      let location = "\(directory)/\(item.file)"
      guard let data = FileManager.default.contents(atPath: location) else {
        throw Missing(
          description:
            "\(location) is missing: the street-map page needs Leaflet from Debian's libjs-leaflet (apt-get install libjs-leaflet, or scripts/bootstrap)"
        )
      }
      files[item.served] = File(bytes: Array(data), contentType: item.type)
    }
    self.files = files
  }
}
