#!/usr/bin/env python3
"""A hostile HTTP/2 client: one attack on a gRPC server per subcommand, reporting what it saw.

Each subcommand connects to `--target HOST:PORT` (plaintext HTTP/2 with prior knowledge, as
gRPC clients speak it), runs one attack, and prints exactly one JSON line on stdout: what the
server answered (gRPC statuses, RST_STREAM and GOAWAY codes), whether and when it closed the
connection, and timings, all in seconds from the attack's start. It judges nothing: the test
that runs it decides what the right answer was (Tests/FleetSimulatorTests/Executable/
HostileClientTests.swift). Diagnostics go to stderr.

Usage (the venv's interpreter; see Tests/PeerSupport/PythonPeer.swift):

    .venv/bin/python Tests/Python/hostile_client.py ATTACK --target 127.0.0.1:PORT [options]

Attacks
-------
  negative-size     one call asking for a negative response size: --method test-unary
                    (TestService/UnaryCall response_size), test-streaming (StreamingOutputCall
                    with one ResponseParameters size) or benchmark-unary (BenchmarkService/
                    UnaryCall); --size (default -1).
  huge-response     BenchmarkService/UnaryCall asking for --size bytes (default 2^30) while
                    our stream windows are 0 (SETTINGS_INITIAL_WINDOW_SIZE 0, no WINDOW_UPDATE).
  stalled-streams   --streams (default 1000) BenchmarkService/StreamingFromServer calls asking
                    for --size-byte messages (default 1 MiB), windows 0 as above, held open for
                    --hold seconds, then the connection is closed.
  idle-connections  --connections TCP connections (default 2000), each sending the client
                    preface unless --no-preface, held for --hold seconds; with --server-pid
                    the server's CPU time over the hold is measured from /proc.
  no-preface        connects and sends nothing; waits up to --wait seconds for the close.
  slowloris         sends the client preface (magic + SETTINGS) one byte per --interval
                    seconds; waits up to --wait seconds for the close.
  grpc-timeout      one TestService/UnaryCall per --value=V, each with `grpc-timeout: V`,
                    on one connection (pass values as --value=V: some start with '-').
  empty-data        BenchmarkService/StreamingFromClient, then --frames empty DATA frames
                    (no END_STREAM) on that stream; waits up to --wait seconds for the close.
  unary-cardinality three calls of the unary --path (default TestService/EmptyCall) with the
                    wrong and the right number of request messages: labels "none" (HEADERS
                    with END_STREAM), "two" (two empty messages) and "one" (one).
  budget-queue      windows 0 as above; --streams (default 12) TestService/StreamingOutputCall
                    calls, each asking for 4 messages of --size bytes (default 1 MiB), to spend
                    the server connection's send budget (--budget bytes, default 8 MiB:
                    spent once that many bytes of messages are queued, which their streams'
                    response HEADERS show); then one call of the unary --path (label
                    "unary"), which is watched for --hold seconds
                    (`unary_headers_during_hold`); then the streaming calls are reset
                    (CANCEL), the connection's and the unary's windows opened, and the unary
                    waited for up to --wait seconds.

With --server-pid, huge-response and stalled-streams also sample the server's VmRSS while
they run and report the largest (`server_rss_max_mib`).

The report (keys absent when they do not apply):
  attack, connected (false: the target could not be reached; exit status 2),
  error (why, when connected is false or the attack broke off), elapsed_s,
  closed, closed_after_s, close_reason ("eof" or "reset"),
  goaway {error_code, error_name, last_stream_id, debug, after_s},
  calls [{label, stream, http_status, grpc_status, grpc_message, messages, data_bytes,
          rst_code, rst_name, ended, ended_after_s, handler_echo}] (one per call; the
          per-stream counts below instead when there are more than 20 streams),
  streams_opened, grpc_status_counts {"<code>" or "none": n}, rst_counts {name: n},
  response_headers (streams that got response HEADERS),
  frames_sent, bytes_sent, send_error,
  connections_requested, connections_open, server_cpu_seconds, server_cpu_share,
  server_fds, server_fd_limit, server_rss_max_mib.

Exit status: 0 when the attack ran (whatever the server answered), 2 when the target could
not be reached.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import resource
import select
import socket
import sys
import threading
import time

import peer_common as pc

try:
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
except ImportError as error:  # pragma: no cover - environment problem
    print(f"hostile_client: missing package ({error}); use the venv (.venv/bin/python)",
          file=sys.stderr)
    sys.exit(2)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TEST_SERVICE = "/grpc.testing.TestService/"
BENCHMARK_SERVICE = "/grpc.testing.BenchmarkService/"
# A value the server's TestService echoes in its response headers when the handler runs
# (interop "Echo Metadata"), so a report can tell whether the handler ran at all.
ECHO_HEADER = "x-grpc-test-echo-initial"
ECHO_VALUE = "handler-ran"
# The most calls a report lists one by one; above that it gives counts.
MAX_LISTED_CALLS = 20


# ---------------------------------------------------------------------------------------------
# Protobuf, by hand: the few grpc.testing fields the attacks set (messages.proto).


def _varint(value: int) -> bytes:
    # Negative int32/int64 values are sent as their 64-bit two's complement (10 bytes).
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def simple_request(response_size: int) -> bytes:
    """SimpleRequest{response_size (field 2)}."""
    return b"\x10" + _varint(response_size)


def streaming_output_request(size: int) -> bytes:
    """StreamingOutputCallRequest{response_parameters (field 2): [ResponseParameters{size}]}."""
    parameters = b"\x08" + _varint(size)
    return b"\x12" + _varint(len(parameters)) + parameters


# ---------------------------------------------------------------------------------------------
# A raw HTTP/2 client connection: frames built with hyperframe and hpack, nothing enforced.


class Call:
    """What one request stream has received so far."""

    def __init__(self, stream_id: int, label: str):
        self.stream_id = stream_id
        self.label = label
        self.header_blocks: list[list[tuple[str, str]]] = []
        self.deframer = pc.GrpcDeframer()
        self.data_bytes = 0
        self.rst_code: int | None = None
        self.ended_after: float | None = None

    def header(self, name: str) -> str | None:
        for block in self.header_blocks:
            for key, value in block:
                if key == name:
                    return value
        return None

    @property
    def grpc_status(self) -> int | None:
        # Trailers (or a trailers-only response) carry it; a malformed value is reported as -1.
        value = self.header("grpc-status")
        if value is None:
            return None
        try:
            return int(value)
        except ValueError:
            return -1

    def report(self) -> dict:
        http = self.header(":status")
        return {
            "label": self.label,
            "stream": self.stream_id,
            "http_status": int(http) if http and http.isdigit() else None,
            "grpc_status": self.grpc_status,
            "grpc_message": self.header("grpc-message"),
            "messages": len(self.deframer.lengths),
            "data_bytes": self.data_bytes,
            "rst_code": self.rst_code,
            "rst_name": pc.h2_error_name(self.rst_code) if self.rst_code is not None else None,
            "ended": self.ended_after is not None,
            "ended_after_s": _round(self.ended_after),
            "handler_echo": self.header(ECHO_HEADER) == ECHO_VALUE,
        }


class RawConnection:
    """One TCP connection speaking HTTP/2 frames that we build ourselves.

    A reader thread parses what the server sends: it records response headers, DATA, RST_STREAM
    and GOAWAY per stream, and answers the server's SETTINGS and PING (so that the attack is
    the only thing wrong with this client). It never sends WINDOW_UPDATE.
    """

    def __init__(self, host: str, port: int, started: float, connect_timeout: float = 5.0):
        self.started = started
        self.sock = socket.create_connection((host, port), timeout=connect_timeout)
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        # Large enough for any header block a server sends back.
        self.decoder.max_allowed_table_size = 1 << 16
        self.calls: dict[int, Call] = {}
        self.next_stream_id = 1
        self.goaway: dict | None = None
        self.closed_after: float | None = None
        self.close_reason: str | None = None
        self.server_settings: dict[int, int] = {}
        self._send_lock = threading.Lock()
        self._preface_sent = False
        self._held_replies: list[bytes] = []
        self._changed = threading.Condition()
        # A header block in progress: (stream ID, bytes so far, END_STREAM of its HEADERS).
        self._pending_block: tuple[int, bytearray, bool] | None = None
        self._reader = threading.Thread(target=self._read, name="reader", daemon=True)
        self._reader.start()

    def now(self) -> float:
        return time.monotonic() - self.started

    # Sending ---------------------------------------------------------------------------------

    def send(self, data: bytes, completes_preface: bool = False) -> None:
        """Writes `data`; raises OSError when the server has closed the connection.

        `completes_preface`: `data` ends the client preface, so the replies the reader has
        held back (SETTINGS ACK) may follow it.
        """
        with self._send_lock:
            self.sock.sendall(data)
            if completes_preface:
                self._preface_sent = True
                held, self._held_replies = self._held_replies, []
                for reply in held:
                    self.sock.sendall(reply)

    def send_preface(self, settings: dict[int, int] | None = None, then: bytes = b"") -> None:
        """The client preface (magic, then a SETTINGS frame of `settings`), then `then`."""
        self.send(self.preface(settings), completes_preface=True)
        if then:
            self.send(then)

    @staticmethod
    def preface(settings: dict[int, int] | None = None) -> bytes:
        frame = SettingsFrame(0)
        frame.settings = dict(settings or {})
        return PREFACE + frame.serialize()

    def _reply(self, data: bytes) -> None:
        # The server's SETTINGS arrive at once; an ACK sent before our preface would be a
        # bad preface, so replies wait until the preface is out.
        with self._send_lock:
            if not self._preface_sent:
                self._held_replies.append(data)
                return
            self.sock.sendall(data)

    def request_headers(self, path: str, extra: list[tuple[str, str]] = (),
                        end_stream: bool = False, label: str | None = None) -> tuple[int, bytes]:
        """A new call: its stream ID and the HEADERS frame that opens it."""
        stream_id = self.next_stream_id
        self.next_stream_id += 2
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", "hostile.test"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ] + list(extra)
        frame = HeadersFrame(stream_id)
        frame.data = self.encoder.encode(headers)
        frame.flags.add("END_HEADERS")
        if end_stream:
            frame.flags.add("END_STREAM")
        with self._changed:
            self.calls[stream_id] = Call(stream_id, path if label is None else label)
        return stream_id, frame.serialize()

    @staticmethod
    def data(stream_id: int, payload: bytes, end_stream: bool = False) -> bytes:
        frame = DataFrame(stream_id)
        frame.data = payload
        if end_stream:
            frame.flags.add("END_STREAM")
        return frame.serialize()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    # Waiting ---------------------------------------------------------------------------------

    def wait(self, predicate, timeout: float) -> bool:
        """Waits until `predicate()` holds (checked after every frame) or `timeout` passes."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True

    def wait_closed(self, timeout: float) -> bool:
        return self.wait(lambda: self.closed_after is not None, timeout)

    # Reporting -------------------------------------------------------------------------------

    def report(self) -> dict:
        with self._changed:
            calls = [self.calls[key] for key in sorted(self.calls)]
            statuses: dict[str, int] = {}
            resets: dict[str, int] = {}
            for call in calls:
                key = "none" if call.grpc_status is None else str(call.grpc_status)
                statuses[key] = statuses.get(key, 0) + 1
                if call.rst_code is not None:
                    name = pc.h2_error_name(call.rst_code)
                    resets[name] = resets.get(name, 0) + 1
            out = {
                "closed": self.closed_after is not None,
                "closed_after_s": _round(self.closed_after),
                "close_reason": self.close_reason,
                "goaway": self.goaway,
                "streams_opened": len(calls),
                "grpc_status_counts": statuses,
                "rst_counts": resets,
                "response_headers": sum(1 for call in calls if call.header(":status")),
            }
            if len(calls) <= MAX_LISTED_CALLS:
                out["calls"] = [call.report() for call in calls]
            return out

    # The reader thread -----------------------------------------------------------------------

    def _read(self) -> None:
        buffer = bytearray()
        reason = "eof"
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    break
                buffer += chunk
                while len(buffer) >= 9:
                    frame, length = Frame.parse_frame_header(memoryview(buffer[:9]))
                    if len(buffer) < 9 + length:
                        break
                    frame.parse_body(memoryview(bytes(buffer[9:9 + length])))
                    del buffer[:9 + length]
                    self._received(frame)
        except OSError as error:
            reason = "reset" if error.errno in (errno.ECONNRESET, errno.EPIPE) else str(error)
        except Exception as error:  # a frame hyperframe cannot parse: stop reading, say why
            reason = f"unparseable frame: {error!r}"
        with self._changed:
            self.closed_after = self.now()
            self.close_reason = reason
            self._changed.notify_all()

    def _received(self, frame) -> None:
        replies = []
        with self._changed:
            if isinstance(frame, SettingsFrame):
                if "ACK" not in frame.flags:
                    self.server_settings.update(frame.settings)
                    ack = SettingsFrame(0)
                    ack.flags.add("ACK")
                    replies.append(ack.serialize())
            elif isinstance(frame, PingFrame):
                if "ACK" not in frame.flags:
                    pong = PingFrame(0)
                    pong.flags.add("ACK")
                    pong.opaque_data = frame.opaque_data
                    replies.append(pong.serialize())
            elif isinstance(frame, GoAwayFrame):
                self.goaway = {
                    "error_code": frame.error_code,
                    "error_name": pc.h2_error_name(frame.error_code),
                    "last_stream_id": frame.last_stream_id,
                    "debug": frame.additional_data.decode("utf-8", "replace"),
                    "after_s": _round(self.now()),
                }
            elif isinstance(frame, (HeadersFrame, ContinuationFrame)):
                self._header_fragment(frame)
            elif isinstance(frame, DataFrame):
                call = self.calls.get(frame.stream_id)
                if call is not None:
                    call.data_bytes += len(frame.data)
                    call.deframer.feed(bytes(frame.data))
                    if "END_STREAM" in frame.flags:
                        call.ended_after = self.now()
            elif isinstance(frame, RstStreamFrame):
                call = self.calls.get(frame.stream_id)
                if call is not None:
                    call.rst_code = frame.error_code
                    call.ended_after = self.now()
            self._changed.notify_all()
        for reply in replies:
            try:
                self._reply(reply)
            except OSError:
                pass

    def _header_fragment(self, frame) -> None:
        if isinstance(frame, HeadersFrame):
            self._pending_block = (
                frame.stream_id, bytearray(frame.data), "END_STREAM" in frame.flags)
        elif self._pending_block is not None:
            self._pending_block[1].extend(frame.data)
        if "END_HEADERS" not in frame.flags or self._pending_block is None:
            return
        stream_id, block, end_stream = self._pending_block
        self._pending_block = None
        headers = pc.decode_header_list(self.decoder.decode(bytes(block), raw=True))
        call = self.calls.get(stream_id)
        if call is not None:
            call.header_blocks.append(headers)
            if end_stream:
                call.ended_after = self.now()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# ---------------------------------------------------------------------------------------------
