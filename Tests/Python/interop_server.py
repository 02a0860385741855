#!/usr/bin/env python3
"""The gRPC interop server (grpc.testing.TestService) on grpcio, for our client's tests.

Implements the *Server* section of grpc/grpc doc/interop-test-descriptions.md on grpcio's
thread-pool server (grpc.server, the C-core transport; handlers run on `--workers` threads,
default 200, and a hanging call holds one): EmptyCall, UnaryCall, CacheableUnaryCall,
StreamingOutputCall, StreamingInputCall, FullDuplexCall, HalfDuplexCall, with the features
CompressedResponse, CompressedRequest, Echo Status, Echo Metadata and
ResponseParameters.interval_us. `TestService/UnimplementedCall` and the whole
`grpc.testing.UnimplementedService` are not registered, so grpcio itself answers them
UNIMPLEMENTED. Max send and receive message sizes are 32 MiB (so a 16 MiB response works:
UnaryCall with response_size 16777216).

Usage (the venv's interpreter; see Tests/PeerSupport/PeerServer.swift):

    .venv/bin/python Tests/Python/interop_server.py [--host 127.0.0.1] [--port 0]
        [--direct] [--no-wire-events] [--workers N] [--grpc-arg NAME=VALUE ...]
        [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]

Prints `LISTENING <port>` once, then EVENT lines (below); SIGTERM/SIGINT end it (status 0).

TLS (`--tls-cert`, `--tls-key`; certificates from tls_fixtures.py)
-----------------------------------------------------------------
The public port speaks TLS 1.2 or later with this certificate chain and key, offering and
selecting ALPN `h2`; `--tls-client-ca FILE` also requires a client certificate that chains
to the CAs in FILE (mutual TLS). With the relay (the default) the relay terminates TLS
(Python's `ssl`) and forwards the plaintext HTTP/2 to grpcio, so the compression checks,
the test hooks and all EVENT lines work as without TLS, plus:
  tls - conn= version= cipher= alpn=<h2 or -> client_cert=<CN or -> sni=<name or ->
                                        the handshake of connection `conn` completed
                                        (printed right after its connection_opened).
  tls_failed - conn= peer= error=<OpenSSL reason, e.g. PEER_DID_NOT_RETURN_A_CERTIFICATE>
                                        the handshake failed (the connection is closed; no
                                        connection_opened/closed for it).
With `--direct`, grpcio itself serves TLS (grpc.ssl_server_credentials; ALPN h2) and
there are no tls lines.

How the server knows a request message was compressed
------------------------------------------------------
The spec's CompressedRequest feature needs the compressed flag of each request message.
grpcio decompresses before the handler runs and exposes neither the flag nor the request's
`grpc-encoding` (invocation_metadata() lacks it; the C++ server reads the flag through the
C-core's test-only `grpc_call_test_only_get_message_flags`, which Python does not bind).
So, by default, the listening port is a byte-for-byte TCP relay in front of grpcio (which
listens on a private loopback port): the relay forwards every byte unchanged and, reading
along, decodes HTTP/2 frames, HPACK and the gRPC 5-byte prefixes in both directions. A
handler finds its stream through `context.peer()` (the relay's upstream port names the
client connection) and its method path: the oldest stream of that method on that connection
which it has not claimed yet and that is still open. That is exact for calls that do not
overlap on one connection; for overlapping calls of the same method on one connection the
pairing can be wrong (never the case in the interop cases). The check then is the C++
interop server's (test/cpp/interop/interop_server.cc CheckExpectedCompression):
  expect_compressed=true  -> the request carried grpc-encoding other than identity AND the
                             message's compressed flag is 1; else INVALID_ARGUMENT.
  expect_compressed=false -> the message's compressed flag is 0; else INVALID_ARGUMENT.
With `--direct` (grpcio on the public port, no relay) the flag is unknowable: the check is
skipped and `EVENT compression_unverified <path>` is printed.

Compressed responses: `response_compressed` (UnaryCall) and `ResponseParameters.compressed`
(StreamingOutputCall, FullDuplexCall) turn on gzip for the call
(`context.set_compression(grpc.Compression.Gzip)`, which must happen before the response
headers, as `grpc-encoding` goes in them) and `disable_next_message_compression()` before each
message that must go uncompressed. The call's compression is decided when its headers go
out: at the first response (or right away when initial metadata is echoed, which is why
echoing waits for the first response). A later FullDuplexCall request asking for compression
on a call whose headers went out uncompressed gets an uncompressed response and
`EVENT compression_unavailable`. grpcio may still send a message uncompressed when gzip
does not make it smaller (tiny payloads); the interop sizes always compress.

Behaviour details
-----------------
* UnaryCall: echo metadata, compression, the CompressedRequest check, then a payload of
  `response_size` zero bytes; `response_status` (code != 0) ends the call with that code and
  message instead (code 0: OK with that message as grpc-message). Codes that are not gRPC
  codes (> 16) become UNKNOWN (grpcio's status type cannot carry them).
* StreamingOutputCall: one response per ResponseParameters (sleeping `interval_us` before
  each); `response_status` is applied after the responses (so a client sees messages, then
  the status).
* StreamingInputCall: sums payload sizes until half-close; CompressedRequest check per
  message.
* FullDuplexCall: per request, one response per ResponseParameters (all of them, as the
  spec says; the C++ server only uses the first); a request with `response_status` ends the
  call with it at once. HalfDuplexCall: buffers every request until half-close, then answers
  them in order (test.proto).
* CacheableUnaryCall: payload = the current time in ns as ASCII, initial metadata
  `cache-control: max-age=60, public`.
* Echo Metadata on every method: `x-grpc-test-echo-initial` comes back in the initial
  metadata, `x-grpc-test-echo-trailing-bin` in the trailing metadata (also on error statuses).

Test hooks (request metadata; on every TestService method; applied in this order)
---------------------------------------------------------------------------------
  x-fleet-test-id: <text>          copied as id=<text> into this call's handler EVENT lines.
  x-fleet-test-delay-ms: <n>       sleep n ms before doing anything else.
  x-fleet-test-drop-connection: 1  the relay resets the client's TCP connection (RST, no
                                   GOAWAY) as soon as the handler starts. Needs the relay.
  x-fleet-test-rich-status: <code> end the call with status <code> (1..16) and message
                                   "rich status from the interop server", plus
                                   grpc-status-details-bin = google.rpc.Status{code, message,
                                   details: [ErrorInfo{reason "FLEET_TEST_REASON", domain
                                   "fleet.test", metadata {"hook": "rich-status"}},
                                   RetryInfo{retry_delay 1.5 s}, BadRequest{field_violations
                                   [{field "trip.name", description "must look like
                                   providers/{provider}/trips/{trip}"}]}]}, built with
                                   googleapis-common-protos and grpcio-status's
                                   rpc_status.to_status.
  x-fleet-test-hang: 1             never answer: no headers, no message, no status; the
                                   handler waits until the call ends (client cancel or
                                   deadline, or server stop). Prints `EVENT hanging`.
  x-fleet-test-hang: after-headers send the response headers (with echoed initial metadata),
                                   then hang the same way.

EVENT lines (stdout; `EVENT <kind> <path or -> key=value ... [headers=<json>]`)
-------------------------------------------------------------------------------
Handler view (grpcio's):
  started <path> [id=]                  the handler began.
  hanging <path> [id=]                  an x-fleet-test-hang handler is now waiting.
  cancelled <path> [id=] deadline_passed=yes|no
                                        grpcio saw the call cancelled: the client reset the
                                        stream (RST_STREAM), the deadline passed, or the
                                        connection broke. (grpcio's public API cannot tell
                                        this from a finished call; its RPC state, read in
                                        the termination callback, can: grpcio is pinned.)
  finished <path> [id=] code=<NAME>     the handler ended with that status.
  compression_unverified / compression_unavailable <path>   see above.
Wire view (the relay, in the order bytes passed; conn = n-th accepted TCP connection):
  connection_opened - conn= peer=       connection_closed - conn= how=eof|reset
  request <path> conn= stream= end_stream=0|1 headers=<json of the request headers>
  response_headers <path> conn= stream= end_stream=0|1 headers=<json>  (end_stream=1 =
                                        trailers, or a Trailers-Only response)
  message <path> conn= stream= dir=request|response index= compressed=0|1 length=
                                        one gRPC message (length as announced by the prefix)
  rst_stream <path> conn= stream= from=client|server code=<HTTP/2 error name>
  goaway - conn= from=client|server code= last_stream=
  sniffer_error - conn= dir= error=     the relay stopped decoding that direction (bytes
                                        still pass); CompressedRequest checks become
                                        compression_unverified.
`--no-wire-events` silences request/response_headers/message lines (the rest stay).

What grpcio (1.85.1) does on the wire, as seen through the relay
----------------------------------------------------------------
* Server SETTINGS: INITIAL_WINDOW_SIZE 4 MiB, MAX_FRAME_SIZE 4 MiB, MAX_HEADER_LIST_SIZE
  16 KiB (request metadata must fit), no MAX_CONCURRENT_STREAMS, and 0xFE03 = 1
  (grpc_allow_true_binary_metadata). Two grpcio peers then send -bin values as raw bytes
  after a NUL; to a client that does not announce 0xFE03, -bin values are unpadded base64.
* Responses: headers `:status 200, content-type application/grpc, [grpc-encoding gzip],
  grpc-accept-encoding "identity, deflate, gzip", <custom>`; trailers `grpc-status,
  grpc-message` (an empty grpc-message even on OK), then custom trailing metadata.
* An error before any response message goes out as Trailers-Only (one HEADERS with
  :status, content-type, grpc-status, grpc-message, END_STREAM). Unknown methods and
  services: Trailers-Only grpc-status 12 "Method not found!".
* When the deadline passes, the server sends grpc-status 4 "Deadline Exceeded" trailers and
  then RST_STREAM NO_ERROR.
* grpcio's client sends `grpc-accept-encoding: identity, deflate, gzip`, `grpc-timeout`
  like `501m`, `te: trailers`, `user-agent grpc-python/1.85.1 grpc-c/58.0.0 (linux; chttp2)`;
  with compression=Gzip it adds `grpc-encoding: gzip` and sets the flag on its messages.
  It cancels with RST_STREAM CANCEL.

Graceful shutdown (`--shutdown-grace SECONDS`)
----------------------------------------------
Without the flag, SIGTERM resets every client connection at once (relay) and gives grpcio
0.5 s. With it, SIGTERM drains instead: the public port stops listening at once (a new server
may bind it), grpcio sends GOAWAY on every connection (through the relay, which keeps
forwarding) and lets the calls in flight run for up to SECONDS, then cancels the rest and
closes; the process exits once grpcio is done. Prints, once the port is closed:
  draining - grace=<SECONDS>            (with --direct grpcio closes its port itself, within
                                        moments of this line)

Generated code: none on disk. grpc_testing_stubs.py compiles /usr/share/grpc-proto with
grpc_tools.protoc into a descriptor set and builds the classes in a private pool, because
generated `grpc/testing/*_pb2.py` modules would clash with grpcio's own `grpc` package.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import traceback
from concurrent import futures
from dataclasses import dataclass, field

import peer_common as pc

try:
    import grpc
    import hpack
    from google.protobuf import any_pb2, duration_pb2
    from google.rpc import error_details_pb2, status_pb2
    from grpc_status import rpc_status

    import grpc_testing_stubs as stubs
except ImportError as error:  # pragma: no cover - environment problem
    print(f"interop_server: missing package ({error}); use the venv (.venv/bin/python)",
          file=sys.stderr)
    sys.exit(2)

SERVICE = "grpc.testing.TestService"
MAX_MESSAGE = 32 * 1024 * 1024
ECHO_INITIAL = "x-grpc-test-echo-initial"
ECHO_TRAILING = "x-grpc-test-echo-trailing-bin"
RICH_MESSAGE = "rich status from the interop server"
CODES = {code.value[0]: code for code in grpc.StatusCode}

WIRE_EVENTS = True  # --no-wire-events turns it off
STREAMS_LOCK = threading.Lock()


# ---------------------------------------------------------------------------------------------
# The relay: forwards bytes unchanged and decodes what passes


@dataclass(eq=False)
class StreamRecord:
    id: int
    path: str
    encoding: str | None  # the request's grpc-encoding
    request: pc.GrpcDeframer | None = None
    response: pc.GrpcDeframer | None = None
    claimed: bool = False
    open: bool = True


@dataclass(eq=False)
class ConnRecord:
    id: int
    streams: dict[int, StreamRecord] = field(default_factory=dict)  # open streams only
    paths: dict[int, str] = field(default_factory=dict)  # every stream, for late frames
    sniffers_ok: bool = True
    transports: list = field(default_factory=list)

    def reset(self) -> None:
        """Closes both TCP connections with RST (SO_LINGER 0)."""
        for transport in self.transports:
            sock = transport.get_extra_info("socket")
            try:
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            transport.abort()


class FrameSniffer:
    """Decodes one direction of an HTTP/2 connection, frame by frame, without changing it."""

    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    def __init__(self, conn: ConnRecord, from_client: bool):
        self.conn = conn
        self.from_client = from_client
        self.direction = "request" if from_client else "response"
        self.preface_left = len(self.PREFACE) if from_client else 0
        self.buffer = bytearray()
        self.decoder = hpack.Decoder()
        # Accept whatever table size the encoder announces: we are not the one to police it.
        self.decoder.max_allowed_table_size = 1 << 24
        self.decoder.max_header_list_size = 1 << 26
        self.block: tuple[int, int, bytearray] | None = None  # stream, HEADERS flags, fragment
        self.broken = False

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        try:
            self._feed(data)
        except Exception as error:  # noqa: BLE001 - a peer's garbage must not stop the relay
            self.broken = True
            self.conn.sniffers_ok = False
            pc.emit("sniffer_error", None, conn=self.conn.id, dir=self.direction,
                    error=type(error).__name__)
            pc.log("interop_server: sniffer stopped:\n" + traceback.format_exc())

    def _feed(self, data: bytes) -> None:
        if self.preface_left:
            take = min(self.preface_left, len(data))
            self.preface_left -= take
            data = data[take:]
        self.buffer += data
        offset = 0
        while len(self.buffer) - offset >= 9:
            length = int.from_bytes(self.buffer[offset:offset + 3], "big")
            if len(self.buffer) - offset < 9 + length:
                break
            ftype = self.buffer[offset + 3]
            flags = self.buffer[offset + 4]
            stream = int.from_bytes(self.buffer[offset + 5:offset + 9], "big") & 0x7FFFFFFF
            payload = bytes(self.buffer[offset + 9:offset + 9 + length])
            offset += 9 + length
            self._frame(ftype, flags, stream, payload)
        del self.buffer[:offset]

    def _frame(self, ftype: int, flags: int, sid: int, payload: bytes) -> None:
        conn = self.conn
        if ftype == 0x0:  # DATA
            if flags & 0x8:
                payload = payload[1:len(payload) - payload[0]]
            record = conn.streams.get(sid)
            if record is not None:
                deframer = record.request if self.from_client else record.response
                deframer.feed(payload)
                if flags & 0x1 and not self.from_client:
                    self._closed(record)
        elif ftype == 0x1:  # HEADERS
            fragment = payload
            if flags & 0x8:
                fragment = fragment[1:len(fragment) - fragment[0]]
            if flags & 0x20:
                fragment = fragment[5:]
            self.block = (sid, flags, bytearray(fragment))
            if flags & 0x4:
                self._header_block_done()
        elif ftype == 0x5:  # PUSH_PROMISE: only decoded to keep HPACK in step
            fragment = payload
            if flags & 0x8:
                fragment = fragment[1:len(fragment) - fragment[0]]
            self.block = (-1, 0, bytearray(fragment[4:]))
            if flags & 0x4:
                self._header_block_done()
        elif ftype == 0x9:  # CONTINUATION
            if self.block is not None:
                self.block[2].extend(payload)
                if flags & 0x4:
                    self._header_block_done()
        elif ftype == 0x3:  # RST_STREAM
            record = conn.streams.get(sid)
            code = int.from_bytes(payload[:4], "big")
            pc.emit("rst_stream", conn.paths.get(sid), conn=conn.id, stream=sid,
                    **{"from": "client" if self.from_client else "server"},
                    code=pc.h2_error_name(code))
            if record is not None:
                self._closed(record)
        elif ftype == 0x7:  # GOAWAY
            last = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
            code = int.from_bytes(payload[4:8], "big")
            pc.emit("goaway", None, conn=conn.id,
                    **{"from": "client" if self.from_client else "server"},
                    code=pc.h2_error_name(code), last_stream=last)

    def _header_block_done(self) -> None:
        sid, flags, block = self.block
        self.block = None
        headers = pc.decode_header_list(self.decoder.decode(bytes(block), raw=True))
        if sid < 0:
            return
        end_stream = 1 if flags & 0x1 else 0
        conn = self.conn
        if self.from_client:
            if sid in conn.streams:
                return  # request trailers: gRPC has none
            fields = dict(headers)
            record = StreamRecord(sid, fields.get(":path", "?"), fields.get("grpc-encoding"))
            record.request = pc.GrpcDeframer(self._on_message(record, "request"))
            record.response = pc.GrpcDeframer(self._on_message(record, "response"))
            with STREAMS_LOCK:
                conn.streams[sid] = record
                conn.paths[sid] = record.path
            if WIRE_EVENTS:
                pc.emit("request", record.path, conn=conn.id, stream=sid,
                        end_stream=end_stream, headers=headers)
        else:
            record = conn.streams.get(sid)
            if WIRE_EVENTS:
                pc.emit("response_headers", conn.paths.get(sid), conn=conn.id,
                        stream=sid, end_stream=end_stream, headers=headers)
            if record is not None and end_stream:
                self._closed(record)

    def _on_message(self, record: StreamRecord, direction: str):
        def on_message(index: int, flag: int, length: int, _body) -> None:
            if WIRE_EVENTS:
                pc.emit("message", record.path, conn=self.conn.id, stream=record.id,
                        dir=direction, index=index, compressed=flag, length=length)
        return on_message

    def _closed(self, record: StreamRecord) -> None:
        with STREAMS_LOCK:
            record.open = False
            self.conn.streams.pop(record.id, None)


class Relay:
    """The public listener: one upstream connection to grpcio per client connection."""

    def __init__(self, upstream_port: int, loop: asyncio.AbstractEventLoop,
                 tls: ssl.SSLContext | None = None):
        self.upstream_port = upstream_port
        self.loop = loop
        self.tls = tls  # None: plaintext on the public port
        self.handlers: set[asyncio.Task] = set()  # one per accepted connection, until it ends
        self.handshaking: set = set()  # client transports whose TLS handshake is under way
        self.by_upstream_port: dict[int, ConnRecord] = {}
        self.connections: set[ConnRecord] = set()
        self.count = 0

    def connection_of(self, context) -> ConnRecord | None:
        peer = context.peer()  # e.g. "ipv4:127.0.0.1:54321": the relay's upstream socket
        try:
            port = int(peer.rsplit(":", 1)[1])
        except (IndexError, ValueError):
            return None
        return self.by_upstream_port.get(port)

    def claim(self, context, path: str) -> StreamRecord | None:
        conn = self.connection_of(context)
        if conn is None or not conn.sniffers_ok:
            return None
        with STREAMS_LOCK:  # handlers run on grpcio's threads, the relay on the event loop
            candidates = [s for s in conn.streams.values()
                          if s.path == path and s.open and not s.claimed]
            if not candidates:
                return None
            record = min(candidates, key=lambda s: s.id)
            record.claimed = True
            return record

    def drop(self, context) -> bool:
        """Resets (TCP RST) the client connection that carries this call."""
        conn = self.connection_of(context)
        if conn is None:
            return False
        self.loop.call_soon_threadsafe(conn.reset)
        return True

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self.handlers.add(task)
        try:
            await self._handle(reader, writer)
        finally:
            self.handlers.discard(task)

    async def stop(self) -> None:
        """Resets every connection and waits (briefly) until their handlers have ended."""
        for transport in list(self.handshaking):
            transport.abort()
        for conn in list(self.connections):
            conn.reset()
        # A handler resumes only after its pumps have seen the reset; without this wait
        # asyncio.run would cancel it first (and Python 3.11 logs that as an error).
        if self.handlers:
            await asyncio.wait(set(self.handlers), timeout=2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.count += 1
        conn = ConnRecord(self.count)
        peer = writer.get_extra_info("peername")
        if self.tls is not None:
            raw = writer.transport
            self.handshaking.add(raw)
            try:
                await writer.start_tls(self.tls, ssl_handshake_timeout=10)
            except (ssl.SSLError, ConnectionError, OSError, asyncio.TimeoutError) as error:
                pc.emit("tls_failed", None, conn=conn.id, peer=f"{peer[0]}:{peer[1]}",
                        error=pc.tls_error_text(error))
                writer.transport.abort()
                return
            finally:
                self.handshaking.discard(raw)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError as error:
            pc.log(f"interop_server: cannot reach grpcio: {error}")
            writer.transport.abort()
            return
        upstream_port = up_writer.get_extra_info("sockname")[1]
        conn.transports = [writer.transport, up_writer.transport]
        self.by_upstream_port[upstream_port] = conn
        self.connections.add(conn)
        pc.emit("connection_opened", None, conn=conn.id, peer=f"{peer[0]}:{peer[1]}")
        if self.tls is not None:
            pc.emit("tls", None, conn=conn.id,
                    **pc.tls_summary(writer.get_extra_info("ssl_object")))
        how = "eof"
        try:
            results = await asyncio.gather(
                self._pump(reader, up_writer, FrameSniffer(conn, from_client=True), conn),
                self._pump(up_reader, writer, FrameSniffer(conn, from_client=False), conn),
            )
            if "reset" in results:
                how = "reset"
        finally:
            for w in (writer, up_writer):
                w.close()
            self.by_upstream_port.pop(upstream_port, None)
            self.connections.discard(conn)
            pc.emit("connection_closed", None, conn=conn.id, how=how)

    @staticmethod
    async def _pump(source, sink, sniffer: FrameSniffer, conn: ConnRecord) -> str:
        try:
            while True:
                data = await source.read(256 * 1024)
                if not data:
                    break
                # Decode first, then forward: a handler can only see a message after grpcio has
                # received it, so its flags are recorded by then.
                sniffer.feed(data)
                sink.write(data)
                await sink.drain()
            if sink.can_write_eof() and not sink.is_closing():
                sink.write_eof()
            return "eof"
        except (ConnectionError, OSError):
            conn.reset()  # pass a reset on as a reset
            return "reset"


# ---------------------------------------------------------------------------------------------
# The service (grpcio's thread-pool server: handlers run on its worker threads)


class Call:
    """Per-call helper: echo metadata, deferred headers, per-message compression."""

    def __init__(self, context, metadata: dict[str, object]):
        self.context = context
        self.headers_sent = False
        self.compressing = False
        self.initial: tuple = ()
        if ECHO_INITIAL in metadata:
            self.initial = ((ECHO_INITIAL, metadata[ECHO_INITIAL]),)
        self.crashed = False  # the method raised something other than an abort
        self.trailing: tuple = ()
        if ECHO_TRAILING in metadata:
            self.trailing = ((ECHO_TRAILING, metadata[ECHO_TRAILING]),)
            context.set_trailing_metadata(self.trailing)

    def send_headers(self, compress: bool = False, extra=(), now: bool = False) -> None:
        """Decides the call's compression; sends the headers now if there is metadata to echo.

        Otherwise grpcio sends them with the first message, or not at all (Trailers-Only)
        when the call ends first.
        """
        if self.headers_sent:
            return
        self.headers_sent = True
        if compress:
            self.context.set_compression(grpc.Compression.Gzip)
            self.compressing = True
        metadata = self.initial + tuple(extra)
        if metadata or now:
            self.context.send_initial_metadata(metadata)

    def response(self, message, compress: bool, path: str):
        """Prepares `message` to go out with (or without) compression; returns it."""
        self.send_headers(compress)
        if compress and not self.compressing:
            pc.emit("compression_unavailable", path)
        if self.compressing and not compress:
            self.context.disable_next_message_compression()
        return message

    def abort(self, code: int, message: str, trailing=()) -> None:
        """Ends the call with `code` (raises, as grpcio's abort does)."""
        if trailing or self.trailing:
            self.context.set_trailing_metadata(tuple(trailing) + self.trailing)
        self.context.abort(CODES.get(code, grpc.StatusCode.UNKNOWN), message)


def zeros(size: int):
    return stubs.messages().Payload(type=0, body=bytes(size))  # type 0: COMPRESSABLE


def rich_status(code: int):
    details = [
        error_details_pb2.ErrorInfo(reason="FLEET_TEST_REASON", domain="fleet.test",
                                    metadata={"hook": "rich-status"}),
        error_details_pb2.RetryInfo(
            retry_delay=duration_pb2.Duration(seconds=1, nanos=500_000_000)),
        error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(
                field="trip.name",
                description="must look like providers/{provider}/trips/{trip}"),
        ]),
    ]
    packed = []
    for detail in details:
        wrapped = any_pb2.Any()
        wrapped.Pack(detail)
        packed.append(wrapped)
    return rpc_status.to_status(status_pb2.Status(code=code, message=RICH_MESSAGE, details=packed))


