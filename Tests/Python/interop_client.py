#!/usr/bin/env python3
"""The standard gRPC interop client on grpcio, to check a server that is not grpcio's.

Runs one case of grpc/grpc doc/interop-test-descriptions.md ("Client" section) against
`--server_host:--server_port` with grpcio's client and prints `PASS <case>` or
`FAIL <case>: <why>`; the exit status is 0 when every case run passed, 1 otherwise, 2 for bad
flags. It is how Tests/GRPCWireTests/Server/ServerInteropTests.swift checks our server role
(the `interop-server` executable) with someone else's client.

The case logic is interop_selfcheck.py's where it fits (that script proves these cases
against grpcio's own server). What grpcio's client API cannot observe is checked with a
small frame-level HTTP/2 client (`RawConnection`, hyperframe + hpack):

* server_compressed_unary / server_compressed_streaming: the compressed flag in the 5-byte
  prefix of each response message (and `grpc-encoding: gzip` when it is set);
* client_compressed_streaming: one compressed and one uncompressed message on one call;
* empty_unary: that the response message is zero bytes on the wire.

The server's CompressedRequest feature is its only view of the request's flag: it answers
INVALID_ARGUMENT when `expect_compressed` disagrees, so the uncompressed probe must fail
with INVALID_ARGUMENT and the gzip-compressed request succeed.

Beyond the standard cases (server-role checks, not in `all`):

  server_deadline    a slow StreamingOutputCall (interval_us) with a short deadline:
                     DEADLINE_EXCEEDED at grpcio's client, and, with only `grpc-timeout`
                     and no client-side timer (raw client), grpc-status 4 from the server
                     itself; both connections stay usable.
  unknown_method     an unknown method of TestService: UNIMPLEMENTED for grpcio, and a
                     Trailers-Only response (:status 200, grpc-status 12) on the wire.
  graceful_shutdown  needs --server_pid: with a slow stream in flight on grpcio's channel and
                     one on the raw connection, sends SIGTERM to the server; both streams
                     must complete OK with every response, the raw connection must see
                     GOAWAY(NO_ERROR) that lets its stream finish, then the close; a new
                     channel then gets UNAVAILABLE.
  shutdown_after_grace  needs --server_pid: the same with streams that need 10 s, longer
                     than the grace period: both must end within 5 s of SIGTERM, grpcio's
                     with UNAVAILABLE or CANCELLED, the raw connection after GOAWAY(NO_ERROR).

Usage:  .venv/bin/python Tests/Python/interop_client.py --server_port=PORT \\
            [--server_host=127.0.0.1] [--test_case=large_unary|all|...] [--use_tls=false]
"""

from __future__ import annotations

import argparse
import gzip
import os
import queue
import signal
import socket
import sys
import threading
import time
import traceback

import grpc
import hpack
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

import grpc_testing_stubs as stubs
import interop_selfcheck as selfcheck
import peer_common as pc
from interop_selfcheck import expect, fails_with, zeros

SERVICE = "grpc.testing.TestService"
m = stubs.messages()

STANDARD = selfcheck.STANDARD
EXTRA = ["server_deadline", "unknown_method", "graceful_shutdown", "shutdown_after_grace"]

