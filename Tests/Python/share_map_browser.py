"""fleet-share's street-map page (`--tiles`) in a real browser: Debian's headless chromium,
driven by selenium through chromium-driver (the browser of share_browser.py). Opens a share
link, samples the page every 100 ms until the trip is COMPLETE (or the time runs out), and
prints one JSON report for the Swift test to judge:

  {"requests": [every URL the page asked for (Chrome's DevTools network log)],
   "csp": the Content-Security-Policy header of the page's response (null: none),
   "tiles": [[z, x, y] of every request to TILE_ORIGIN],
   "viewports": [{"zoom": z, "min": [x, y], "max": [x, y]}: the map's pixel bounds (Leaflet's
                 getPixelBounds) once the trip is first fitted, and at the end],
   "statuses": [data-trip-status values of #map, in order],
   "vehicle": [{"t": unix s, "lat": .., "lng": .., "stale": bool, "label": text or null,
                "onTile": bool, "offsetPx": distance of the marker's centre from where the map
                projects its data-lat/data-lng}: one sample per change],
   "routeSegments": N (most route paths with data-role="route" seen at once),
   "routeHooks": [[data-leg, data-speed], ...] (as last seen),
   "markers": {role: count}, "followingBeforeDrag"/"followingAfterDrag": whether the map
   still follows the car (the "Follow the car" button hidden) at the end, and after a mouse
   drag of the map,
   "screenshot": {"bytes": N, "distinctBytes": N}, "error": "..." (only when something failed)}

Usage: share_map_browser.py URL TILE_ORIGIN SCREENSHOT.png [--seconds S]"""

import argparse
import json
import re
import sys
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from share_browser import browser, save_screenshot

SAMPLE = """
var map = window.shareMap;
var container = document.getElementById('map');
var vehicle = container.querySelector('[data-role="vehicle"]');
var roles = {};
container.querySelectorAll('[data-role]').forEach(function (e) {
  var role = e.getAttribute('data-role'); roles[role] = (roles[role] || 0) + 1; });
var hooks = [];
container.querySelectorAll('[data-role="route"]').forEach(function (e) {
  hooks.push([e.getAttribute('data-leg'), e.getAttribute('data-speed')]); });
var state = { status: container.getAttribute('data-trip-status'), roles: roles, hooks: hooks,
  eta: document.getElementById('eta').textContent, ready: !!(map && map._loaded),
  following: document.getElementById('follow').hidden };
if (state.ready) {
  var bounds = map.getPixelBounds();
  state.viewport = { zoom: map.getZoom(), min: [bounds.min.x, bounds.min.y], max: [bounds.max.x, bounds.max.y] };
}
if (vehicle && state.ready) {
  var lat = parseFloat(vehicle.getAttribute('data-lat')), lng = parseFloat(vehicle.getAttribute('data-lng'));
  var disc = vehicle.querySelector('circle') || vehicle;
  var box = disc.getBoundingClientRect(), frame = container.getBoundingClientRect();
  var x = box.left + box.width / 2, y = box.top + box.height / 2;
  var expected = map.latLngToContainerPoint([lat, lng]);
  var onTile = Array.prototype.some.call(container.querySelectorAll('img.leaflet-tile-loaded'), function (img) {
    var b = img.getBoundingClientRect(); return x >= b.left && x < b.right && y >= b.top && y < b.bottom; });
  var label = vehicle.querySelector('.marker-label');
  state.vehicle = { lat: lat, lng: lng, stale: vehicle.getAttribute('data-stale') === 'true',
    label: label ? label.textContent : null, onTile: onTile,
    offsetPx: Math.hypot(x - frame.left - expected.x, y - frame.top - expected.y) };
}
return state;
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("tile_origin")
    parser.add_argument("screenshot")
    parser.add_argument("--seconds", type=float, default=90)
    args = parser.parse_args()
    report = {"statuses": [], "vehicle": [], "viewports": [], "requests": [], "tiles": []}
    tile = re.compile(re.escape(args.tile_origin) + r"/(\d+)/(\d+)/(\d+)\.png$")
    driver = browser()
    log = []
    try:
        driver.get(args.url)
        deadline = time.monotonic() + args.seconds
        shot_taken = False
        state = {}
        while time.monotonic() < deadline:
            state = driver.execute_script(SAMPLE)
            now = time.time()
            if state["status"] and (not report["statuses"] or report["statuses"][-1] != state["status"]):
                report["statuses"].append(state["status"])
            if state.get("viewport") and not report["viewports"] and state.get("vehicle"):
                report["viewports"].append(state["viewport"])
            vehicle = state.get("vehicle")
            if vehicle:
                last = report["vehicle"][-1] if report["vehicle"] else None
                if not last or any(last[k] != vehicle[k] for k in ("lat", "lng", "stale", "label", "onTile")):
                    report["vehicle"].append(dict(vehicle, t=now))
            report["markers"] = {k: v for k, v in state["roles"].items() if k != "route"}
            report["routeSegments"] = max(report.get("routeSegments", 0), state["roles"].get("route", 0))
            if state["hooks"]:
                report["routeHooks"] = state["hooks"]
            # The screenshot once the vehicle, stale a second or more, is over loaded tiles
            # with a route drawn: the page as it shows a car that stopped reporting.
            label = (vehicle or {}).get("label") or ""
            if (not shot_taken and vehicle and vehicle["stale"] and vehicle["onTile"]
                    and state["roles"].get("route", 0) > 0 and not label.startswith("last seen 5 s")):
                report["screenshot"] = save_screenshot(driver, args.screenshot)
                shot_taken = True
            if state["status"] == "COMPLETE" and shot_taken:
                break
            time.sleep(0.1)
        # A person drags the map: the page stops following the car and offers to again.
        report["followingBeforeDrag"] = state.get("following")
        ActionChains(driver).move_to_element(driver.find_element(By.ID, "map")).click_and_hold() \
            .move_by_offset(40, 15).move_by_offset(40, 15).release().perform()
        report["followingAfterDrag"] = driver.execute_script(SAMPLE).get("following")
        # The tiles of the last view asked for and loaded (so that their requests are logged).
        settle = time.monotonic() + 5
        while time.monotonic() < settle and driver.execute_script(
                "return document.querySelectorAll('#map img.leaflet-tile:not(.leaflet-tile-loaded)').length"):
            time.sleep(0.1)
        state = driver.execute_script(SAMPLE)
        if state.get("viewport"):
            report["viewports"].append(state["viewport"])
        # One read of the log: get_log hands each entry out once.
        log = driver.get_log("performance")
    except Exception as error:  # the report says what failed; the test fails on it
        report["error"] = f"{type(error).__name__}: {error}"
    finally:
        driver.quit()
    for entry in log:
        message = json.loads(entry["message"])["message"]
        method = message.get("method")
        if method == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            report["requests"].append(url)
            match = tile.match(url)
            if match:
                report["tiles"].append([int(group) for group in match.groups()])
        elif method == "Network.responseReceived":
            response = message["params"]["response"]
            if response["url"] == args.url:
                headers = {k.lower(): v for k, v in response["headers"].items()}
                report["csp"] = headers.get("content-security-policy")
    report.setdefault("csp", None)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