def wants_compression(parameters) -> bool:
    return any(p.HasField("compressed") and p.compressed.value for p in parameters)


class TestService:
    """The methods of grpc.testing.TestService; each also gets its Call and path."""

    def __init__(self, relay: Relay | None):
        self.relay = relay
        self.m = stubs.messages()

    def compression_error(self, record: StreamRecord | None, index: int, expected: bool,
                          path: str) -> str | None:
        """Why request message `index` breaks expect_compressed, or None."""
        if record is None or index >= len(record.request.flags):
            pc.emit("compression_unverified", path, index=index)
            return None
        compressed = record.request.flags[index] & 1
        if expected:
            if record.encoding in (None, "identity"):
                return ("Expected a compressed request, but the call has no grpc-encoding "
                        "(CompressedRequest)")
            if not compressed:
                return (f"Expected a compressed request, but message {index} has the "
                        "compressed flag unset (CompressedRequest)")
        elif compressed:
            return (f"Expected an uncompressed request, but message {index} has the "
                    "compressed flag set (CompressedRequest)")
        return None

    def claim(self, context, path: str) -> StreamRecord | None:
        return self.relay.claim(context, path) if self.relay is not None else None

    def EmptyCall(self, request, context, call: Call, path: str):
        call.send_headers()
        return self.m.Empty()

    def UnaryCall(self, request, context, call: Call, path: str):
        record = self.claim(context, path)
        compress = request.HasField("response_compressed") and request.response_compressed.value
        call.send_headers(compress)
        if request.HasField("expect_compressed"):
            why = self.compression_error(record, 0, request.expect_compressed.value, path)
            if why:
                call.abort(grpc.StatusCode.INVALID_ARGUMENT.value[0], why)
        if request.HasField("response_status"):
            if request.response_status.code != 0:
                call.abort(request.response_status.code, request.response_status.message)
            context.set_details(request.response_status.message)
        return self.m.SimpleResponse(payload=zeros(request.response_size))

    def CacheableUnaryCall(self, request, context, call: Call, path: str):
        call.send_headers(extra=(("cache-control", "max-age=60, public"),))
        return self.m.SimpleResponse(payload=self.m.Payload(body=str(time.time_ns()).encode()))

    def StreamingOutputCall(self, request, context, call: Call, path: str):
        parameters = list(request.response_parameters)
        call.send_headers(wants_compression(parameters))
        yield from self._respond(call, parameters, path)
        if request.HasField("response_status") and request.response_status.code != 0:
            call.abort(request.response_status.code, request.response_status.message)

    def StreamingInputCall(self, requests, context, call: Call, path: str):
        record = self.claim(context, path)
        total = 0
        for index, request in enumerate(requests):
            if request.HasField("expect_compressed"):
                why = self.compression_error(record, index, request.expect_compressed.value,
                                             path)
                if why:
                    call.abort(grpc.StatusCode.INVALID_ARGUMENT.value[0], why)
            total += len(request.payload.body)
        call.send_headers()
        return self.m.StreamingInputCallResponse(aggregated_payload_size=total)

    def FullDuplexCall(self, requests, context, call: Call, path: str):
        for request in requests:
            if request.HasField("response_status") and request.response_status.code != 0:
                call.abort(request.response_status.code, request.response_status.message)
            yield from self._respond(call, list(request.response_parameters), path)
        call.send_headers()

    def HalfDuplexCall(self, requests, context, call: Call, path: str):
        buffered = list(requests)
        for request in buffered:
            if request.HasField("response_status") and request.response_status.code != 0:
                call.abort(request.response_status.code, request.response_status.message)
            yield from self._respond(call, list(request.response_parameters), path)
        call.send_headers()

    def _respond(self, call: Call, parameters, path: str):
        if parameters:
            call.send_headers(wants_compression(parameters))
        for p in parameters:
            if p.interval_us > 0:
                time.sleep(p.interval_us / 1e6)
            compress = p.HasField("compressed") and p.compressed.value
            yield call.response(self.m.StreamingOutputCallResponse(payload=zeros(p.size)),
                                compress, path)


