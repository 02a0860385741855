internal import FoundationEssentials

// The share page on a street map (`fleet-share --tiles`): Leaflet, served from this server's
// own origin (`LeafletAssets`), shows the operator's tiles; the trip is drawn over them from
// each event's `map` (the same TripRendering as the SVG: route segments by traffic, and the
// SVG renderer's own markers as Leaflet icons), with the same hooks as the SVG page. Before
// the script runs, and without JavaScript, the map holds the server-rendered SVG snapshot.

extension SharePage {
  /// The street-map page's Content-Security-Policy: scripts and styles from its own origin
  /// (and its inline style), images from itself, `data:` and `tiles`' origins only,
  /// connections (the event stream) to itself.
  static func policy(tiles: TileLayer) -> String {
    let images = (["'self'", "data:"] + tiles.origins).joined(separator: " ")
    return
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src \(images); "
      + "connect-src 'self'; object-src 'none'; base-uri 'none'"
  }

  /// The street-map page, with `svg` (the snapshot so far, or nil) in place until the script
  /// draws the map.
  static func mapHTML(svg: String?, status: String?, eta: String?, tiles: TileLayer) -> String {
    struct Settings: Encodable {
      let url: String
      let attribution: String
      let maxZoom: Int
      let subdomains: String
    }
    let settings = Settings(
      url: tiles.urlTemplate, attribution: escape(tiles.attribution), maxZoom: tiles.maxZoom,
      subdomains: tiles.subdomains.joined())
    let json = (try? JSONEncoder().encode(settings)).map { String(decoding: $0, as: UTF8.self) }
    let follow = #"\#n  <button id="follow" type="button" hidden>Follow the car</button>"#
    return opening(
      policy: policy(tiles: tiles),
      head: #"\#n<link rel="stylesheet" href="\#(LeafletAssets.path)/leaflet.css">"#,
      style: """
        #map { height: 600px; max-height: 75vh; border-radius: 8px; background: #e8eaed; overflow: hidden; }
        #map > svg { width: 100%; height: 100%; display: block; }
        #map .trip-marker { background: none; border: none; }
        #map .trip-marker svg { display: block; overflow: visible; }
        #follow { font: inherit; font-size: 14px; padding: 4px 12px; border: 1px solid #dadce0; border-radius: 16px; background: #fff; color: #1a73e8; cursor: pointer; }
        #follow[hidden] { display: none; }
        """)
      + """
      <div id="map" data-tiles="\(escape(json ?? "{}"))">\(svg ?? placeholder)</div>
      \(panel(status: status, eta: eta, extra: follow))
      </main>
      <script src="\(LeafletAssets.path)/leaflet.js"></script>
      <script src="\(mapScriptPath)"></script>
      </body>
      </html>
      """
  }

  /// Where the street-map page's script is served.
  static let mapScriptPath = "/assets/share-map.js"

  /// The street-map page's script: builds the Leaflet map in `#map`, draws each event's
  /// `map` over the tiles with the SVG page's hooks (`data-trip-status` on `#map`, routes'
  /// `data-role`/`data-leg`/`data-speed`, the markers' SVG with `data-role`,
  /// `data-lat`/`data-lng`, `data-stale`), fits the trip as the SVG's camera does, and keeps
  /// following the car (fitting again on each event, zooming out when the trip no longer
  /// fits, never in) until the user pans or zooms; "Follow the car" brings it back. The map
  /// is `window.shareMap` for tests.
  static let mapScript = #"""
    (function () {
      "use strict";
      var container = document.getElementById("map");
      var tiles = JSON.parse(container.getAttribute("data-tiles"));
      var status = document.getElementById("status");
      var eta = document.getElementById("eta");
      var connection = document.getElementById("connection");
      var follow = document.getElementById("follow");
      container.innerHTML = "";
      var map = L.map(container, { zoomSnap: 1, maxZoom: tiles.maxZoom });
      window.shareMap = map;
      map.attributionControl.setPrefix(false);
      var routes = L.layerGroup().addTo(map);
      var markers = L.layerGroup().addTo(map);
      var tileLayer = null;
      var following = true;
      var fitting = false;
      var latest = null;
      // Whether a trip with something to show was fitted yet: until then (the world, before
      // the first location) each event is fitted exactly, zooming in too.
      var fittedTrip = false;

      // The camera of the SVG: the trip's bounds with the renderer's padding on each side.
      // Fitted exactly the first time (and when following is asked for again); while
      // following, centred on the bounds again at the zoom it has, or the one that fits.
      function fit(data, exactly) {
        var bounds = L.latLngBounds(data.bounds);
        var padding = L.point(data.padding, data.padding);
        fitting = true;
        if (exactly || !fittedTrip) {
          map.fitBounds(bounds, { padding: padding, maxZoom: tiles.maxZoom, animate: false });
          fittedTrip = data.markers.length + data.routes.length > 0;
        } else {
          var zoom = Math.min(map.getZoom(), map.getBoundsZoom(bounds, false, padding.multiplyBy(2)));
          var center = map.unproject(
            map.project(bounds.getSouthWest(), zoom).add(map.project(bounds.getNorthEast(), zoom)).divideBy(2), zoom);
          map.setView(center, zoom, { animate: false });
        }
        fitting = false;
        if (!tileLayer) {
          tileLayer = L.tileLayer(tiles.url, {
            attribution: tiles.attribution, maxZoom: tiles.maxZoom, subdomains: tiles.subdomains
          }).addTo(map);
        }
      }

      function draw(data) {
        routes.clearLayers();
        markers.clearLayers();
        data.routes.forEach(function (route) {
          var line = L.polyline(route.points, {
            color: route.color, opacity: route.opacity, weight: route.width,
            lineCap: "round", lineJoin: "round", interactive: false
          });
          routes.addLayer(line);
          var path = line.getElement();
          path.setAttribute("data-role", "route");
          path.setAttribute("data-leg", route.leg);
          path.setAttribute("data-speed", route.speed);
        });
        data.markers.forEach(function (marker) {
          var icon = L.divIcon({ html: marker.svg, className: "trip-marker", iconSize: [marker.size, marker.size] });
          markers.addLayer(L.marker([marker.lat, marker.lng], {
            icon: icon, interactive: false, keyboard: false, zIndexOffset: marker.z * 10
          }));
        });
      }

      map.on("movestart zoomstart", function () {
        if (fitting || !following) { return; }
        following = false;
        follow.hidden = false;
      });
      follow.addEventListener("click", function () {
        following = true;
        follow.hidden = true;
        if (latest) { fit(latest, true); }
      });

      var source = new EventSource(location.pathname.replace(/\/$/, "") + "/events");
      source.onopen = function () { connection.textContent = "live"; };
      source.onerror = function () { connection.textContent = "reconnecting…"; };
      source.onmessage = function (message) {
        var event = JSON.parse(message.data);
        if (event.map) {
          latest = event.map;
          if (following || !map._loaded) { fit(event.map, false); }
          draw(event.map);
        }
        if (event.status) {
          container.setAttribute("data-trip-status", event.status);
          status.textContent = event.statusText || event.status;
          eta.textContent = event.eta || "—";
        }
      };
    })();
    """#
}
