internal import JourneySharing

/// The share page: one self-contained HTML document (no external script, style, font or
/// tile) with the live map and a status panel. It opens `<page>/events` (Server-Sent Events;
/// `EventSource` reconnects by itself) and replaces the map and the panel with each event.
enum SharePage {
  /// The page, with `svg` (the snapshot so far, or nil) in place.
  static func html(svg: String?, status: String?, eta: String?) -> String {
    let statusText = status.map(escape) ?? "Waiting for the trip…"
    let etaText = eta.map(escape) ?? "—"
    let map = svg ?? #"<p class="placeholder">Waiting for the trip…</p>"#
    return """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:">
      <title>Your trip</title>
      <style>
      body { margin: 0; font: 16px/1.4 system-ui, sans-serif; background: #f1f3f4; color: #202124; }
      main { max-width: 840px; margin: 0 auto; padding: 16px; }
      #map svg { width: 100%; height: auto; display: block; border-radius: 8px; }
      #map .placeholder { padding: 120px 0; text-align: center; color: #5f6368; }
      #panel { display: flex; gap: 24px; margin-top: 12px; padding: 12px 16px; background: #fff; border-radius: 8px; }
      #panel .label { font-size: 12px; color: #5f6368; text-transform: uppercase; }
      #connection { margin-left: auto; font-size: 12px; color: #5f6368; }
      </style>
      </head>
      <body>
      <main>
      <div id="map">\(map)</div>
      <div id="panel">
        <div><div class="label">Status</div><div id="status">\(statusText)</div></div>
        <div><div class="label">ETA</div><div id="eta">\(etaText)</div></div>
        <div id="connection">live</div>
      </div>
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

  /// `text` safe inside HTML text and attribute values (XML's escapes, which HTML reads too).
  static func escape(_ text: String) -> String { SVGText.escaped(text) }
}