def with_hooks(service: TestService, name: str, relay: Relay | None):
    """The grpcio handler for `name`: EVENT lines and test hooks around the service method."""
    method = getattr(service, name)
    path = f"/{SERVICE}/{name}"
    streaming = stubs.services()[SERVICE][name].server_streaming

    def prologue(context) -> Call:
        metadata: dict[str, object] = {}
        for key, value in context.invocation_metadata() or ():
            metadata[key] = value
        test_id = metadata.get("x-fleet-test-id")
        pc.emit("started", path, id=test_id)
        ended = threading.Event()
        call = Call(context, metadata)

        def on_end() -> None:
            # Runs once the RPC is over, whatever ended it. grpcio's public API cannot tell a
            # cancelled call from a finished one here; its state (grpcio 1.85, pinned) can.
            state = getattr(context, "_state", None)
            if state is not None and getattr(state, "client", None) == "cancelled":
                remaining = context.time_remaining()
                passed = "yes" if remaining is not None and remaining <= 0 else "no"
                pc.emit("cancelled", path, id=test_id, deadline_passed=passed)
            else:
                code = context.code()
                name = code.name if isinstance(code, grpc.StatusCode) else (
                    "UNKNOWN" if call.crashed else "OK")
                pc.emit("finished", path, id=test_id, code=name)
            ended.set()

        if not context.add_callback(on_end):
            ended.set()
        delay = metadata.get("x-fleet-test-delay-ms")
        if delay is not None:
            time.sleep(int(delay) / 1000)
        if metadata.get("x-fleet-test-drop-connection") and relay is not None:
            if relay.drop(context):
                ended.wait(10)
                context.abort(grpc.StatusCode.UNAVAILABLE, "connection dropped by the test hook")
        rich = metadata.get("x-fleet-test-rich-status")
        if rich is not None:
            code = int(rich) if rich.isdigit() else -1
            if not 1 <= code <= 16:
                call.abort(3, f"x-fleet-test-rich-status must be 1...16, not {rich}")
            status = rich_status(code)
            call.abort(code, status.details, status.trailing_metadata)
        hang = metadata.get("x-fleet-test-hang")
        if hang is not None and hang not in ("0", "false"):
            if hang == "after-headers":
                call.send_headers(now=True)
            pc.emit("hanging", path, id=test_id)
            ended.wait()
            # The call is over (cancelled, deadline, server stop); nothing more goes out.
            context.abort(grpc.StatusCode.CANCELLED, "the hanging call ended")
        return call

    if streaming:
        def handler(request, context):
            call = prologue(context)
            try:
                yield from method(request, context, call, path)
            except grpc.RpcError:
                raise  # the request stream broke: the client cancelled
            except Exception:
                if context.code() is None:
                    call.crashed = True
                raise
    else:
        def handler(request, context):
            call = prologue(context)
            try:
                return method(request, context, call, path)
            except grpc.RpcError:
                raise
            except Exception:
                if context.code() is None:
                    call.crashed = True
                raise
    return handler