# ---------------------------------------------------------------------------------------------
# A frame-level HTTP/2 client: what grpcio's API hides (message flags, GOAWAY, trailers-only)


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class RawStream:
    """One gRPC call on a `RawConnection`, as the frames showed it."""

    def __init__(self, stream_id: int, body: bytes, window: int):
        self.id = stream_id
        self.body = memoryview(body)  # request bytes not yet sent
        self.end_stream = True  # END_STREAM once the body is out
        self.sending = True  # body bytes or END_STREAM still to send
        self.send_window = window
        self.headers: dict[str, str] | None = None
        self.trailers: dict[str, str] | None = None
        self.trailers_only = False
        self.deframer = pc.GrpcDeframer(keep=True)
        self.reset: str | None = None  # the RST_STREAM code's name
        self.ended = False  # END_STREAM from the server
        self.trailers_frame: int | None = None  # index in the connection's `frames`

    @property
    def done(self) -> bool:
        return self.ended or self.reset is not None

    @property
    def reset_early(self) -> bool:
        """Reset before its trailers, or with an error code (RST_STREAM(NO_ERROR) after a
        complete response only tells the client to stop sending, RFC 9113 section 8.1)."""
        return self.reset is not None and (self.trailers is None or self.reset != "NO_ERROR")

    @property
    def status(self) -> str | None:
        """grpc-status from the trailers (or the Trailers-Only headers)."""
        return (self.trailers or {}).get("grpc-status")

    def messages(self) -> list[tuple[int, bytes]]:
        """(compressed flag, message bytes as sent, i.e. still compressed) per message."""
        return list(zip(self.deframer.flags, self.deframer.bodies))

    def decoded(self) -> list[bytes]:
        """The response messages, decompressed with the response's grpc-encoding."""
        encoding = (self.headers or {}).get("grpc-encoding")
        out = []
        for flag, body in self.messages():
            if flag:
                plain = pc.decompress(encoding, body)
                expect(plain is not None, f"flag 1 but cannot inflate with {encoding!r}")
                out.append(plain)
            else:
                out.append(body)
        return out


