"""Many share pages at once in one headless chromium, through a TLS balancer: which protocol
the document and the event stream travelled over, and whether every page updates.

Opens each URL in a tab of its own (all in one browser, so over HTTP/1.1 they would share
six connections to the host), trusting the server's key by its SPKI hash (the certificate is
the test CA's, which chromium does not know), and watches them all until every one shows
COMPLETE or the time runs out. Prints one JSON report:

  {"pages": [{"url": ..., "documentProtocol": nextHopProtocol of the page's navigation,
              "statuses": [data-trip-status values seen, in order],
              "vehiclePositions": [distinct "lat,lng" of the vehicle marker]}, ...],
   "protocols": {URL: protocol of its response, from DevTools' Network.responseReceived},
   "error": "..." (only when something failed)}

Usage: share_browser_h2.py CERTIFICATE.pem SECONDS URL..."""

import base64
import hashlib
import json
import sys
import time

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from share_browser import browser


def spki_sha256(certificate: str) -> str:
    """What --ignore-certificate-errors-spki-list takes: base64 of the key's SHA-256."""
    with open(certificate, "rb") as file:
        key = x509.load_pem_x509_certificate(file.read()).public_key()
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def main() -> int:
    spki, seconds, urls = spki_sha256(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    report = {"pages": [{"url": url, "statuses": [], "vehiclePositions": []} for url in urls],
              "protocols": {}}
    driver = browser(f"--ignore-certificate-errors-spki-list={spki}")
    try:
        handles = []
        for index, url in enumerate(urls):
            if index:
                driver.switch_to.new_window("tab")
            driver.get(url)
            handles.append(driver.current_window_handle)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for page, handle in zip(report["pages"], handles):
                driver.switch_to.window(handle)
                state = driver.execute_script("""
                    var svg = document.querySelector('#map svg');
                    var vehicle = svg && svg.querySelector('[data-role="vehicle"]');
                    var navigation = performance.getEntriesByType('navigation')[0];
                    return {
                      status: svg ? svg.getAttribute('data-trip-status') : null,
                      vehicle: vehicle ? vehicle.getAttribute('data-lat') + ',' + vehicle.getAttribute('data-lng') : null,
                      protocol: navigation ? navigation.nextHopProtocol : null };
                """)
                page["documentProtocol"] = state["protocol"]
                if state["status"] and (not page["statuses"] or page["statuses"][-1] != state["status"]):
                    page["statuses"].append(state["status"])
                if state["vehicle"] and state["vehicle"] not in page["vehiclePositions"]:
                    page["vehiclePositions"].append(state["vehicle"])
            if all(page["statuses"][-1:] == ["COMPLETE"] for page in report["pages"]):
                break
            time.sleep(0.2)
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.responseReceived":
                response = message["params"]["response"]
                report["protocols"][response["url"]] = response.get("protocol")
    except Exception as error:  # the report says what failed; the test fails on it
        report["error"] = f"{type(error).__name__}: {error}"
    finally:
        driver.quit()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