class HookedImplementation:
    """What grpc_testing_stubs.generic_handler serves: the hooked handlers by method name."""

    METHODS = ("EmptyCall", "UnaryCall", "CacheableUnaryCall", "StreamingOutputCall",
               "StreamingInputCall", "FullDuplexCall", "HalfDuplexCall")

    def __init__(self, service: TestService, relay: Relay | None):
        for name in self.METHODS:
            setattr(self, name, with_hooks(service, name, relay))


# ---------------------------------------------------------------------------------------------
# Main


def parse_grpc_arg(text: str) -> tuple[str, object]:
    name, equals, value = text.partition("=")
    if not name or not equals:
        raise argparse.ArgumentTypeError(f"--grpc-arg wants NAME=VALUE, got {text!r}")
    try:
        return name, int(value)
    except ValueError:
        return name, value


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve(args) -> None:
    loop = asyncio.get_running_loop()
    options = [
        ("grpc.max_send_message_length", MAX_MESSAGE),
        ("grpc.max_receive_message_length", MAX_MESSAGE),
        ("grpc.so_reuseport", 0),
        *args.grpc_arg,
    ]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.workers,
                                                    thread_name_prefix="handler"),
                         options=options)
    relay = None
    if args.direct and args.tls_cert:
        credentials = grpc.ssl_server_credentials(
            [(read_bytes(args.tls_key), read_bytes(args.tls_cert))],
            root_certificates=read_bytes(args.tls_client_ca) if args.tls_client_ca else None,
            require_client_auth=args.tls_client_ca is not None)
        port = bound = server.add_secure_port(address(args.host, args.port), credentials)
    elif args.direct:
        port = bound = server.add_insecure_port(address(args.host, args.port))
    else:
        bound = server.add_insecure_port("127.0.0.1:0")
        tls = None
        if args.tls_cert:
            tls = pc.tls_server_context(args.tls_cert, args.tls_key, args.tls_client_ca)
        relay = Relay(bound, loop, tls)
    if bound == 0:
        raise SystemExit("interop_server: grpcio could not bind its port")
    service = TestService(relay)
    server.add_generic_rpc_handlers(
        (stubs.generic_handler(SERVICE, HookedImplementation(service, relay)),))
    server.start()

    listener = None
    if relay is not None:
        listener = await asyncio.start_server(relay.handle, args.host, args.port)
        port = listener.sockets[0].getsockname()[1]

    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    pc.watch_parent(lambda: loop.call_soon_threadsafe(stop.set))
    pc.announce_listening(port)
    await stop.wait()
    # Stopping now: a further SIGTERM (a test stopping a server that is already draining)
    # must not kill it. Ignored from here on, and no longer the loop's, so closing the loop
    # cannot put the default action back while grpcio's threads are still being joined.
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.remove_signal_handler(signum)
        signal.signal(signum, signal.SIG_IGN)

    grace = args.shutdown_grace
    if listener is not None:
        listener.close()
        if grace is None:
            await relay.stop()
    if grace is None:
        await asyncio.to_thread(lambda: server.stop(grace=0.5).wait(5))
        return
    # Draining (--shutdown-grace): grpcio sends GOAWAY and waits for the calls in flight; the
    # relay keeps forwarding (this loop keeps running) until grpcio closes each connection.
    drained = await asyncio.to_thread(server.stop, grace)
    pc.emit("draining", None, grace=grace)
    await asyncio.to_thread(drained.wait, grace + 5)
    if relay is not None:
        # grpcio has closed its side; let the relay pass those closes on, then reset the rest.
        for _ in range(100):
            if not relay.connections:
                break
            await asyncio.sleep(0.01)
        await relay.stop()


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    parser.add_argument("--direct", action="store_true",
                        help="grpcio on the public port, no relay (no CompressedRequest check)")
    parser.add_argument("--no-wire-events", action="store_true")
    parser.add_argument("--shutdown-grace", type=float, metavar="SECONDS",
                        help="on SIGTERM, GOAWAY and let calls in flight run this long")
    parser.add_argument("--workers", type=int, default=200,
                        help="handler threads = calls served at once (hanging calls hold one)")
    parser.add_argument("--grpc-arg", type=parse_grpc_arg, action="append", default=[],
                        metavar="NAME=VALUE", help="extra grpcio server option (repeatable)")
    parser.add_argument("--tls-cert", metavar="FILE",
                        help="serve TLS with this PEM certificate chain (needs --tls-key)")
    parser.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert")
    parser.add_argument("--tls-client-ca", metavar="FILE",
                        help="require a client certificate issued by a CA in this PEM file")
    args = parser.parse_args()
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0...65535, not {args.port}")
    if args.shutdown_grace is not None and args.shutdown_grace < 0:
        parser.error("--shutdown-grace must be 0 or more seconds")
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        parser.error("--tls-client-ca needs --tls-cert and --tls-key")
    for path in (args.tls_cert, args.tls_key, args.tls_client_ca):
        if path is not None and not os.path.isfile(path):
            parser.error(f"no such file: {path}")
    global WIRE_EVENTS
    WIRE_EVENTS = not args.no_wire_events
    try:
        stubs.services()  # compile the protos before announcing the port
    except stubs.SetupError as error:
        pc.log(f"interop_server: {error}")
        return 2
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