class RawConnection:
    """A plaintext HTTP/2 connection (prior knowledge) that speaks gRPC by hand.

    Frames are built and parsed with hyperframe and hpack directly, not through h2's state
    machine, so the connection can go on reading the streams that a GOAWAY lets finish.
    Every frame received is logged in `frames` (one line each) for failure messages.
    """

    def __init__(self, host: str, port: int, authority: str, timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.authority = authority
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 1 << 16
        self.streams: dict[int, RawStream] = {}
        self.next_id = 1
        self.peer_initial_window = 65535
        self.peer_max_frame = 16384
        self.send_window = 65535  # the connection's
        self.frames: list[str] = []
        # (last stream ID, error code name, index in `frames`)
        self.goaways: list[tuple[int, str, int]] = []
        self.closed = False
        self._buffer = bytearray()
        self._header_block: tuple[int, bool, bytearray] | None = None  # CONTINUATION
        self.sock.sendall(PREFACE + SettingsFrame(0, settings={
            SettingsFrame.ENABLE_PUSH: 0}).serialize())

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def transcript(self) -> str:
        return "frames received:\n    " + "\n    ".join(self.frames[-40:])

    # -- calls

    def start(self, method: str, messages: list[tuple[bytes, bool]], extra=(),
              service: str = SERVICE, end_stream: bool = True) -> RawStream:
        """Opens a call to /service/method and sends `messages` ((bytes, compress) each)."""
        stream_id = self.next_id
        self.next_id += 2
        headers = [(":method", "POST"), (":scheme", "http"), (":path", f"/{service}/{method}"),
                   (":authority", self.authority), ("content-type", "application/grpc"),
                   ("te", "trailers"), ("grpc-accept-encoding", "identity,gzip")]
        if any(compressed for _, compressed in messages):
            headers.append(("grpc-encoding", "gzip"))
        headers += list(extra)
        body = b"".join(pc.grpc_frame(gzip.compress(b) if c else b, c) for b, c in messages)
        stream = RawStream(stream_id, body, self.peer_initial_window)
        stream.end_stream = end_stream
        self.streams[stream_id] = stream
        frame = HeadersFrame(stream_id, self.encoder.encode(headers))
        frame.flags.add("END_HEADERS")
        if not body:
            stream.sending = False
            if end_stream:
                frame.flags.add("END_STREAM")
        self._send(frame.serialize())
        self._send_bodies()
        return stream

    def call(self, method: str, messages: list[tuple[bytes, bool]], extra=(),
             service: str = SERVICE, timeout: float = 10.0) -> RawStream:
        """`start`, then read until the call is over."""
        stream = self.start(method, messages, extra, service)
        self.run_until(lambda: stream.done, timeout, f"the end of stream {stream.id}")
        return stream

    def run_until(self, predicate, timeout: float, what: str) -> None:
        """Reads frames until `predicate()` holds; AssertionError after `timeout` seconds or
        when the connection closes first."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.closed:
                raise AssertionError(f"the connection closed before {what}; "
                                     + self.transcript())
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {what} after {timeout} s; " + self.transcript())
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError as error:
                self.frames.append(f"(socket error {error})")
                chunk = b""
            if not chunk:
                self.closed = True
                self.frames.append("(connection closed by the server)")
                continue
            self._receive(chunk)

    # -- sending

    def _send_bodies(self) -> None:
        out = bytearray()
        for stream in self.streams.values():
            while stream.sending and not stream.done:
                room = min(len(stream.body), stream.send_window, self.send_window,
                           self.peer_max_frame)
                if room == 0 and len(stream.body):
                    break
                chunk = stream.body[:room]
                stream.body = stream.body[room:]
                last = not len(stream.body)
                frame = DataFrame(stream.id, bytes(chunk))
                if last:
                    stream.sending = False
                    if stream.end_stream:
                        frame.flags.add("END_STREAM")
                stream.send_window -= room
                self.send_window -= room
                out += frame.serialize()
        if out:
            self._send(bytes(out))

    def _send(self, data: bytes) -> None:
        """Sends `data`; a connection the server has closed shows up on the next read."""
        try:
            self.sock.sendall(data)
        except OSError as error:
            self.frames.append(f"(send failed: {error})")

    # -- receiving

    def _receive(self, chunk: bytes) -> None:
        self._buffer += chunk
        out = bytearray()
        while len(self._buffer) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(self._buffer[:9]))
            if len(self._buffer) < 9 + length:
                break
            frame.parse_body(memoryview(self._buffer[9:9 + length]))
            del self._buffer[:9 + length]
            out += self._handle(frame)
        if out:
            self._send(bytes(out))
        self._send_bodies()

    def _handle(self, frame) -> bytes:
        flags = ",".join(sorted(frame.flags))
        stream = self.streams.get(frame.stream_id)
        if isinstance(frame, SettingsFrame):
            self.frames.append(f"SETTINGS {flags} {dict(frame.settings)}")
            if "ACK" in frame.flags:
                return b""
            if SettingsFrame.INITIAL_WINDOW_SIZE in frame.settings:
                new = frame.settings[SettingsFrame.INITIAL_WINDOW_SIZE]
                for s in self.streams.values():
                    s.send_window += new - self.peer_initial_window
                self.peer_initial_window = new
            if SettingsFrame.MAX_FRAME_SIZE in frame.settings:
                self.peer_max_frame = frame.settings[SettingsFrame.MAX_FRAME_SIZE]
            ack = SettingsFrame(0)
            ack.flags.add("ACK")
            return ack.serialize()
        if isinstance(frame, WindowUpdateFrame):
            self.frames.append(f"WINDOW_UPDATE s={frame.stream_id} +{frame.window_increment}")
            if frame.stream_id == 0:
                self.send_window += frame.window_increment
            elif stream is not None:
                stream.send_window += frame.window_increment
            return b""
        if isinstance(frame, PingFrame):
            self.frames.append(f"PING {flags}")
            if "ACK" in frame.flags:
                return b""
            pong = PingFrame(0, frame.opaque_data)
            pong.flags.add("ACK")
            return pong.serialize()
        if isinstance(frame, GoAwayFrame):
            code = pc.h2_error_name(frame.error_code)
            self.frames.append(f"GOAWAY last_stream_id={frame.last_stream_id} {code} "
                               f"{frame.additional_data!r}")
            self.goaways.append((frame.last_stream_id, code, len(self.frames) - 1))
            return b""
        if isinstance(frame, RstStreamFrame):
            code = pc.h2_error_name(frame.error_code)
            self.frames.append(f"RST_STREAM s={frame.stream_id} {code}")
            if stream is not None:
                stream.reset = code
            return b""
        if isinstance(frame, (HeadersFrame, ContinuationFrame)):
            if isinstance(frame, HeadersFrame):
                self._header_block = (frame.stream_id, "END_STREAM" in frame.flags,
                                      bytearray(frame.data))
            elif self._header_block is not None:
                self._header_block[2].extend(frame.data)
            if "END_HEADERS" not in frame.flags or self._header_block is None:
                self.frames.append(f"{type(frame).__name__} s={frame.stream_id} {flags}")
                return b""
            stream_id, end, block = self._header_block
            self._header_block = None
            fields = [(k if isinstance(k, str) else k.decode("latin-1"),
                       v if isinstance(v, str) else v.decode("latin-1"))
                      for k, v in self.decoder.decode(bytes(block))]
            self.frames.append(f"HEADERS s={stream_id} {'END_STREAM' if end else ''} {fields}")
            stream = self.streams.get(stream_id)
            if stream is not None:
                if stream.headers is None:
                    stream.headers = dict(fields)
                    if end:  # Trailers-Only
                        stream.trailers = dict(fields)
                        stream.trailers_only = True
                else:
                    stream.trailers = dict(fields)
                if stream.trailers is not None and stream.trailers_frame is None:
                    stream.trailers_frame = len(self.frames) - 1
                stream.ended = stream.ended or end
            return b""
        if isinstance(frame, DataFrame):
            self.frames.append(f"DATA s={frame.stream_id} {flags} len={len(frame.data)} "
                               f"{bytes(frame.data[:5]).hex()}…")
            end = "END_STREAM" in frame.flags
            if stream is not None:
                stream.deframer.feed(bytes(frame.data))
                stream.ended = stream.ended or end
            size = frame.flow_controlled_length
            if size == 0:
                return b""
            # Give the window back at once, the connection's and (while it is open) the
            # stream's, so the server never waits on us.
            out = WindowUpdateFrame(0, window_increment=size).serialize()
            if not end:
                out += WindowUpdateFrame(frame.stream_id, window_increment=size).serialize()
            return out
        self.frames.append(f"{type(frame).__name__} s={frame.stream_id} {flags}")
        return b""


# ---------------------------------------------------------------------------------------------
# The cases


def check_zero_payloads(responses, sizes: list[int]) -> None:
    """`responses` (of StreamingOutputCall/FullDuplexCall) are `sizes` bytes of zeros."""
    got = [len(r.payload.body) for r in responses]
    expect(got == sizes, f"response sizes {got}, expected {sizes}")
    for index, r in enumerate(responses):
        expect(r.payload.body == bytes(len(r.payload.body)),
               f"response {index} has non-zero payload bytes")


class Cases(selfcheck.Cases):
    """interop_selfcheck's cases, minus what needed interop_server.py's EVENT lines.

    Inherited unchanged: large_unary, client_streaming, empty_stream, custom_metadata,
    status_code_and_message, special_status_message, unimplemented_method,
    unimplemented_service, timeout_on_sleeping_server.
    """

    def __init__(self, host: str, port: int, authority: str | None, server_pid: int | None):
        # Not selfcheck.Cases.__init__: there is no interop_server.py (and no EVENT lines).
        self.host, self.port = host, port
        self.authority = authority or f"{host}:{port}"
        self.server_pid = server_pid
        options = [("grpc.max_receive_message_length", 32 * 1024 * 1024)]
        if authority:
            options.append(("grpc.default_authority", authority))
        self.channel = grpc.insecure_channel(f"{host}:{port}", options=options)
        self.stub = {name: stubs.client_method(self.channel, SERVICE, name)
                     for name in stubs.services()[SERVICE]}
        self._raw: RawConnection | None = None

    @property
    def raw(self) -> RawConnection:
        """One raw connection per case, opened on first use."""
        if self._raw is None:
            self._raw = RawConnection(self.host, self.port, self.authority)
        return self._raw

    def close(self) -> None:
        self.channel.close()
        if self._raw is not None:
            self._raw.close()

    def raw_ok(self, stream: RawStream, what: str) -> None:
        expect(not stream.reset_early and stream.status == "0",
               f"{what}: reset={stream.reset} trailers={stream.trailers}; "
               + self.raw.transcript())

    # -- standard cases

    def empty_unary(self):
        response, call = self.stub["EmptyCall"].with_call(m.Empty())
        expect(call.code() == grpc.StatusCode.OK, f"status {call.code()}")
        expect(isinstance(response, m.Empty) and response.SerializeToString() == b"",
               f"response {response!r}")
        # "Ideally … the request and response were zero bytes serialized": on the wire.
        stream = self.raw.call("EmptyCall", [(b"", False)])
        self.raw_ok(stream, "EmptyCall")
        expect(stream.decoded() == [b""], f"response messages {stream.messages()}")

    def client_compressed_unary(self):
        unary = self.stub["UnaryCall"]

        def request(expected: bool):
            return m.SimpleRequest(expect_compressed=m.BoolValue(value=expected),
                                   response_size=314159, payload=zeros(271828))

        # The feature probe: uncompressed, though it says it is compressed.
        fails_with(grpc.StatusCode.INVALID_ARGUMENT, lambda: unary(request(True)))
        response = unary(request(True), compression=grpc.Compression.Gzip)
        expect(response.payload.body == bytes(314159), "compressed request: wrong payload")
        response = unary(request(False))
        expect(response.payload.body == bytes(314159), "uncompressed request: wrong payload")

    def server_compressed_unary(self):
        for compressed in (True, False):
            request = m.SimpleRequest(response_compressed=m.BoolValue(value=compressed),
                                      response_size=314159, payload=zeros(271828))
            response = self.stub["UnaryCall"](request)
            expect(response.payload.body == bytes(314159),
                   f"response_compressed={compressed}: wrong payload")
            stream = self.raw.call("UnaryCall", [(request.SerializeToString(), False)])
            self.raw_ok(stream, f"response_compressed={compressed}")
            flags = [flag for flag, _ in stream.messages()]
            expect(flags == [int(compressed)],
                   f"response_compressed={compressed}: message flags on the wire {flags}")
            if compressed:
                encoding = stream.headers.get("grpc-encoding")
                expect(encoding == "gzip", f"flag 1 with grpc-encoding {encoding!r}")
            decoded = m.SimpleResponse.FromString(stream.decoded()[0])
            expect(decoded.payload.body == bytes(314159),
                   f"response_compressed={compressed}: wire payload is not 314159 zeros")

    def client_compressed_streaming(self):
        call = self.stub["StreamingInputCall"]
        probe = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=True),
                                            payload=zeros(27182))
        fails_with(grpc.StatusCode.INVALID_ARGUMENT, lambda: call(iter([probe])))
        # grpcio compresses all of a call's messages or none: one of each needs the raw client.
        first = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=True),
                                            payload=zeros(27182)).SerializeToString()
        second = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=False),
                                             payload=zeros(45904)).SerializeToString()
        stream = self.raw.call("StreamingInputCall", [(first, True), (second, False)])
        self.raw_ok(stream, "StreamingInputCall")
        decoded = stream.decoded()
        expect(len(decoded) == 1, f"{len(decoded)} response messages")
        size = m.StreamingInputCallResponse.FromString(decoded[0]).aggregated_payload_size
        expect(size == 73086, f"aggregated_payload_size {size}")

    def server_streaming(self):
        sizes = [31415, 9, 2653, 58979]
        request = m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=n) for n in sizes])
        call = self.stub["StreamingOutputCall"](request)
        check_zero_payloads(list(call), sizes)
        expect(call.code() == grpc.StatusCode.OK, f"status {call.code()}")

    def server_compressed_streaming(self):
        request = m.StreamingOutputCallRequest(response_parameters=[
            m.ResponseParameters(size=31415, compressed=m.BoolValue(value=True)),
            m.ResponseParameters(size=92653, compressed=m.BoolValue(value=False))])
        call = self.stub["StreamingOutputCall"](request)
        check_zero_payloads(list(call), [31415, 92653])
        expect(call.code() == grpc.StatusCode.OK, f"status {call.code()}")
        stream = self.raw.call("StreamingOutputCall", [(request.SerializeToString(), False)])
        self.raw_ok(stream, "StreamingOutputCall")
        flags = [flag for flag, _ in stream.messages()]
        expect(flags == [1, 0], f"message flags on the wire {flags}, expected [1, 0]; "
               + self.raw.transcript())
        encoding = stream.headers.get("grpc-encoding")
        expect(encoding == "gzip", f"flag 1 with grpc-encoding {encoding!r}")
        sizes = [len(m.StreamingOutputCallResponse.FromString(b).payload.body)
                 for b in stream.decoded()]
        expect(sizes == [31415, 92653], f"wire payload sizes {sizes}")

    def ping_pong(self):
        requests: queue.Queue = queue.Queue()
        sizes = [(31415, 27182), (9, 8), (2653, 1828), (58979, 45904)]
        call = self.stub["FullDuplexCall"](iter(requests.get, None))
        got = []
        for response_size, payload_size in sizes:
            requests.put(m.StreamingOutputCallRequest(
                response_parameters=[m.ResponseParameters(size=response_size)],
                payload=zeros(payload_size)))
            got.append(next(call))
        requests.put(None)  # half-close
        expect(list(call) == [], "responses after the fourth")
        check_zero_payloads(got, [s for s, _ in sizes])
        expect(call.code() == grpc.StatusCode.OK, f"status {call.code()}")

    def cancel_after_begin(self):
        never: queue.Queue = queue.Queue()
        future = self.stub["StreamingInputCall"].future(iter(never.get, None))
        future.cancel()
        never.put(None)  # ends the thread grpcio reads requests with
        expect(future.cancelled(), "the call was not cancelled")
        try:
            future.result()
            raise AssertionError("the cancelled call succeeded")
        except grpc.FutureCancelledError:
            pass  # grpcio's way of saying CANCELLED for a future
        expect(future.code() == grpc.StatusCode.CANCELLED, f"status {future.code()}")
        # The reset must not have hurt the connection.
        self.stub["EmptyCall"](m.Empty(), timeout=10)

    def cancel_after_first_response(self):
        requests: queue.Queue = queue.Queue()
        requests.put(m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=31415)], payload=zeros(27182)))
        call = self.stub["FullDuplexCall"](iter(requests.get, None))
        check_zero_payloads([next(call)], [31415])
        call.cancel()
        requests.put(None)
        expect(call.code() == grpc.StatusCode.CANCELLED, f"status {call.code()}")
        self.stub["EmptyCall"](m.Empty(), timeout=10)

    # -- server-role checks (not standard cases)

    def server_deadline(self):
        slow = m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=1, interval_us=5_000_000)])
        call = self.stub["StreamingOutputCall"](slow, timeout=0.3)
        fails_with(grpc.StatusCode.DEADLINE_EXCEEDED, lambda: list(call))
        # With only grpc-timeout (no timer in this client), the server must end the call.
        began = time.monotonic()
        stream = self.raw.start("StreamingOutputCall", [(slow.SerializeToString(), False)],
                                extra=[("grpc-timeout", "300m")])
        self.raw.run_until(lambda: stream.done, 4.0,
                           "end of the call from the server once its grpc-timeout (300 ms) passed")
        took = time.monotonic() - began
        expect(not stream.reset_early and stream.status == "4",
               f"expected grpc-status 4 (DEADLINE_EXCEEDED), got reset={stream.reset} "
               f"trailers={stream.trailers}; " + self.raw.transcript())
        expect(took >= 0.25, f"ended after {took:.3f} s, before its deadline")
        # Both connections still serve calls.
        response = self.stub["UnaryCall"](m.SimpleRequest(response_size=100_000), timeout=10)
        expect(len(response.payload.body) == 100_000, "follow-up call on grpcio's channel")
        request = m.SimpleRequest(response_size=100_000).SerializeToString()
        self.raw_ok(self.raw.call("UnaryCall", [(request, False)]), "follow-up raw call")

    def unknown_method(self):
        unknown = self.channel.unary_unary(f"/{SERVICE}/NoSuchMethod")
        fails_with(grpc.StatusCode.UNIMPLEMENTED, lambda: unknown(b"", timeout=10))
        stream = self.raw.call("NoSuchMethod", [(b"", False)])
        expect(stream.trailers_only and stream.status == "12"
               and stream.headers.get(":status") == "200"
               and stream.headers.get("content-type", "").startswith("application/grpc"),
               "expected a Trailers-Only response (:status 200, grpc-status 12); "
               + self.raw.transcript())
        self.stub["EmptyCall"](m.Empty(), timeout=10)

    def graceful_shutdown(self):
        if self.server_pid is None:
            raise AssertionError("graceful_shutdown needs --server_pid")
        # Four responses 100 ms apart: 300 ms left after the first, well inside the server's
        # grace period (1 s for interop-server).
        sizes = [10, 20, 30, 40]
        request = m.StreamingOutputCallRequest(response_parameters=[
            m.ResponseParameters(size=n, interval_us=100_000) for n in sizes])
        call = self.stub["StreamingOutputCall"](request, timeout=20)
        first = next(call)
        raw = self.raw
        stream = raw.start("StreamingOutputCall", [(request.SerializeToString(), False)])
        raw.run_until(lambda: len(stream.deframer.flags) >= 1, 10, "the first raw response")

        os.kill(self.server_pid, signal.SIGTERM)

        rest = list(call)
        check_zero_payloads([first, *rest], sizes)
        expect(call.code() == grpc.StatusCode.OK, f"grpcio's stream: {call.code()} "
               f"{call.details()!r}")
        raw.run_until(lambda: stream.done, 10, "the end of the raw stream")
        self.raw_ok(stream, "raw stream in flight at SIGTERM")
        wire = [len(m.StreamingOutputCallResponse.FromString(b).payload.body)
                for b in stream.decoded()]
        expect(wire == sizes, f"raw stream response sizes {wire}")
        raw.run_until(lambda: raw.closed, 10, "the server closing the connection")
        expect(raw.goaways and raw.goaways[0][1] == "NO_ERROR",
               f"GOAWAY frames {raw.goaways}; " + raw.transcript())
        expect(all(last >= stream.id for last, _, _ in raw.goaways),
               f"a GOAWAY refused the stream in flight ({raw.goaways}); " + raw.transcript())
        expect(raw.goaways[0][2] < stream.trailers_frame,
               "the stream was not in flight at GOAWAY; " + raw.transcript())
        fresh = grpc.insecure_channel(f"{self.host}:{self.port}")
        try:
            unary = stubs.client_method(fresh, SERVICE, "EmptyCall")
            fails_with(grpc.StatusCode.UNAVAILABLE, lambda: unary(m.Empty(), timeout=5))
        finally:
            fresh.close()

    def shutdown_after_grace(self):
        if self.server_pid is None:
            raise AssertionError("shutdown_after_grace needs --server_pid")
        # One response now, then ten a second apart: far longer than the grace period.
        request = m.StreamingOutputCallRequest(response_parameters=[
            m.ResponseParameters(size=1),
            *[m.ResponseParameters(size=1, interval_us=1_000_000)] * 10])
        call = self.stub["StreamingOutputCall"](request, timeout=30)
        next(call)
        raw = self.raw
        stream = raw.start("StreamingOutputCall", [(request.SerializeToString(), False)])
        raw.run_until(lambda: len(stream.deframer.flags) >= 1, 10, "the first raw response")

        began = time.monotonic()
        os.kill(self.server_pid, signal.SIGTERM)

        try:
            rest = list(call)
            raise AssertionError(f"the 10 s stream completed ({1 + len(rest)} responses) "
                                 "although the grace period is shorter")
        except grpc.RpcError as error:
            ended = f"{error.code()} {error.details()!r}"
            expect(error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED),
                   f"grpcio's stream ended with {ended}")
        took = time.monotonic() - began
        expect(took < 5, f"grpcio's stream ended {took:.2f} s after SIGTERM")
        raw.run_until(lambda: raw.closed, 5 - min(took, 4.5), "the server closing the connection")
        expect(raw.goaways and raw.goaways[0][1] == "NO_ERROR",
               f"GOAWAY frames {raw.goaways}; " + raw.transcript())
        expect(stream.status != "0", "the raw stream ended OK; " + raw.transcript())
        pc.log(f"shutdown_after_grace: grpcio saw {ended} after {took:.2f} s; "
               + raw.transcript())


# ---------------------------------------------------------------------------------------------


def boolean(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {text!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server_host", default="localhost")
    parser.add_argument("--server_host_override", default=None,
                        help="the :authority to send (default host:port)")
    parser.add_argument("--server_port", type=int, required=True)
    parser.add_argument("--test_case", default="large_unary",
                        help="a case name, or `all` for the standard cases")
    parser.add_argument("--use_tls", type=boolean, default=False)
    parser.add_argument("--use_test_ca", type=boolean, default=False)
    parser.add_argument("--server_pid", type=int, default=None,
                        help="the server's PID, for graceful_shutdown (it sends SIGTERM)")
    parser.add_argument("--case_timeout", type=float, default=60.0,
                        help="seconds a case may take before it fails")
    args = parser.parse_args()
    if args.use_tls or args.use_test_ca:
        parser.error("this client speaks plaintext HTTP/2 only: --use_tls=false")
    names = STANDARD if args.test_case == "all" else [args.test_case]
    for name in names:
        if name not in STANDARD + EXTRA:
            parser.error(f"unknown --test_case {name!r}; known: all, "
                         + ", ".join(STANDARD + EXTRA))

    failures = 0
    for name in names:
        # A server that never answers must fail the case, not hang the test that runs us.
        watchdog = threading.Timer(args.case_timeout, lambda n=name: (
            print(f"FAIL {n}: no outcome after {args.case_timeout} s", flush=True),
            os._exit(1)))
        watchdog.daemon = True
        watchdog.start()
        cases = Cases(args.server_host, args.server_port, args.server_host_override,
                      args.server_pid)
        began = time.monotonic()
        try:
            getattr(cases, name)()
            print(f"PASS {name}", flush=True)
        except Exception as error:  # noqa: BLE001 - report and go on
            failures += 1
            if isinstance(error, grpc.RpcError) and hasattr(error, "code"):
                why = f"unexpected RPC error {error.code()} {error.details()!r}"
            else:
                why = f"{type(error).__name__}: {error}"
            print(f"FAIL {name}: {why}", flush=True)
            traceback.print_exc(file=sys.stderr)
        finally:
            pc.log(f"{name}: {time.monotonic() - began:.2f} s")
            watchdog.cancel()
            cases.close()
    return 1 if failures else 0


if __name__ == "__main__":
    # Not sys.exit: see pc.exit_without_finalizing.
    pc.exit_without_finalizing(main())
