#!/usr/bin/env python3
"""A TCP listener that accepts connections and then never speaks, for connect-timeout tests.

Every accepted connection is read from (and the bytes thrown away) so the client's writes
never block, but nothing is ever written back: no HTTP/2 preface, no SETTINGS, no FIN. A
client waiting for the server's SETTINGS therefore waits until its own connect timeout.

Usage (the venv's interpreter; see Tests/PeerSupport/PeerServer.swift):

    .venv/bin/python Tests/Python/fault_silent_listener.py [--host 127.0.0.1] [--port 0]

Prints `LISTENING <port>` once, then EVENT lines; SIGTERM/SIGINT end it (status 0), closing
every connection.

EVENT lines (stdout; `EVENT <kind> - key=value ...`)
----------------------------------------------------
  accepted - conn= peer=            the n-th TCP connection was accepted.
  received - conn= bytes=           bytes read (and dropped) on that connection so far, after
                                    each read.
  closed - conn= how=eof|reset      the client closed the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import peer_common as pc


class SilentListener:
    def __init__(self):
        self.count = 0
        self.writers: set[asyncio.StreamWriter] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.count += 1
        conn = self.count
        peer = writer.get_extra_info("peername")
        self.writers.add(writer)
        pc.emit("accepted", None, conn=conn, peer=f"{peer[0]}:{peer[1]}")
        how = "eof"
        total = 0
        try:
            while True:
                data = await reader.read(64 * 1024)
                if not data:
                    break
                total += len(data)
                pc.emit("received", None, conn=conn, bytes=total)
        except (ConnectionError, OSError):
            how = "reset"
        finally:
            self.writers.discard(writer)
            writer.close()
            pc.emit("closed", None, conn=conn, how=how)


async def serve(args) -> None:
    loop = asyncio.get_running_loop()
    listener = SilentListener()
    server = await asyncio.start_server(listener.handle, args.host, args.port)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    pc.watch_parent(lambda: loop.call_soon_threadsafe(stop.set))
    pc.announce_listening(server.sockets[0].getsockname()[1])
    await stop.wait()
    server.close()
    for writer in list(listener.writers):
        writer.transport.abort()


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    args = parser.parse_args()
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0...65535, not {args.port}")
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