# The server's process, from /proc (same machine).


def read_rss_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def read_cpu_seconds(pid: int) -> float | None:
    """utime + stime of `pid` (fields 14 and 15 of /proc/PID/stat), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces.
    fields = text[text.rindex(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def count_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def fd_limit(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/limits") as limits:
            for line in limits:
                if line.startswith("Max open files"):
                    return int(line.split()[3])
    except (OSError, ValueError):
        return None
    return None


class RSSSampler:
    """Samples a process's VmRSS every 100 ms on a thread, keeping the largest value."""

    def __init__(self, pid: int | None):
        self.pid = pid
        self.max_mib: float | None = None
        self._stop = threading.Event()
        self._thread = None
        if pid is not None:
            self._thread = threading.Thread(target=self._run, name="rss", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            rss = read_rss_mib(self.pid)
            if rss is not None and (self.max_mib is None or rss > self.max_mib):
                self.max_mib = rss
            if self._stop.wait(0.1):
                return

    def stop(self) -> float | None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        return None if self.max_mib is None else round(self.max_mib, 1)


# ---------------------------------------------------------------------------------------------
# The attacks. Each returns the attack-specific part of the report.


def unary_call(conn: RawConnection, path: str, message: bytes, label: str | None = None,
               extra: list[tuple[str, str]] = ()) -> bytes:
    """HEADERS and one DATA frame (the message, END_STREAM) of a unary-style call."""
    stream_id, headers = conn.request_headers(path, extra, label=label)
    return headers + conn.data(stream_id, pc.grpc_frame(message), end_stream=True)


def all_ended(conn: RawConnection):
    return lambda: conn.closed_after is not None or all(
        call.ended_after is not None for call in conn.calls.values())


def attack_negative_size(args, conn: RawConnection) -> dict:
    if args.method == "test-unary":
        path, message = TEST_SERVICE + "UnaryCall", simple_request(args.size)
    elif args.method == "test-streaming":
        path, message = TEST_SERVICE + "StreamingOutputCall", streaming_output_request(args.size)
    else:
        path, message = BENCHMARK_SERVICE + "UnaryCall", simple_request(args.size)
    conn.send_preface(then=unary_call(conn, path, message, label=args.method))
    conn.wait(all_ended(conn), args.wait)
    return {}


def attack_huge_response(args, conn: RawConnection) -> dict:
    sampler = RSSSampler(args.server_pid)
    settings = {SettingsFrame.INITIAL_WINDOW_SIZE: 0, SettingsFrame.ENABLE_PUSH: 0}
    conn.send_preface(
        settings, then=unary_call(conn, BENCHMARK_SERVICE + "UnaryCall", simple_request(args.size)))
    conn.wait(all_ended(conn), args.wait)
    return {"server_rss_max_mib": sampler.stop()}


def attack_stalled_streams(args, conn: RawConnection) -> dict:
    sampler = RSSSampler(args.server_pid)
    settings = {SettingsFrame.INITIAL_WINDOW_SIZE: 0, SettingsFrame.ENABLE_PUSH: 0}
    message = simple_request(args.size)
    frames = [unary_call(conn, BENCHMARK_SERVICE + "StreamingFromServer", message)
              for _ in range(args.streams)]
    send_error = None
    try:
        conn.send_preface(settings, then=b"".join(frames))
    except OSError as error:
        send_error = str(error)
    # The hold is the attack: streams the server cannot finish, for this long.
    conn.wait_closed(args.hold)
    report = {"server_rss_max_mib": sampler.stop()}
    if send_error:
        report["send_error"] = send_error
    return report


def attack_no_preface(args, conn: RawConnection) -> dict:
    conn.wait_closed(args.wait)
    return {"bytes_sent": 0}


def attack_slowloris(args, conn: RawConnection) -> dict:
    preface = conn.preface({SettingsFrame.ENABLE_PUSH: 0})
    sent = 0
    send_error = None
    deadline = time.monotonic() + args.wait
    for index, byte in enumerate(preface):
        try:
            conn.send(bytes([byte]), completes_preface=index == len(preface) - 1)
        except OSError as error:
            send_error = str(error)
            break
        sent += 1
        if conn.wait_closed(min(args.interval, max(0.0, deadline - time.monotonic()))):
            break
        if time.monotonic() >= deadline:
            break
    conn.wait_closed(max(0.0, deadline - time.monotonic()))
    report = {"bytes_sent": sent, "preface_bytes": len(preface)}
    if send_error:
        report["send_error"] = send_error
    return report


def attack_grpc_timeout(args, conn: RawConnection) -> dict:
    frames = [
        unary_call(conn, TEST_SERVICE + "UnaryCall", simple_request(8), label=value,
                   extra=[("grpc-timeout", value), (ECHO_HEADER, ECHO_VALUE)])
        for value in args.value]
    conn.send_preface(then=b"".join(frames))
    conn.wait(all_ended(conn), args.wait)
    return {}


def attack_empty_data(args, conn: RawConnection) -> dict:
    stream_id, headers = conn.request_headers(BENCHMARK_SERVICE + "StreamingFromClient")
    empty = conn.data(stream_id, b"")
    conn.send_preface(then=headers)
    sent = 0
    send_error = None
    # In batches, so that a server that closes early stops us near where it did.
    batch = 10_000
    while sent < args.frames:
        count = min(batch, args.frames - sent)
        try:
            conn.send(empty * count)
        except OSError as error:
            send_error = str(error)
            break
        sent += count
    conn.wait_closed(args.wait)
    report = {"frames_sent": sent}
    if send_error:
        report["send_error"] = send_error
    return report


def attack_idle_connections(args, host: str, port: int, started: float) -> dict:
    """Holds many connections without a RawConnection each (no reader threads)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.connections + 64
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    preface = PREFACE + SettingsFrame(0).serialize()
    sockets: list[socket.socket] = []
    connecting: dict[int, socket.socket] = {}
    error = None
    try:
        for _ in range(args.connections):
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET,
                                 socket.SOCK_STREAM)
            sock.setblocking(False)
            sockets.append(sock)
            code = sock.connect_ex((host, port))
            if code not in (0, errno.EINPROGRESS):
                raise OSError(code, os.strerror(code))
            connecting[sock.fileno()] = sock
    except OSError as failure:
        error = f"opening connection {len(sockets)}: {failure}"
    # Connects finish once the server's kernel has completed the handshake, whether or not
    # the server has accepted them (they wait in its backlog).
    poller = select.poll()
    for fd in connecting:
        poller.register(fd, select.POLLOUT)
    open_count = 0
    deadline = time.monotonic() + args.connect_wait
    while connecting and time.monotonic() < deadline:
        for fd, _ in poller.poll(max(1, int((deadline - time.monotonic()) * 1000))):
            sock = connecting.pop(fd)
            poller.unregister(fd)
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                open_count += 1
                if not args.no_preface:
                    try:
                        sock.send(preface)
                    except OSError:
                        pass
    report = {
        "connected": open_count > 0,
        "connections_requested": args.connections,
        "connections_open": open_count,
        "connected_after_s": _round(time.monotonic() - started),
    }
    if error:
        report["error"] = error
    if args.server_pid is not None:
        before = read_cpu_seconds(args.server_pid)
        hold_started = time.monotonic()
        time.sleep(args.hold)  # the hold is the attack
        after = read_cpu_seconds(args.server_pid)
        held = time.monotonic() - hold_started
        report["server_fds"] = count_fds(args.server_pid)
        report["server_fd_limit"] = fd_limit(args.server_pid)
        if before is not None and after is not None:
            report["server_cpu_seconds"] = round(after - before, 3)
            report["server_cpu_share"] = round((after - before) / held, 4)
    else:
        time.sleep(args.hold)
    for sock in sockets:
        sock.close()
    return report


def attack_unary_cardinality(args, conn: RawConnection) -> dict:
    none_id, none = conn.request_headers(args.path, end_stream=True, label="none")
    two_id, two = conn.request_headers(args.path, label="two")
    two += conn.data(two_id, pc.grpc_frame(b"") + pc.grpc_frame(b""), end_stream=True)
    conn.send_preface(then=none + two + unary_call(conn, args.path, b"", label="one"))
    conn.wait(all_ended(conn), args.wait)
    return {}


def attack_budget_queue(args, conn: RawConnection) -> dict:
    settings = {SettingsFrame.INITIAL_WINDOW_SIZE: 0, SettingsFrame.ENABLE_PUSH: 0}
    parameters = b"\x08" + _varint(args.size)
    request = b"".join(b"\x12" + _varint(len(parameters)) + parameters for _ in range(4))
    frames = [unary_call(conn, TEST_SERVICE + "StreamingOutputCall", request)
              for _ in range(args.streams)]
    stalled = list(conn.calls)
    conn.send_preface(settings, then=b"".join(frames))
    # A stream's response HEADERS go out once its first message is queued, and queued bytes
    # count against the budget: --budget bytes of messages queued means it is spent.
    needed = -(-args.budget // args.size)
    spent = conn.wait(
        lambda: sum(1 for stream_id in stalled if conn.calls[stream_id].header(":status"))
        >= needed, args.wait)
    unary_id, unary = conn.request_headers(args.path, label="unary")
    conn.send(unary + conn.data(unary_id, pc.grpc_frame(b""), end_stream=True))
    answered = conn.wait(lambda: bool(conn.calls[unary_id].header(":status")), args.hold)
    resets = b""
    for stream_id in stalled:
        frame = RstStreamFrame(stream_id)
        frame.error_code = 0x8  # CANCEL
        resets += frame.serialize()
    opening = b""
    for stream_id in (0, unary_id):
        frame = WindowUpdateFrame(stream_id)
        frame.window_increment = 1 << 20
        opening += frame.serialize()
    conn.send(resets + opening)
    conn.wait(lambda: conn.closed_after is not None or conn.calls[unary_id].ended_after is not None,
              args.wait)
    report = {"unary_headers_during_hold": answered}
    if not spent:
        report["error"] = f"fewer than {needed} streaming calls got response headers"
    return report


ATTACKS = {
    "unary-cardinality": attack_unary_cardinality,
    "budget-queue": attack_budget_queue,
    "negative-size": attack_negative_size,
    "huge-response": attack_huge_response,
    "stalled-streams": attack_stalled_streams,
    "no-preface": attack_no_preface,
    "slowloris": attack_slowloris,
    "grpc-timeout": attack_grpc_timeout,
    "empty-data": attack_empty_data,
}


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="attack", required=True)

    def command(name: str, wait: float | None = None):
        sub = commands.add_parser(name)
        sub.add_argument("--target", required=True, help="HOST:PORT")
        if wait is not None:
            sub.add_argument("--wait", type=float, default=wait,
                             help="seconds to wait for the server's answer or close")
        return sub

    sub = command("negative-size", wait=5)
    sub.add_argument("--method", choices=["test-unary", "test-streaming", "benchmark-unary"],
                     required=True)
    sub.add_argument("--size", type=int, default=-1)

    sub = command("huge-response", wait=5)
    sub.add_argument("--size", type=int, default=1 << 30)
    sub.add_argument("--server-pid", type=int)

    sub = command("stalled-streams")
    sub.add_argument("--streams", type=int, default=1000)
    sub.add_argument("--size", type=int, default=1 << 20)
    sub.add_argument("--hold", type=float, default=10)
    sub.add_argument("--server-pid", type=int)

    sub = command("idle-connections")
    sub.add_argument("--connections", type=int, default=2000)
    sub.add_argument("--no-preface", action="store_true")
    sub.add_argument("--hold", type=float, default=3)
    sub.add_argument("--connect-wait", type=float, default=10)
    sub.add_argument("--server-pid", type=int)

    command("no-preface", wait=15)

    sub = command("slowloris", wait=16)
    sub.add_argument("--interval", type=float, default=1)

    sub = command("grpc-timeout", wait=5)
    sub.add_argument("--value", action="append", required=True,
                     help="a grpc-timeout value; repeat for more calls (write --value=V)")

    sub = command("unary-cardinality", wait=5)
    sub.add_argument("--path", default=TEST_SERVICE + "EmptyCall")

    sub = command("budget-queue", wait=10)
    sub.add_argument("--path", default=TEST_SERVICE + "EmptyCall")
    sub.add_argument("--streams", type=int, default=12)
    sub.add_argument("--size", type=int, default=1 << 20)
    sub.add_argument("--budget", type=int, default=8 << 20,
                     help="the server connection's send budget (connectionSendBuffer)")
    sub.add_argument("--hold", type=float, default=1)

    sub = command("empty-data", wait=10)
    sub.add_argument("--frames", type=int, default=200_000)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    pc.unblock_signals()
    pc.watch_parent(lambda: os._exit(3))
    args = parse_arguments(argv)
    host, _, port_text = args.target.rpartition(":")
    host = host.strip("[]")
    port = int(port_text)
    started = time.monotonic()
    report: dict = {"attack": args.attack}
    if args.attack == "idle-connections":
        report.update(attack_idle_connections(args, host, port, started))
        if not report["connected"]:
            report.setdefault("error", f"cannot connect to {args.target}")
            print(json.dumps(report), flush=True)
            return 2
    else:
        try:
            conn = RawConnection(host, port, started)
        except OSError as error:
            report.update(connected=False, error=f"cannot connect to {args.target}: {error}")
            print(json.dumps(report), flush=True)
            return 2
        report["connected"] = True
        try:
            report.update(ATTACKS[args.attack](args, conn))
        except OSError as error:
            report["error"] = f"the attack broke off: {error}"
        report.update(conn.report())
        conn.close()
    report["elapsed_s"] = _round(time.monotonic() - started)
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
