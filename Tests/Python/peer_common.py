"""What the peer servers of Tests/Python share: process set-up, EVENT lines, gRPC framing.

Conventions every server script follows (Tests/PeerSupport/PeerServer.swift relies on them):

* `--host` (default 127.0.0.1) and `--port` (default 0: the OS picks one).
* Once it accepts connections it prints exactly one line `LISTENING <port>` to stdout.
* After that, stdout carries only `EVENT <kind> <path or -> key=value ...` lines (see
  `emit`); diagnostics go to stderr.
* SIGTERM and SIGINT end it cleanly (exit status 0). Foundation's `Process` on Linux starts
  children with both signals blocked, so `unblock_signals` must run first thing.
* It exits by itself when its parent process goes away, so a crashed `swift test` leaves
  no server behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
import zlib
from pathlib import Path

# RFC 9113 section 7.
H2_ERROR_CODES = {
    0x0: "NO_ERROR",
    0x1: "PROTOCOL_ERROR",
    0x2: "INTERNAL_ERROR",
    0x3: "FLOW_CONTROL_ERROR",
    0x4: "SETTINGS_TIMEOUT",
    0x5: "STREAM_CLOSED",
    0x6: "FRAME_SIZE_ERROR",
    0x7: "REFUSED_STREAM",
    0x8: "CANCEL",
    0x9: "COMPRESSION_ERROR",
    0xA: "CONNECT_ERROR",
    0xB: "ENHANCE_YOUR_CALM",
    0xC: "INADEQUATE_SECURITY",
    0xD: "HTTP_1_1_REQUIRED",
}


def h2_error_name(code: int) -> str:
    return H2_ERROR_CODES.get(code, f"0x{code:x}")


def unblock_signals() -> None:
    """Undoes the blocked SIGTERM/SIGINT that Foundation's Process leaves in its children."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def watch_parent(on_orphaned) -> None:
    """Calls `on_orphaned()` (from a daemon thread) once the parent process has gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        on_orphaned()

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


_stdout_lock = threading.Lock()


def _write_line(line: str) -> None:
    with _stdout_lock:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            # Nobody reads our stdout any more: the test that started us is gone.
            os._exit(0)


def announce_listening(port: int) -> None:
    """Prints the one `LISTENING <port>` line the harness waits for."""
    _write_line(f"LISTENING {port}")


def emit(kind: str, path: str | None = None, headers=None, **fields) -> None:
    """Prints `EVENT <kind> <path or -> k=v ... [headers=<json>]` on one line.

    Values never contain spaces (they are replaced by `_`), except the JSON of `headers`,
    which is always last so that a reader can split at ` headers=`.
    """
    parts = ["EVENT", kind, path or "-"]
    for key, value in fields.items():
        if value is None:
            continue
        text = str(value).replace(" ", "_").replace("\n", "\\n") or '""'
        parts.append(f"{key}={text}")
    if headers is not None:
        parts.append(
            "headers="
            + json.dumps([[k, v] for k, v in headers], separators=(",", ":"), ensure_ascii=True)
        )
    _write_line(" ".join(parts))


async def serve_until_stopped(server, port: int, grace: float = 0.2) -> None:
    """Announces `port` of a started grpc.aio `server`, waits for SIGTERM, SIGINT or the
    parent's end, then stops it."""
    import asyncio

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    watch_parent(lambda: loop.call_soon_threadsafe(stop.set))
    announce_listening(port)
    await stop.wait()
    await server.stop(grace=grace)


def grpcio_stubs(includes: list[Path], sources: list[str], into: Path) -> None:
    """Generates `sources`' `_pb2` and `_pb2_grpc` modules into `into` with grpcio-tools'
    protoc, in this process (its well-known types searched last), and puts `into` on
    sys.path for them to be imported. Exits 2 when grpcio-tools is missing or protoc fails:
    the peer cannot start."""
    try:
        import grpc_tools
        from grpc_tools import protoc
    except ImportError as error:
        print(f"grpcio-tools is not installed ({error}); use the venv", file=sys.stderr)
        sys.exit(2)
    wkt = Path(grpc_tools.__file__).parent / "_proto"
    status = protoc.main(
        ["protoc", *(f"-I{folder}" for folder in [*includes, wkt]), f"--python_out={into}",
         f"--grpc_python_out={into}", *sources])
    if status != 0:
        print(f"grpcio-tools' protoc failed ({status}) on {sources}", file=sys.stderr)
        sys.exit(2)
    sys.path.insert(0, str(into))


