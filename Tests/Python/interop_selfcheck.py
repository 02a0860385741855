#!/usr/bin/env python3
"""Proves interop_server.py with grpcio's own client, so a failing Swift case is our client's.

Starts interop_server.py, runs the standard interop cases of grpc/grpc
doc/interop-test-descriptions.md (client section) with grpcio, plus the test hooks, and
prints one line per case: `PASS <case>` or `FAIL <case>: <why>`. What grpcio's client API
cannot see (compressed flags of messages) is checked on the server's wire EVENT lines.
client_compressed_streaming needs one compressed and one uncompressed message on one call,
which grpcio's client cannot do, so that case uses a small raw HTTP/2 client (h2).

Usage:  .venv/bin/python Tests/Python/interop_selfcheck.py [--case NAME ...]
Exit status: 0 all passed, 1 some failed, 2 the server did not start.
"""

from __future__ import annotations

import argparse
import gzip
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import h2.config
import h2.connection
import h2.events
from google.rpc import error_details_pb2
from grpc_status import rpc_status

import grpc_testing_stubs as stubs
import peer_common as pc

HERE = Path(__file__).resolve().parent
SERVICE = "grpc.testing.TestService"
m = stubs.messages()


class Server:
    """interop_server.py as a child process, with its EVENT lines collected."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "interop_server.py"), *args],
            stdout=subprocess.PIPE, text=True, bufsize=1)
        first = self.process.stdout.readline().split()
        if len(first) != 2 or first[0] != "LISTENING":
            raise SystemExit(f"interop_server did not start: {first}")
        self.port = int(first[1])
        self.lines: list[str] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def mark(self) -> int:
        with self.cond:
            return len(self.lines)

    def wait_for(self, start: int, predicate, timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if predicate(line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no matching EVENT line; got:\n  "
                                         + "\n  ".join(self.lines[start:]))
                self.cond.wait(left)

    def events(self, start: int, kind: str) -> list[dict[str, str]]:
        """The `kind` events since `start` as dicts (path under "path")."""
        out = []
        with self.cond:
            lines = list(self.lines[start:])
        for line in lines:
            parts = line.split(" headers=")[0].split()
            if len(parts) >= 3 and parts[0] == "EVENT" and parts[1] == kind:
                fields = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
                fields["path"] = parts[2]
                out.append(fields)
        return out

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(10)


def expect(condition: bool, why: str) -> None:
    if not condition:
        raise AssertionError(why)


def expect_code(error: grpc.RpcError, code: grpc.StatusCode) -> None:
    expect(error.code() == code, f"expected {code.name}, got {error.code()} {error.details()!r}")


def fails_with(code: grpc.StatusCode, function):
    try:
        function()
    except grpc.RpcError as error:
        expect_code(error, code)
        return error
    raise AssertionError(f"expected {code.name}, the call succeeded")


def message_flags(server: Server, start: int, direction: str) -> list[int]:
    return [int(e["compressed"]) for e in server.events(start, "message")
            if e.get("dir") == direction]


def stream_flags(server: Server, start: int, direction: str, count: int,
                 timeout: float = 10.0) -> list[int]:
    """The compressed flags of the `direction` messages of the newest stream begun since
    `start`, once it has `count` of them (or at `timeout`). A case's events are not filtered
    by the mark alone: the previous case's last messages can be logged after it."""
    deadline = time.monotonic() + timeout
    while True:
        events = [e for e in server.events(start, "message") if e.get("dir") == direction]
        begun = [int(e["stream"]) for e in events if e.get("index") == "0"]
        flags = [int(e["compressed"]) for e in events
                 if begun and int(e["stream"]) == max(begun)]
        if len(flags) >= count or time.monotonic() > deadline:
            return flags
        time.sleep(0.01)


def zeros(n: int):
    return m.Payload(body=bytes(n))


# ---------------------------------------------------------------------------------------------
# A small raw HTTP/2 client (for what grpcio's client API cannot do)


