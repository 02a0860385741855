internal import JourneySharing

/// The share page: one self-contained HTML document (no external script, style, font or
/// tile) with the live map and a status panel. It opens `<page>/events` (Server-Sent Events;
/// `EventSource` reconnects by itself) and replaces the map and the panel with each event.
/// With a ``TileLayer`` it is the street-map page instead (`SharePage+Map.swift`).
enum SharePage {
  /// The page's Content-Security-Policy, sent as a header and repeated in a `<meta>`: its own
  /// origin, its inline script and style, images from itself and `data:` (the favicon).
  static let policy =
    "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:"

  /// A favicon inline, so that no visit asks for `/favicon.ico` (a 404 each time): a blue
  /// disc like the vehicle's marker.
  static let favicon =
    #"<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Ccircle cx='8' cy='8' r='6.5' fill='%231a73e8' stroke='white' stroke-width='2'/%3E%3C/svg%3E">"#

  /// The page, with `svg` (the snapshot so far, or nil) in place.
  static func html(svg: String?, status: String?, eta: String?) -> String {
    let map = svg ?? placeholder
    return opening(
      policy: policy,
      style: "#map svg { width: 100%; height: auto; display: block; border-radius: 8px; }")
      + """
      <div id="map">\(map)</div>
      \(panel(status: status, eta: eta))
      </main>
      <script>
      (function () {
        var map = document.getElementById("map");
        var status = document.getElementById("status");
        var eta = document.getElementById("eta");
        var connection = document.getElementById("connection");
        var source = new EventSource(location.pathname.replace(/\\/$/, "") + "/events");
        source.onopen = function () { connection.textContent = "live"; };
        source.onerror = function () { connection.textContent = "reconnecting…"; };
        source.onmessage = function (message) {
          var event = JSON.parse(message.data);
          if (event.svg) { map.innerHTML = event.svg; }
          if (event.status) { status.textContent = event.statusText || event.status; }
          if (event.status) { eta.textContent = event.eta || "—"; }
        };
      })();
      </script>
      </body>
      </html>
      """
  }

  /// What the map shows before the first trip.
  static let placeholder = #"<p class="placeholder">Waiting for the trip…</p>"#

  /// A page up to and with `<main>`: the head (`policy` also as a `<meta>`, the favicon,
  /// `head`'s elements, the pages' common style and `style`) and the opening body.
  static func opening(policy: String, head: String = "", style: String) -> String {
    """
    <!DOCTYPE html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta http-equiv="Content-Security-Policy" content="\(escape(policy))">
    <title>Your trip</title>
    \(favicon)\(head)
    <style>
    body { margin: 0; font: 16px/1.4 system-ui, sans-serif; background: #f1f3f4; color: #202124; }
    main { max-width: 840px; margin: 0 auto; padding: 16px; }
    #map .placeholder { padding: 120px 0; text-align: center; color: #5f6368; }
    #panel { display: flex; gap: 24px; align-items: center; margin-top: 12px; padding: 12px 16px; background: #fff; border-radius: 8px; }
    #panel .label { font-size: 12px; color: #5f6368; text-transform: uppercase; }
    #connection { margin-left: auto; font-size: 12px; color: #5f6368; }
    \(style)
    </style>
    </head>
    <body>
    <main>

    """
  }

  /// The status panel: `#status`, `#eta`, `extra`, and the connection's state.
  static func panel(status: String?, eta: String?, extra: String = "") -> String {
    let statusText = status.map(escape) ?? "Waiting for the trip…"
    let etaText = eta.map(escape) ?? "—"
    return """
      <div id="panel">
        <div><div class="label">Status</div><div id="status">\(statusText)</div></div>
        <div><div class="label">ETA</div><div id="eta">\(etaText)</div></div>\(extra)
        <div id="connection">live</div>
      </div>
      """
  }

  /// `text` safe inside HTML text and attribute values (XML's escapes, which HTML reads too).
  static func escape(_ text: String) -> String { SVGText.escaped(text) }
}
