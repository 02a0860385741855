#!/usr/bin/env python3
"""A token endpoint for the FleetConsumer tests of HTTPAccessTokenProvider and --token-url.

Plain HTTP/1.1 on 127.0.0.1 (http.server). Every GET answers, for the last segment of its
path as the trip ID, `{"token": "tok-<trip ID>", "expiresAt": <now + 3600>}`, with two
exceptions: a path starting with `/status/<code>/` answers that HTTP status and a plain-text
body, and a path starting with `/garbage/` answers 200 with a body that is not JSON.

    .venv/bin/python Tests/Python/fake_token_server.py [--host 127.0.0.1] [--port 0]

Prints `LISTENING <port>`, then `EVENT token <path> trip=<id> header_x_api_key=<value or ->`
for every request; SIGTERM/SIGINT end it (status 0).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import peer_common as pc


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?")[0]
        trip = path.rstrip("/").rsplit("/", 1)[-1]
        pc.emit("token", path, trip=trip, header_x_api_key=self.headers.get("x-api-key", "-"))
        if path.startswith("/status/"):
            code = int(path.split("/")[2])
            self.answer(code, b"no token for you", "text/plain")
        elif path.startswith("/garbage/"):
            self.answer(200, b"<html>not json</html>", "text/html")
        else:
            body = json.dumps({"token": f"tok-{trip}", "expiresAt": int(time.time()) + 3600})
            self.answer(200, body.encode(), "application/json")

    def answer(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's naming
        pc.log("fake_token_server: " + format % args)


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    pc.watch_parent(stop.set)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pc.announce_listening(server.server_address[1])
    while not stop.wait(0.2):
        pass
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