def raw_call(port: int, path: str, messages: list[tuple[bytes, bool]], headers=()):
    """One gRPC call with per-message compression; returns (headers, messages, trailers)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                                header_encoding="utf-8"))
    conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", path),
                            (":authority", f"127.0.0.1:{port}"),
                            ("content-type", "application/grpc"), ("te", "trailers"),
                            ("grpc-encoding", "gzip"), *headers])
    body = memoryview(b"".join(pc.grpc_frame(gzip.compress(b) if c else b, c)
                               for b, c in messages))
    response_headers, trailers, data = None, None, bytearray()
    while trailers is None:
        # Send what flow control allows, in frames no larger than the peer accepts.
        while body is not None:
            room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
            if room == 0 and len(body):
                break
            chunk, body = body[:room], body[room:]
            conn.send_data(sid, bytes(chunk), end_stream=not len(body))
            if not len(body):
                body = None
        sock.sendall(conn.data_to_send())
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed")
        for event in conn.receive_data(chunk):
            if isinstance(event, h2.events.ResponseReceived):
                response_headers = dict(event.headers)
            elif isinstance(event, h2.events.TrailersReceived):
                trailers = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived):
                data += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, sid)
            elif isinstance(event, h2.events.StreamEnded) and trailers is None:
                trailers = response_headers  # Trailers-Only
        sock.sendall(conn.data_to_send())
    sock.close()
    deframer = pc.GrpcDeframer(keep=True)
    deframer.feed(bytes(data))
    return response_headers, deframer.bodies, trailers


# ---------------------------------------------------------------------------------------------
# The cases


class Cases:
    def __init__(self, server: Server):
        self.server = server
        self.channel = grpc.insecure_channel(
            f"127.0.0.1:{server.port}",
            options=[("grpc.max_receive_message_length", 32 * 1024 * 1024)])
        self.stub = {name: stubs.client_method(self.channel, SERVICE, name)
                     for name in stubs.services()[SERVICE]}

    def empty_unary(self):
        expect(self.stub["EmptyCall"](m.Empty()) is not None, "no response")

    def large_unary(self):
        r = self.stub["UnaryCall"](m.SimpleRequest(response_size=314159, payload=zeros(271828)))
        expect(r.payload.body == bytes(314159), "payload is not 314159 zero bytes")

    def client_compressed_unary(self):
        unary = self.stub["UnaryCall"]
        request = lambda expected: m.SimpleRequest(  # noqa: E731
            expect_compressed=m.BoolValue(value=expected), response_size=314159,
            payload=zeros(271828))
        fails_with(grpc.StatusCode.INVALID_ARGUMENT, lambda: unary(request(True)))
        start = self.server.mark()
        r = unary(request(True), compression=grpc.Compression.Gzip)
        expect(len(r.payload.body) == 314159, "wrong size")
        r = unary(request(False))
        expect(len(r.payload.body) == 314159, "wrong size")
        expect(message_flags(self.server, start, "request") == [1, 0],
               f"request flags on the wire: {message_flags(self.server, start, 'request')}")

    def server_compressed_unary(self):
        for compressed in (True, False):
            start = self.server.mark()
            r = self.stub["UnaryCall"](m.SimpleRequest(
                response_compressed=m.BoolValue(value=compressed), response_size=314159,
                payload=zeros(271828)))
            expect(len(r.payload.body) == 314159, "wrong size")
            self.server.wait_for(start, lambda l: "dir=response" in l)
            flags = message_flags(self.server, start, "response")
            expect(flags == [int(compressed)], f"response_compressed={compressed}: {flags}")

    def client_streaming(self):
        sizes = (27182, 8, 1828, 45904)
        r = self.stub["StreamingInputCall"](
            iter([m.StreamingInputCallRequest(payload=zeros(n)) for n in sizes]))
        expect(r.aggregated_payload_size == 74922, f"got {r.aggregated_payload_size}")

    def client_compressed_streaming(self):
        call = self.stub["StreamingInputCall"]
        probe = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=True),
                                            payload=zeros(27182))
        fails_with(grpc.StatusCode.INVALID_ARGUMENT, lambda: call(iter([probe])))
        first = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=True),
                                            payload=zeros(27182)).SerializeToString()
        second = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=False),
                                             payload=zeros(45904)).SerializeToString()
        _, bodies, trailers = raw_call(self.server.port, f"/{SERVICE}/StreamingInputCall",
                                       [(first, True), (second, False)])
        expect(trailers.get("grpc-status") == "0", f"status {trailers}")
        size = m.StreamingInputCallResponse.FromString(bodies[0]).aggregated_payload_size
        expect(size == 73086, f"aggregated size {size}")

    def expect_compressed_violations(self):
        path = f"/{SERVICE}/StreamingInputCall"
        for expected, compressed in ((True, False), (False, True)):
            body = m.StreamingInputCallRequest(expect_compressed=m.BoolValue(value=expected),
                                               payload=zeros(100)).SerializeToString()
            _, _, trailers = raw_call(self.server.port, path, [(body, compressed)])
            expect(trailers.get("grpc-status") == "3",
                   f"expect_compressed={expected}, compressed={compressed}: {trailers}")

    def server_streaming(self):
        sizes = [31415, 9, 2653, 58979]
        request = m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=n) for n in sizes])
        got = [len(r.payload.body) for r in self.stub["StreamingOutputCall"](request)]
        expect(got == sizes, f"sizes {got}")

    def server_compressed_streaming(self):
        start = self.server.mark()
        request = m.StreamingOutputCallRequest(response_parameters=[
            m.ResponseParameters(size=31415, compressed=m.BoolValue(value=True)),
            m.ResponseParameters(size=92653, compressed=m.BoolValue(value=False))])
        got = [len(r.payload.body) for r in self.stub["StreamingOutputCall"](request)]
        expect(got == [31415, 92653], f"sizes {got}")
        flags = stream_flags(self.server, start, "response", 2)
        expect(flags == [1, 0], f"response flags on the wire: {flags}")

    def ping_pong(self):
        requests: queue.Queue = queue.Queue()
        sizes = [(31415, 27182), (9, 8), (2653, 1828), (58979, 45904)]

        def generate():
            while (item := requests.get()) is not None:
                yield item

        responses = self.stub["FullDuplexCall"](generate())
        got = []
        for response_size, payload_size in sizes:
            requests.put(m.StreamingOutputCallRequest(
                response_parameters=[m.ResponseParameters(size=response_size)],
                payload=zeros(payload_size)))
            got.append(len(next(responses).payload.body))
        requests.put(None)
        expect(list(responses) == [], "extra responses")
        expect(got == [s for s, _ in sizes], f"sizes {got}")

    def empty_stream(self):
        expect(list(self.stub["FullDuplexCall"](iter([]))) == [], "responses on empty_stream")

    def custom_metadata(self):
        metadata = (("x-grpc-test-echo-initial", "test_initial_metadata_value"),
                    ("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab"))

        def check(call):
            initial = dict(call.initial_metadata())
            trailing = dict(call.trailing_metadata())
            expect(initial.get("x-grpc-test-echo-initial") == "test_initial_metadata_value",
                   f"initial {initial}")
            expect(trailing.get("x-grpc-test-echo-trailing-bin") == b"\xab\xab\xab",
                   f"trailing {trailing}")

        _, call = self.stub["UnaryCall"].with_call(
            m.SimpleRequest(response_size=314159, payload=zeros(271828)), metadata=metadata)
        check(call)
        call = self.stub["FullDuplexCall"](iter([m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=314159)], payload=zeros(271828))]),
            metadata=metadata)
        expect([len(r.payload.body) for r in call] == [314159], "responses")
        check(call)

    def status_code_and_message(self):
        status = m.EchoStatus(code=2, message="test status message")
        e = fails_with(grpc.StatusCode.UNKNOWN,
                       lambda: self.stub["UnaryCall"](m.SimpleRequest(response_status=status)))
        expect(e.details() == "test status message", f"message {e.details()!r}")
        e = fails_with(grpc.StatusCode.UNKNOWN, lambda: list(self.stub["FullDuplexCall"](
            iter([m.StreamingOutputCallRequest(response_status=status)]))))
        expect(e.details() == "test status message", f"message {e.details()!r}")

    def special_status_message(self):
        text = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"
        e = fails_with(grpc.StatusCode.UNKNOWN, lambda: self.stub["UnaryCall"](
            m.SimpleRequest(response_status=m.EchoStatus(code=2, message=text))))
        expect(e.details() == text, f"message {e.details()!r}")

    def unimplemented_method(self):
        fails_with(grpc.StatusCode.UNIMPLEMENTED,
                   lambda: self.stub["UnimplementedCall"](m.Empty()))

    def unimplemented_service(self):
        call = stubs.client_method(self.channel, "grpc.testing.UnimplementedService",
                                   "UnimplementedCall")
        fails_with(grpc.StatusCode.UNIMPLEMENTED, lambda: call(m.Empty()))

    def cancel_after_begin(self):
        start = self.server.mark()
        never: queue.Queue = queue.Queue()
        future = self.stub["StreamingInputCall"].future(iter(never.get, None))
        # Cancel once the server has the call (grpcio sends the headers right away).
        self.server.wait_for(start, lambda l: l.startswith("EVENT started"))
        future.cancel()
        try:
            future.result()
            raise AssertionError("call succeeded")
        except grpc.FutureCancelledError:
            pass  # grpcio's way of saying CANCELLED for a future
        self.server.wait_for(start, lambda l: l.startswith("EVENT cancelled")
                             and "StreamingInputCall" in l)
        self.server.wait_for(start, lambda l: "rst_stream" in l and "from=client" in l
                             and "code=CANCEL" in l)

    def cancel_after_first_response(self):
        start = self.server.mark()
        requests: queue.Queue = queue.Queue()
        requests.put(m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=31415)], payload=zeros(27182)))
        call = self.stub["FullDuplexCall"](iter(requests.get, None))
        expect(len(next(call).payload.body) == 31415, "first response")
        call.cancel()
        expect(call.code() == grpc.StatusCode.CANCELLED, f"code {call.code()}")
        self.server.wait_for(start, lambda l: l.startswith("EVENT cancelled")
                             and "FullDuplexCall" in l)

    def timeout_on_sleeping_server(self):
        requests: queue.Queue = queue.Queue()
        requests.put(m.StreamingOutputCallRequest(payload=zeros(27182)))
        call = self.stub["FullDuplexCall"](iter(requests.get, None), timeout=0.001)
        fails_with(grpc.StatusCode.DEADLINE_EXCEEDED, lambda: list(call))

    # -- beyond the standard cases

    def cacheable_unary(self):
        _, call = self.stub["CacheableUnaryCall"].with_call(m.SimpleRequest())
        expect(dict(call.initial_metadata()).get("cache-control") == "max-age=60, public",
               f"initial {call.initial_metadata()}")

    def half_duplex(self):
        request = lambda n: m.StreamingOutputCallRequest(  # noqa: E731
            response_parameters=[m.ResponseParameters(size=n)])
        got = [len(r.payload.body) for r in self.stub["HalfDuplexCall"](
            iter([request(3), request(5)]))]
        expect(got == [3, 5], f"sizes {got}")

    def interval_us(self):
        began = time.monotonic()
        list(self.stub["StreamingOutputCall"](m.StreamingOutputCallRequest(
            response_parameters=[m.ResponseParameters(size=1, interval_us=100_000)] * 3)))
        expect(time.monotonic() - began >= 0.3, "interval_us not observed")

    def response_16_mib(self):
        r = self.stub["UnaryCall"](m.SimpleRequest(response_size=16 * 1024 * 1024))
        expect(len(r.payload.body) == 16 * 1024 * 1024, "wrong size")

    def hook_rich_status(self):
        e = fails_with(grpc.StatusCode.FAILED_PRECONDITION, lambda: self.stub["UnaryCall"](
            m.SimpleRequest(), metadata=(("x-fleet-test-rich-status", "9"),)))
        status = rpc_status.from_call(e)
        expect(status is not None and status.code == 9, f"details {status}")
        kinds = [d.type_url.rsplit("/", 1)[1] for d in status.details]
        expect(kinds == ["google.rpc.ErrorInfo", "google.rpc.RetryInfo", "google.rpc.BadRequest"],
               f"detail types {kinds}")
        retry = error_details_pb2.RetryInfo()
        status.details[1].Unpack(retry)
        expect(retry.retry_delay.ToMilliseconds() == 1500, f"retry {retry}")

    def hook_hang(self):
        start = self.server.mark()
        fails_with(grpc.StatusCode.DEADLINE_EXCEEDED, lambda: self.stub["UnaryCall"](
            m.SimpleRequest(), metadata=(("x-fleet-test-hang", "1"), ("x-fleet-test-id", "h1")),
            timeout=0.5))
        self.server.wait_for(start, lambda l: l.startswith("EVENT hanging") and "id=h1" in l)
        self.server.wait_for(start, lambda l: l.startswith("EVENT cancelled") and "id=h1" in l)

    def hook_hang_after_headers(self):
        call = self.stub["StreamingOutputCall"](
            m.StreamingOutputCallRequest(), timeout=0.5,
            metadata=(("x-fleet-test-hang", "after-headers"),
                      ("x-grpc-test-echo-initial", "seen")))
        expect(dict(call.initial_metadata()).get("x-grpc-test-echo-initial") == "seen",
               "headers did not arrive before the deadline")
        fails_with(grpc.StatusCode.DEADLINE_EXCEEDED, lambda: list(call))

    def hook_cancel_seen(self):
        start = self.server.mark()
        future = self.stub["UnaryCall"].future(
            m.SimpleRequest(), metadata=(("x-fleet-test-hang", "1"), ("x-fleet-test-id", "c1")))
        self.server.wait_for(start, lambda l: l.startswith("EVENT hanging") and "id=c1" in l)
        future.cancel()
        self.server.wait_for(start, lambda l: l.startswith("EVENT cancelled") and "id=c1" in l
                             and "deadline_passed=no" in l)
        self.server.wait_for(start, lambda l: "rst_stream /grpc.testing.TestService/UnaryCall"
                             in l and "from=client" in l and "code=CANCEL" in l)

    def hook_delay(self):
        began = time.monotonic()
        self.stub["EmptyCall"](m.Empty(), metadata=(("x-fleet-test-delay-ms", "300"),))
        expect(time.monotonic() - began >= 0.3, "no delay")

    def hook_drop_connection(self):
        fails_with(grpc.StatusCode.UNAVAILABLE, lambda: self.stub["UnaryCall"](
            m.SimpleRequest(), metadata=(("x-fleet-test-drop-connection", "1"),), timeout=5))
        # The channel reconnects. A call sent before grpcio has seen the old connection go
        # may still be written to it and fail UNAVAILABLE (broken pipe): grpcio does not
        # retry that one, so the next call must get through.
        for attempt in range(3):
            try:
                self.stub["EmptyCall"](m.Empty(), timeout=5, wait_for_ready=True)
                return
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == 2:
                    raise


STANDARD = [
    "empty_unary", "large_unary", "client_compressed_unary", "server_compressed_unary",
    "client_streaming", "client_compressed_streaming", "server_streaming",
    "server_compressed_streaming", "ping_pong", "empty_stream", "custom_metadata",
    "status_code_and_message", "special_status_message", "unimplemented_method",
    "unimplemented_service", "cancel_after_begin", "cancel_after_first_response",
    "timeout_on_sleeping_server",
]
EXTRA = [
    "expect_compressed_violations", "cacheable_unary", "half_duplex", "interval_us", "response_16_mib", "hook_rich_status",
    "hook_hang", "hook_hang_after_headers", "hook_cancel_seen", "hook_delay",
    "hook_drop_connection",
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", action="append", help="run only these (repeatable)")
    args = parser.parse_args()
    server = Server()
    failures = 0
    try:
        cases = Cases(server)
        for name in args.case or STANDARD + EXTRA:
            try:
                getattr(cases, name)()
                print(f"PASS {name}", flush=True)
            except Exception as error:  # noqa: BLE001 - report and go on
                failures += 1
                print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
        cases.channel.close()
    finally:
        status = server.stop()
    if status != 0:
        print(f"FAIL server exit status {status} after SIGTERM")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    # Not sys.exit: see pc.exit_without_finalizing.
    pc.exit_without_finalizing(main())
