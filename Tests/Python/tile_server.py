"""A slippy-map tile server for the share page's browser tests: answers `GET /{z}/{x}/{y}.png`
with a 256 × 256 PNG it draws itself — a light checkerboard of "blocks" between white
"streets", and its own `z/x/y` written large in the middle — so that a screenshot shows which
tiles the page placed where. Anything else is 404. Written with zlib and struct only.

Usage: tile_server.py [--host 127.0.0.1] [--port 0]
Prints `LISTENING <port>` once it accepts connections; SIGTERM/SIGINT end it (status 0)."""

import argparse
import re
import signal
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import peer_common as pc

SIZE = 256
# A 5 × 7 font for the characters of "z/x/y".
GLYPHS = {
    "0": ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
    "1": ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    "3": ["11110", "00001", "00001", "01110", "00001", "00001", "11110"],
    "4": ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    "5": ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    "6": ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    "8": ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    "9": ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
    "/": ["00001", "00010", "00010", "00100", "01000", "01000", "10000"],
}
TILE_PATH = re.compile(r"^/(\d{1,2})/(\d{1,8})/(\d{1,8})\.png$")


def tile_png(z: int, x: int, y: int) -> bytes:
    """The PNG of tile z/x/y."""
    block = (232, 234, 214) if (x + y) % 2 == 0 else (222, 230, 240)
    street, ink, edge = (255, 255, 255), (95, 99, 104), (200, 200, 200)
    rows = [bytearray(bytes(block) * SIZE) for _ in range(SIZE)]

    def paint(px: int, py: int, colour) -> None:
        if 0 <= px < SIZE and 0 <= py < SIZE:
            rows[py][px * 3:px * 3 + 3] = bytes(colour)

    for line in range(0, SIZE, 64):  # streets every 64 px, 6 px wide
        for offset in range(line + 29, line + 35):
            for along in range(SIZE):
                paint(offset, along, street)
                paint(along, offset, street)
    for along in range(SIZE):  # the tile's edge
        paint(along, 0, edge)
        paint(0, along, edge)
    text, scale = f"{z}/{x}/{y}", 4
    width = len(text) * 6 * scale
    if width > SIZE - 8:
        scale = 2
        width = len(text) * 6 * scale
    left, top = (SIZE - width) // 2, (SIZE - 7 * scale) // 2
    for index, character in enumerate(text):
        for row, bits in enumerate(GLYPHS[character]):
            for column, bit in enumerate(bits):
                if bit == "1":
                    for dy in range(scale):
                        for dx in range(scale):
                            paint(left + (index * 6 + column) * scale + dx, top + row * scale + dy, ink)
    raw = b"".join(b"\x00" + bytes(row) for row in rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b""))


class Handler(BaseHTTPRequestHandler):
    cache: dict = {}
    lock = threading.Lock()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        match = TILE_PATH.match(self.path)
        if not match:
            self.send_error(404)
            return
        z, x, y = (int(group) for group in match.groups())
        if z > 24 or x >= 1 << z or y >= 1 << z:
            self.send_error(404)
            return
        with Handler.lock:
            png = Handler.cache.get((z, x, y))
        if png is None:
            png = tile_png(z, x, y)
            with Handler.lock:
                Handler.cache[(z, x, y)] = png
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(png)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(png)

    def log_message(self, *_):  # quiet: the browser's log says what was asked
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    pc.unblock_signals()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    pc.watch_parent(stop)
    pc.announce_listening(server.server_address[1])
    server.serve_forever(poll_interval=0.25)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
