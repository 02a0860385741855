#!/usr/bin/env python3
"""Share-link viewers through a balancer, behaving as browsers' EventSource does.

Usage: cluster_viewers.py BASE_URL ADMIN_TOKEN LINKS_PER_TRIP VIEWERS_PER_TRIP SECONDS TRIP...

For each TRIP it makes LINKS_PER_TRIP links (`POST BASE_URL/links`), printing
`EVENT link - trip=<trip> url=<url>` for each; then it opens VIEWERS_PER_TRIP event streams per
trip, spread over the trip's links (viewer v of a trip uses link v mod LINKS_PER_TRIP). Each
viewer reads `BASE_URL/s/<token>/events` over HTTP/1.1 and, like EventSource, reconnects when
the stream ends or breaks, after the last `retry:` the server sent (3 s until it sent one).
It prints, one per line (peer_common's EVENT format):

  EVENT data - viewer=<n> trip=<trip> t=<unix s> status=<status> lat=<vehicle lat or ->
      each `data:` event
  EVENT status - viewer=<n> trip=<trip> t=<unix s> code=<HTTP status>
      each answer to a stream request that is not 200 (it then reconnects as above)
  EVENT end - viewer=<n> trip=<trip> t=<unix s> reason=<eof|error>
      each stream that ended or broke

and, first of all, `LISTENING <the port of BASE_URL>` (for PeerServer), and `EVENT ready - links=<n>` once every
link is made. It exits after SECONDS, or on SIGTERM.
"""

import http.client
import json
import signal
import sys
import threading
import time
import urllib.parse

lock = threading.Lock()
stopping = threading.Event()


def emit(kind: str, **fields) -> None:
    line = " ".join(f"{key}={value}" for key, value in fields.items())
    with lock:
        print(f"EVENT {kind} - {line}", flush=True)


def make_link(base: str, admin: str, trip: str) -> str:
    parts = urllib.parse.urlsplit(base)
    for attempt in range(20):
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            connection.request("POST", "/links", body=json.dumps({"tripName": trip}),
                               headers={"Authorization": f"Bearer {admin}",
                                        "Content-Type": "application/json"})
            response = connection.getresponse()
            body = response.read()
            if response.status == 201:
                return json.loads(body)["url"]
            raise RuntimeError(f"POST /links for {trip}: {response.status} {body!r}")
        except OSError:
            time.sleep(0.25)
        finally:
            connection.close()
    raise RuntimeError(f"POST /links for {trip}: no connection")


def viewer(number: int, trip: str, url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    retry = 3.0
    while not stopping.is_set():
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        reason = "eof"
        try:
            connection.request("GET", parts.path + "/events",
                               headers={"Accept": "text/event-stream"})
            response = connection.getresponse()
            if response.status != 200:
                emit("status", viewer=number, trip=trip, t=f"{time.time():.3f}", code=response.status)
                response.read()
            else:
                while not stopping.is_set():
                    line = response.readline()
                    if not line:
                        break
                    if line.startswith(b"retry: "):
                        retry = int(line[len(b"retry: "):]) / 1000
                    elif line.startswith(b"data: "):
                        event = json.loads(line[len(b"data: "):])
                        vehicle = event.get("vehicle") or {}
                        emit("data", viewer=number, trip=trip, t=f"{time.time():.3f}",
                             status=event.get("status", "-"), lat=vehicle.get("lat", "-"))
                if stopping.is_set():
                    return
                emit("end", viewer=number, trip=trip, t=f"{time.time():.3f}", reason=reason)
        except (OSError, http.client.HTTPException):
            if stopping.is_set():
                return
            emit("end", viewer=number, trip=trip, t=f"{time.time():.3f}", reason="error")
        finally:
            connection.close()
        stopping.wait(retry)


def main() -> int:
    base, admin = sys.argv[1], sys.argv[2]
    links_per_trip, viewers_per_trip = int(sys.argv[3]), int(sys.argv[4])
    seconds, trips = float(sys.argv[5]), sys.argv[6:]
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    with lock:
        print(f"LISTENING {urllib.parse.urlsplit(base).port}", flush=True)
    links = {}
    for trip in trips:
        links[trip] = [make_link(base, admin, trip) for _ in range(links_per_trip)]
        for url in links[trip]:
            emit("link", trip=trip, url=url)
    emit("ready", links=sum(len(urls) for urls in links.values()))
    number = 0
    for trip in trips:
        for index in range(viewers_per_trip):
            threading.Thread(target=viewer, args=(number, trip, links[trip][index % links_per_trip]),
                             daemon=True).start()
            number += 1
    stopping.wait(seconds)
    stopping.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
