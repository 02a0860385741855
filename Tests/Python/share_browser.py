"""fleet-share's page in a real browser: Debian's headless chromium, driven by selenium through
chromium-driver. Opens a share link, watches the page until the trip is COMPLETE (or the time
runs out), and prints one JSON report for the Swift test to judge:

  {"requests": [every URL the page fetched], "statuses": [data-trip-status values seen, in
   order], "vehiclePositions": [distinct "lat,lng" of the vehicle marker], "etas": [distinct
   #eta texts], "routeSegments": N, "markers": {role: count}, "screenshot": {"bytes": N,
   "distinctBytes": N}, "error": "..." (only when something failed)}

Usage: share_browser.py URL SCREENSHOT.png [--seconds S]"""

import argparse
import json
import sys
import time
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


def browser(*extra: str) -> webdriver.Chrome:
    """Headless chromium with `extra` command-line arguments besides ours."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1000,900", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--metrics-recording-only", "--no-default-browser-check",
                     *extra):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def requested_urls(driver: webdriver.Chrome) -> list[str]:
    """The URLs the page asked for, from Chrome's DevTools network log."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def png_distinct_bytes(png: bytes) -> int:
    """Distinct byte values in the PNG's decompressed image data: a blank (one-colour) page
    has a handful, a drawn map many."""
    position, data = 8, b""
    while position < len(png):
        length = int.from_bytes(png[position:position + 4], "big")
        kind = png[position + 4:position + 8]
        if kind == b"IDAT":
            data += png[position + 8:position + 8 + length]
        position += 12 + length
    return len(set(zlib.decompress(data)))


def save_screenshot(driver: webdriver.Chrome, path: str) -> dict:
    """Writes a screenshot of the page to `path`; returns its report entry."""
    png = driver.get_screenshot_as_png()
    with open(path, "wb") as file:
        file.write(png)
    return {"bytes": len(png), "distinctBytes": png_distinct_bytes(png)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("screenshot")
    parser.add_argument("--seconds", type=float, default=90)
    args = parser.parse_args()
    report = {"statuses": [], "vehiclePositions": [], "etas": [], "requests": []}
    driver = browser()
    try:
        driver.get(args.url)
        deadline = time.monotonic() + args.seconds
        shot_taken = False
        while time.monotonic() < deadline:
            state = driver.execute_script("""
                var svg = document.querySelector('#map svg');
                var vehicle = svg && svg.querySelector('[data-role="vehicle"]');
                var roles = {};
                if (svg) svg.querySelectorAll('[data-role]').forEach(function (e) {
                  var role = e.getAttribute('data-role'); roles[role] = (roles[role] || 0) + 1; });
                return {
                  status: svg ? svg.getAttribute('data-trip-status') : null,
                  vehicle: vehicle ? vehicle.getAttribute('data-lat') + ',' + vehicle.getAttribute('data-lng') : null,
                  eta: document.getElementById('eta').textContent,
                  roles: roles };
            """)
            if state["status"] and (not report["statuses"] or report["statuses"][-1] != state["status"]):
                report["statuses"].append(state["status"])
            if state["vehicle"] and state["vehicle"] not in report["vehiclePositions"]:
                report["vehiclePositions"].append(state["vehicle"])
            if state["eta"] not in report["etas"]:
                report["etas"].append(state["eta"])
            report["markers"] = {k: v for k, v in state["roles"].items() if k != "route"}
            report["routeSegments"] = max(report.get("routeSegments", 0), state["roles"].get("route", 0))
            # The screenshot once the map shows a route and the vehicle has moved.
            if not shot_taken and state["roles"].get("route", 0) > 0 and len(report["vehiclePositions"]) > 1:
                report["screenshot"] = save_screenshot(driver, args.screenshot)
                shot_taken = True
            if state["status"] == "COMPLETE" and shot_taken:
                break
            time.sleep(0.2)
        report["requests"] = requested_urls(driver)
    except Exception as error:  # the report says what failed; the test fails on it
        report["error"] = f"{type(error).__name__}: {error}"
    finally:
        driver.quit()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