def serve_grpc_threads(server, port: int, grace: float = 1) -> None:
    """Announces `port` of a started grpcio (thread pool) `server`, waits for SIGTERM, SIGINT
    or the parent's end, then stops it within `grace` seconds."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    watch_parent(stop.set)
    announce_listening(port)
    stop.wait()
    server.stop(grace=grace).wait()


class _Stop(Exception):
    pass


def serve_threaded(host: str, port: int, handle, nodelay: bool = False) -> None:
    """Listens on `host`:`port`, announces the port, and runs `handle(sock, number, peer)` on
    a daemon thread per connection, numbered from 1, until SIGTERM, SIGINT or the parent
    exits. `nodelay` sets TCP_NODELAY on each accepted socket."""

    def stop(*_):
        raise _Stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    watch_parent(lambda: os.kill(os.getpid(), signal.SIGTERM))

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    # A signal may land on a connection thread; Python runs the handler on the main thread at
    # its next bytecode, so accept must not block for long.
    listener.settimeout(0.25)
    announce_listening(listener.getsockname()[1])
    count = 0
    try:
        while True:
            try:
                sock, peer = listener.accept()
            except TimeoutError:
                continue
            sock.settimeout(None)
            if nodelay:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            count += 1
            threading.Thread(target=handle, args=(sock, count, peer),
                             name=f"conn-{count}", daemon=True).start()
    except _Stop:
        pass
    finally:
        listener.close()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def exit_without_finalizing(status: int) -> None:
    """Ends a grpcio client with `status` once its output is flushed, skipping the
    interpreter's finalization.

    grpcio's streaming calls consume a request iterator on a daemon thread that takes the
    call's lock. Python stops daemon threads where they stand when it finalizes, so when the
    main thread returns while that thread is inside the lock, the lock is never released, and
    the call's `__del__`, run by the final garbage collection, waits for it for ever: the
    client printed its result and never exits (as in grpc/grpc#40620). interop_client.py's
    status_code_and_message hung so in about 1 run of 200 against interop-server, with the
    one thread left waiting in `_MultiThreadedRendezvous.__del__`. Nothing a client owes the
    test happens in finalization.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def decode_header_list(headers) -> list[tuple[str, str]]:
    """h2/hpack header tuples (bytes or str) as text; binary values are kept as latin-1."""
    out = []
    for name, value in headers:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        out.append((name, value))
    return out


def grpc_frame(message: bytes, compressed: bool = False) -> bytes:
    """The 5-byte gRPC length prefix (flag, big-endian length) followed by `message`."""
    return bytes([1 if compressed else 0]) + len(message).to_bytes(4, "big") + message


def decompress(encoding: str | None, data: bytes) -> bytes | None:
    """`data` decompressed with a grpc-encoding (gzip, deflate); None when unknown or broken."""
    try:
        if encoding == "gzip":
            return zlib.decompress(data, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            return zlib.decompress(data)
    except zlib.error:
        return None
    return None


class GrpcDeframer:
    """Splits the DATA bytes of one direction of one stream into gRPC messages.

    Records, per message, the compressed flag and the length announced by the prefix; keeps
    the message bytes only when `keep` is true. `on_message(index, flag, length, body)` is
    called once a whole message has arrived (body is None when not kept).
    """

    def __init__(self, on_message=None, keep: bool = False):
        self.on_message = on_message
        self.keep = keep
        self.flags: list[int] = []
        self.lengths: list[int] = []
        self.bodies: list[bytes] = []
        self._prefix = bytearray()
        self._remaining = 0
        self._body = bytearray()
        self._in_body = False

    @property
    def partial(self) -> bool:
        """Whether the bytes so far end inside a message (prefix or body)."""
        return self._in_body or bool(self._prefix)

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if not self._in_body:
                take = min(5 - len(self._prefix), len(view))
                self._prefix += view[:take]
                view = view[take:]
                if len(self._prefix) < 5:
                    return
                flag = self._prefix[0]
                self._remaining = int.from_bytes(self._prefix[1:5], "big")
                self.flags.append(flag)
                self.lengths.append(self._remaining)
                self._prefix.clear()
                self._body.clear()
                self._in_body = True
                if self._remaining == 0:
                    self._finish()
                continue
            take = min(self._remaining, len(view))
            if self.keep:
                self._body += view[:take]
            self._remaining -= take
            view = view[take:]
            if self._remaining == 0:
                self._finish()

    def _finish(self) -> None:
        self._in_body = False
        body = bytes(self._body) if self.keep else None
        if self.keep:
            self.bodies.append(body)
        self._body = bytearray()
        if self.on_message is not None:
            index = len(self.flags) - 1
            self.on_message(index, self.flags[index], self.lengths[index], body)


# ---------------------------------------------------------------------------------------------
# TLS (the servers' `--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]`; certificates
# from tls_fixtures.py)


def tls_server_context(cert: str, key: str, client_ca: str | None = None,
                       alpn: tuple[str, ...] | None = ("h2",)):
    """A server-side `ssl.SSLContext`: TLS 1.2 or later, `cert` (PEM chain) with `key`.

    `alpn`: the protocols it selects from what the client offers (None: no ALPN extension in
    its answer, whatever the client offers). `client_ca`: require a client certificate that
    chains to the CAs in this PEM file (mutual TLS); the handshake fails without one.
    """
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    if alpn is not None:
        context.set_alpn_protocols(list(alpn))
    if client_ca is not None:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=client_ca)
    # The name the client sent (SNI), for tls_summary: kept on the connection's SSL object.
    context.sni_callback = lambda ssl_object, name, _: setattr(ssl_object, "fleet_sni", name)
    return context


def tls_summary(ssl_object) -> dict[str, str]:
    """The EVENT fields that describe an established TLS session (`ssl.SSLObject`/`SSLSocket`):
    version, cipher, alpn (`-` when none was selected), client_cert (its CN, or `-`) and sni
    (the server name the client sent, or `-`)."""
    client = "-"
    peer = ssl_object.getpeercert() if ssl_object is not None else None
    if peer:
        for rdn in peer.get("subject", ()):
            for name, value in rdn:
                if name == "commonName":
                    client = value
    cipher = ssl_object.cipher() if ssl_object is not None else None
    return {
        "version": (ssl_object.version() if ssl_object is not None else None) or "-",
        "cipher": cipher[0] if cipher else "-",
        "alpn": (ssl_object.selected_alpn_protocol() if ssl_object is not None else None) or "-",
        "client_cert": client,
        "sni": getattr(ssl_object, "fleet_sni", None) or "-",
    }


def tls_error_text(error: BaseException) -> str:
    """A one-word-ish reason for a failed server-side handshake, for an EVENT field:
    OpenSSL's reason (e.g. PEER_DID_NOT_RETURN_A_CERTIFICATE) when there is one."""
    reason = getattr(error, "reason", None)
    if reason:
        return str(reason)
    return type(error).__name__
