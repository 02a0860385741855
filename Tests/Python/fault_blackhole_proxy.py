#!/usr/bin/env python3
"""A TCP proxy that forwards to a server until told to black-hole its connections.

Each accepted client connection gets its own connection to `--target-port` and bytes pass
unchanged both ways. On SIGUSR1 every connection open at that moment is black-holed: from
then on what arrives from either side is read and dropped, nothing is forwarded and nothing
is closed, as when a route or a NAT entry silently disappears. The client's keepalive PINGs
then go unanswered. Connections accepted after the signal forward normally again (the
network "came back" for new connections).

A whole path can go down and come back too. SIGUSR2 takes it down: every open connection is
black-holed as with SIGUSR1, and connections accepted while it is down are held — the kernel
completes their TCP handshake (the listen backlog), but the proxy neither reads from them nor
connects upstream, so the client's bytes wait in its socket buffer and nothing comes back, as
with SYNs dropped by a dead route. SIGHUP brings it back: held connections connect upstream
and forward what waited, as a SYN retransmitted after the route healed would; connections
black-holed while it was down stay black-holed (their bytes are lost, and their state in the
network with them), so a client must notice them and connect anew.

When either side of a connection closes, the proxy closes the other side as well, black-holed
or not, so the server learns that the client gave up (its call is cancelled) and nothing
outlives the test.

Usage (the venv's interpreter; see Tests/PeerSupport/PeerServer.swift):

    .venv/bin/python Tests/Python/fault_blackhole_proxy.py --target-port PORT
        [--target-host 127.0.0.1] [--host 127.0.0.1] [--port 0]

Prints `LISTENING <port>` once, then EVENT lines; SIGUSR1 black-holes, SIGUSR2 takes the path
down, SIGHUP brings it back, SIGTERM/SIGINT end it (status 0), closing every connection.

EVENT lines (stdout; `EVENT <kind> - key=value ...`)
----------------------------------------------------
  connection_opened - conn= peer=       the n-th client connection, with its upstream ready.
  connection_held - conn= peer=         accepted while the path is down: held, not forwarded.
  ping - conn= dir=to_server|to_client ack=0|1 ms=
                                        an HTTP/2 PING frame was forwarded (the proxy reads
                                        the frame headers going by; it never changes bytes);
                                        `ms`: milliseconds since the proxy started.
  goaway - conn= dir= code= debug=      an HTTP/2 GOAWAY frame was forwarded: its error code's
                                        name and its debug data.
  blackholed - conns=<n,n,...|none>     SIGUSR1 handled: these connections are now silent.
  path_down - conns=<n,n,...|none>      SIGUSR2 handled: these connections are now silent, and
                                        new ones are held.
  path_up - held=<n,n,...|none>         SIGHUP handled: the held connections go on.
  dropped - conn= dir=to_server|to_client bytes=
                                        the first bytes dropped in that direction of a
                                        black-holed connection (once per direction).
  connection_closed - conn= how=eof|reset
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from dataclasses import dataclass, field

import peer_common as pc


@dataclass(eq=False)
class Link:
    id: int
    writers: list = field(default_factory=list)
    blackholed: bool = False
    dropped: set = field(default_factory=set)  # directions that already printed `dropped`

    def abort(self) -> None:
        for writer in self.writers:
            writer.transport.abort()


class FrameWatcher:
    """Follows the HTTP/2 frame headers of one direction, to report the PINGs that pass."""

    PREFACE = 24  # b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", client to server only
    STARTED = time.monotonic()

    def __init__(self, link: Link, direction: str):
        self.link = link
        self.direction = direction
        self.skip = self.PREFACE if direction == "to_server" else 0
        self.header = bytearray()
        self.goaway: bytearray | None = None  # the payload of a GOAWAY being read
        self.goaway_length = 0

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self.goaway is not None:
                take = min(self.goaway_length - len(self.goaway), len(view))
                self.goaway += view[:take]
                view = view[take:]
                if len(self.goaway) == self.goaway_length:
                    self._report_goaway(bytes(self.goaway))
                    self.goaway = None
                continue
            if self.skip:
                take = min(self.skip, len(view))
                self.skip -= take
                view = view[take:]
                continue
            take = min(9 - len(self.header), len(view))
            self.header += view[:take]
            view = view[take:]
            if len(self.header) < 9:
                return
            length = int.from_bytes(self.header[:3], "big")
            kind = self.header[3]
            if kind == 0x6:  # PING
                pc.emit("ping", None, conn=self.link.id, dir=self.direction,
                        ack=self.header[4] & 0x1,
                        ms=int((time.monotonic() - self.STARTED) * 1000))
            self.header.clear()
            if kind == 0x7 and length >= 8:  # GOAWAY: read its payload
                self.goaway = bytearray()
                self.goaway_length = length
            else:
                self.skip = length

    def _report_goaway(self, payload: bytes) -> None:
        code = int.from_bytes(payload[4:8], "big")
        debug = payload[8:].decode("utf-8", "replace")
        pc.emit("goaway", None, conn=self.link.id, dir=self.direction,
                code=pc.h2_error_name(code), debug=debug or None)


class Proxy:
    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.count = 0
        self.links: set[Link] = set()
        self.path_up = asyncio.Event()
        self.path_up.set()
        self.held: set[Link] = set()  # accepted while the path is down, waiting for it

    def _silence_open_links(self) -> str:
        ids = sorted(link.id for link in self.links)
        for link in self.links:
            link.blackholed = True
        return ",".join(map(str, ids)) or "none"

    def blackhole(self) -> None:
        pc.emit("blackholed", None, conns=self._silence_open_links())

    def take_path_down(self) -> None:
        self.path_up.clear()
        pc.emit("path_down", None, conns=self._silence_open_links())

    def bring_path_up(self) -> None:
        held = ",".join(str(link.id) for link in sorted(self.held, key=lambda l: l.id)) or "none"
        self.held.clear()
        self.path_up.set()
        pc.emit("path_up", None, held=held)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.count += 1
        link = Link(self.count)
        peer = writer.get_extra_info("peername")
        if not self.path_up.is_set():
            # Neither read nor connect upstream: the client's bytes wait in its socket.
            link.writers = [writer]
            self.held.add(link)
            pc.emit("connection_held", None, conn=link.id, peer=f"{peer[0]}:{peer[1]}")
            await self.path_up.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError as error:
            pc.log(f"fault_blackhole_proxy: cannot reach {self.target}: {error}")
            writer.transport.abort()
            return
        link.writers = [writer, up_writer]
        self.links.add(link)
        pc.emit("connection_opened", None, conn=link.id, peer=f"{peer[0]}:{peer[1]}")
        how = "eof"
        try:
            pumps = [
                asyncio.create_task(self._pump(reader, up_writer, link, "to_server")),
                asyncio.create_task(self._pump(up_reader, writer, link, "to_client")),
            ]
            # Whichever side ends first ends the link: a black-holed link forwards no FIN.
            done, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            if any(task.result() == "reset" for task in done):
                how = "reset"
            for task in pending:
                task.cancel()
        finally:
            self.links.discard(link)
            link.abort()
            pc.emit("connection_closed", None, conn=link.id, how=how)

    @staticmethod
    async def _pump(source, sink, link: Link, direction: str) -> str:
        watcher = FrameWatcher(link, direction)
        try:
            while True:
                data = await source.read(256 * 1024)
                if not data:
                    return "eof"
                if link.blackholed:
                    if direction not in link.dropped:
                        link.dropped.add(direction)
                        pc.emit("dropped", None, conn=link.id, dir=direction, bytes=len(data))
                    continue
                watcher.feed(data)
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            return "reset"


async def serve(args) -> None:
    loop = asyncio.get_running_loop()
    proxy = Proxy(args.target_host, args.target_port)
    server = await asyncio.start_server(proxy.handle, args.host, args.port)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, proxy.blackhole)
    loop.add_signal_handler(signal.SIGUSR2, proxy.take_path_down)
    loop.add_signal_handler(signal.SIGHUP, proxy.bring_path_up)
    pc.watch_parent(lambda: loop.call_soon_threadsafe(stop.set))
    pc.announce_listening(server.sockets[0].getsockname()[1])
    await stop.wait()
    server.close()
    for link in list(proxy.links) + list(proxy.held):
        link.abort()


def main() -> int:
    pc.unblock_signals()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP})
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    parser.add_argument("--target-host", default="127.0.0.1")
    parser.add_argument("--target-port", type=int, required=True)
    args = parser.parse_args()
    for name in ("port", "target_port"):
        if not 0 <= getattr(args, name) <= 65535:
            parser.error(f"--{name.replace('_', '-')} must be 0...65535")
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
