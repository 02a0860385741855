#!/usr/bin/env python3
"""A scripted, misbehaving HTTP/2 "gRPC server" on h2, for our client's error handling.

Each request is answered by the scenario its `:path` names: `/scenario/<name>`, so one
server process serves many scenarios and a test can check that the connection stays
usable. The answer starts when the request stream ends (the client half-closes);
`/scenario/<name>/immediate` answers as soon as the request headers arrive instead (for
calls that never half-close). Any other path gets a Trailers-Only UNIMPLEMENTED.

Usage (the venv's interpreter; see Tests/PeerSupport/PeerServer.swift):

    .venv/bin/python Tests/Python/raw_h2_server.py [--host 127.0.0.1] [--port 0]

Prints `LISTENING <port>` once, then EVENT lines; SIGTERM/SIGINT end it (status 0).
Plaintext HTTP/2 with prior knowledge (h2c), as gRPC clients speak it.

Scenarios ("headers" = :status 200 + content-type application/grpc; "message" = one
gRPC message, 5-byte prefix + body; "OK trailers" = grpc-status 0; body = "hello" bytes)
-----------------------------------------------------------------------------------------
  ok_echo                   headers, the request's messages echoed back (same flags; the
                            request's grpc-encoding is sent back when it had one), OK trailers.
  ok_echo_gzip              headers with grpc-encoding gzip, the request's (uncompressed)
                            messages re-sent gzip-compressed (flag 1), OK trailers.
  wrong_content_type        :status 200, content-type text/html, an HTML body, OK trailers.
  wrong_content_type_no_trailers   the same, stream ends with the body (no trailers).
  no_content_type           :status 200 without content-type, a message, OK trailers.
  http_<code>               :status <code> (200...599), content-type text/plain, a text
                            body, END_STREAM; no grpc-status (http_503, http_404, ...).
  truncated_prefix          headers, one DATA frame with 3 of the 5 prefix bytes, OK trailers.
  compressed_without_encoding  headers without grpc-encoding, a message with flag 1 (gzip
                            body), OK trailers.
  unsupported_encoding      headers with grpc-encoding snappy, a message with flag 1, OK
                            trailers.
  longer_than_announced     headers, a prefix announcing 10 bytes followed by 20, OK
                            trailers.
  shorter_than_announced    headers, a prefix announcing 100 bytes followed by 10, OK
                            trailers.
  bad_flag_then_message     headers, a DATA frame whose prefix has flag 7, then a DATA
                            frame with a whole valid message, OK trailers (the client must
                            not read the second after the first ended the call).
  shorter_than_announced_no_trailers   the same, stream ends with the DATA (no trailers).
  reset_mid_message         headers, a prefix announcing 100 bytes and 50 of them, then
                            RST_STREAM INTERNAL_ERROR.
  close_mid_call            headers, half a message, then the TCP connection is closed
                            (no GOAWAY).
  trailers_only             one HEADERS: :status 200, content-type, grpc-status 5,
                            grpc-message "not found here", END_STREAM.
  trailers_only_ok          the same with grpc-status 0 and no message (a unary call thus
                            gets no response message).
  two_messages              headers, two messages, OK trailers (too many for a unary call).
  two_messages_open         headers, two messages, and the stream left open (no trailers).
  missing_grpc_status       headers, a message, trailers without grpc-status.
  invalid_grpc_status       headers, a message, trailers with grpc-status "abc".
  details_ok                trailers: grpc-status 5, grpc-message "trip not found",
                            grpc-status-details-bin = unpadded base64 of google.rpc.Status
                            {5, "trip not found", [ErrorInfo{reason "TRIP_NOT_FOUND",
                            domain "fleet.test"}]} (Google's classes).
  details_ok_padded         the same with padded base64.
  details_bad_base64        grpc-status 3, grpc-status-details-bin "!!not*base64!!".
  details_bad_protobuf      grpc-status 3, details = base64 of ff ff ff ff (not a Status).
  details_code_mismatch     grpc-status 5, details = Status{code 3, "mismatch"}.
  grpc_message_percent      grpc-status 2, grpc-message = percent-encoded UTF-8 of
                            "☺ Grüße\n100%" (%E2%98%BA%20Gr%C3%BC%C3%9Fe%0A100%25).
  grpc_message_bad_percent  grpc-status 2, grpc-message "bad %zz %E2%98 end %" (invalid
                            encodings; the spec says pass them through, never fail).
  rst_refused               RST_STREAM REFUSED_STREAM, nothing else (never processed).
  rst_cancel_after_headers  headers, then RST_STREAM CANCEL.
  goaway_after_response     as ok_echo, then GOAWAY NO_ERROR (last stream = this one); the
                            connection stays open until the client closes it.
  no_response               nothing, ever: the stream stays open (until the client resets
                            it or closes the connection).

What grpcio 1.85.1's client reports for each (a unary call with a 2 s deadline, all on one
connection; the next call on it succeeds after every scenario). Reference, not a model:
grpcio is lenient where our client should not be (marked *).
  ok_echo, ok_echo_gzip, goaway_after_response   OK with the echoed message
  wrong_content_type *           OK with NO response message (content-type not checked)
  wrong_content_type_no_trailers UNKNOWN "Stream removed (Data frame with END_STREAM flag
                                 received)"; http_200 and shorter_than_announced_no_trailers
                                 the same
  no_content_type *              OK with the message
  http_400 INTERNAL, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED,
  429/502/503/504 UNAVAILABLE, 500 UNKNOWN     "Received http2 header with status: <code>"
  truncated_prefix *, shorter_than_announced *, trailers_only_ok *
                                 OK with NO response message
  compressed_without_encoding    INTERNAL "Compression bit set but no encoding configured"
  unsupported_encoding           INTERNAL "Stream removed (Error parsing 'grpc-encoding'
                                 metadata)"
  longer_than_announced *, two_messages *   hangs until the deadline: DEADLINE_EXCEEDED
  reset_mid_message              INTERNAL "... Received RST_STREAM with error code 2"
  close_mid_call                 UNAVAILABLE "Stream removed (Socket closed)"
  trailers_only                  NOT_FOUND "not found here"
  missing_grpc_status            UNKNOWN "No status received"
  invalid_grpc_status            INTERNAL "Stream removed (Error parsing 'grpc-status' metadata)"
  details_ok, details_ok_padded  NOT_FOUND "trip not found"; rpc_status.from_call decodes it
  details_bad_base64             INTERNAL "... 'grpc-status-details-bin' metadata: illegal
                                 base64 encoding" (the whole status is replaced)
  details_bad_protobuf           INVALID_ARGUMENT "bad details"; decoding the details fails
  details_code_mismatch          NOT_FOUND "not found"; rpc_status.from_call raises ValueError
  grpc_message_percent           UNKNOWN "☺ Grüße\n100%" (decoded)
  grpc_message_bad_percent       UNKNOWN "bad %zz â\x98 end %" (valid escapes decoded, the
                                 bytes then read as Latin-1; invalid ones kept)
  rst_refused                    UNAVAILABLE "... error code 7" (no transparent retry: the
                                 request had been sent in full)
  rst_cancel_after_headers       CANCELLED "... error code 8"
  no_response                    DEADLINE_EXCEEDED "Deadline Exceeded"
  unknown name                   UNIMPLEMENTED "no such scenario: <name>"

EVENT lines: connection_opened - conn= peer= ; connection_closed - conn= ;
  request <path> conn= stream= headers=<json> ; message <path> conn= stream= dir=request
  index= compressed= length= ; rst_stream <path> conn= stream= from=client code= ;
  goaway - conn= from=client code= ; protocol_error - conn= error= (the client broke
  HTTP/2; the connection is closed with GOAWAY, the server goes on).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import socket
import sys
import traceback
import urllib.parse

import peer_common as pc

try:
    import h2.config
    import h2.connection
    import h2.errors
    import h2.events
    import h2.exceptions
    from google.rpc import error_details_pb2, status_pb2
    from google.protobuf import any_pb2
    from hpack import NeverIndexedHeaderTuple
except ImportError as error:  # pragma: no cover - environment problem
    print(f"raw_h2_server: missing package ({error}); use the venv (.venv/bin/python)",
          file=sys.stderr)
    sys.exit(2)

GRPC_HEADERS = [(":status", "200"), ("content-type", "application/grpc")]
OK_TRAILERS = [("grpc-status", "0")]
HELLO = b"hello"
PERCENT_TEXT = "☺ Grüße\n100%"


def percent_encode(text: str) -> str:
    # gRPC's grpc-message encoding: UTF-8, every byte outside 0x20...0x7E except '%' kept
    # literally; here spaces too are encoded, which decoders must accept as well.
    return urllib.parse.quote(text, safe="")


def status_details(code: int, message: str, with_error_info: bool) -> bytes:
    status = status_pb2.Status(code=code, message=message)
    if with_error_info:
        wrapped = any_pb2.Any()
        wrapped.Pack(error_details_pb2.ErrorInfo(reason="TRIP_NOT_FOUND", domain="fleet.test"))
        status.details.append(wrapped)
    return status.SerializeToString()


def odd(name: str, value: str):
    """A header whose value is deliberately broken, sent as never-indexed (RFC 7541 6.2.3).

    A decoder that rejects the value may also skip adding it to its dynamic table (grpcio's
    C-core does), after which every later indexed header on the connection would decode
    wrongly; never-indexed literals keep the HPACK tables of both sides in step, so each
    scenario stays independent of the ones before it on the same connection.
    """
    return NeverIndexedHeaderTuple(name, value)


def b64(data: bytes, padded: bool) -> str:
    text = base64.b64encode(data).decode()
    return text if padded else text.rstrip("=")


# A plan is a list of steps: ("headers", list, end_stream) | ("data", bytes, end_stream) |
# ("rst", code) | ("goaway", code) | ("close",) | ("hold",)


def plan_for(name: str, request) -> list[tuple]:
    """The steps that answer scenario `name` to `request` (a Stream)."""
    message = pc.grpc_frame(HELLO)
    if name == "ok_echo":
        headers = list(GRPC_HEADERS)
        if request.encoding:
            headers.append(("grpc-encoding", request.encoding))
        body = b"".join(pc.grpc_frame(b, bool(f & 1))
                        for f, b in zip(request.deframer.flags, request.deframer.bodies))
        return [("headers", headers, False), ("data", body, False),
                ("headers", OK_TRAILERS, True)]
    if name == "ok_echo_gzip":
        body = b"".join(pc.grpc_frame(gzip.compress(b), True) for b in request.deframer.bodies)
        return [("headers", GRPC_HEADERS + [("grpc-encoding", "gzip")], False),
                ("data", body, False), ("headers", OK_TRAILERS, True)]
    if name == "wrong_content_type":
        return [("headers", [(":status", "200"), odd("content-type", "text/html")], False),
                ("data", b"<html><body>not gRPC</body></html>", False),
                ("headers", OK_TRAILERS, True)]
    if name == "wrong_content_type_no_trailers":
        return [("headers", [(":status", "200"), odd("content-type", "text/html")], False),
                ("data", b"<html><body>not gRPC</body></html>", True)]
    if name == "no_content_type":
        return [("headers", [(":status", "200")], False), ("data", message, False),
                ("headers", OK_TRAILERS, True)]
    if name.startswith("http_") and name[5:].isdigit() and 200 <= int(name[5:]) <= 599:
        return [("headers", [(":status", name[5:]), ("content-type", "text/plain")], False),
                ("data", f"HTTP {name[5:]} from raw_h2_server\n".encode(), True)]
    if name == "truncated_prefix":
        return [("headers", GRPC_HEADERS, False), ("data", b"\x00\x00\x00", False),
                ("headers", OK_TRAILERS, True)]
    if name == "compressed_without_encoding":
        return [("headers", GRPC_HEADERS, False),
                ("data", pc.grpc_frame(gzip.compress(HELLO), True), False),
                ("headers", OK_TRAILERS, True)]
    if name == "unsupported_encoding":
        return [("headers", GRPC_HEADERS + [odd("grpc-encoding", "snappy")], False),
                ("data", pc.grpc_frame(b"\x05\x10hello", True), False),
                ("headers", OK_TRAILERS, True)]
    if name == "longer_than_announced":
        return [("headers", GRPC_HEADERS, False),
                ("data", b"\x00" + (10).to_bytes(4, "big") + b"A" * 20, False),
                ("headers", OK_TRAILERS, True)]
    if name == "bad_flag_then_message":
        return [("headers", GRPC_HEADERS, False),
                ("data", b"\x07" + (1).to_bytes(4, "big") + b"x", False),
                ("data", message, False), ("headers", OK_TRAILERS, True)]
    if name in ("shorter_than_announced", "shorter_than_announced_no_trailers"):
        data = b"\x00" + (100).to_bytes(4, "big") + b"B" * 10
        if name.endswith("no_trailers"):
            return [("headers", GRPC_HEADERS, False), ("data", data, True)]
        return [("headers", GRPC_HEADERS, False), ("data", data, False),
                ("headers", OK_TRAILERS, True)]
    if name == "reset_mid_message":
        return [("headers", GRPC_HEADERS, False),
                ("data", b"\x00" + (100).to_bytes(4, "big") + b"C" * 50, False),
                ("rst", h2.errors.ErrorCodes.INTERNAL_ERROR)]
    if name == "close_mid_call":
        return [("headers", GRPC_HEADERS, False),
                ("data", b"\x00" + (100).to_bytes(4, "big") + b"D" * 50, False), ("close",)]
    if name == "trailers_only":
        return [("headers", GRPC_HEADERS + [("grpc-status", "5"),
                                            ("grpc-message", "not found here")], True)]
    if name == "trailers_only_ok":
        return [("headers", GRPC_HEADERS + [("grpc-status", "0")], True)]
    if name == "two_messages":
        return [("headers", GRPC_HEADERS, False), ("data", message + message, False),
                ("headers", OK_TRAILERS, True)]
    if name == "two_messages_open":
        return [("headers", GRPC_HEADERS, False), ("data", message + message, False)]
    if name == "missing_grpc_status":
        return [("headers", GRPC_HEADERS, False), ("data", message, False),
                ("headers", [("x-fleet-note", "no grpc-status here")], True)]
    if name == "invalid_grpc_status":
        return [("headers", GRPC_HEADERS, False), ("data", message, False),
                ("headers", [odd("grpc-status", "abc")], True)]
    if name in ("details_ok", "details_ok_padded"):
        details = b64(status_details(5, "trip not found", True), name.endswith("padded"))
        return [("headers", GRPC_HEADERS, False),
                ("headers", [("grpc-status", "5"), ("grpc-message", "trip not found"),
                             odd("grpc-status-details-bin", details)], True)]
    if name == "details_bad_base64":
        return [("headers", GRPC_HEADERS, False),
                ("headers", [("grpc-status", "3"), ("grpc-message", "bad details"),
                             odd("grpc-status-details-bin", "!!not*base64!!")], True)]
    if name == "details_bad_protobuf":
        return [("headers", GRPC_HEADERS, False),
                ("headers", [("grpc-status", "3"), ("grpc-message", "bad details"),
                             odd("grpc-status-details-bin", b64(b"\xff\xff\xff\xff", False))],
                 True)]
    if name == "details_code_mismatch":
        details = b64(status_details(3, "mismatch", False), False)
        return [("headers", GRPC_HEADERS, False),
                ("headers", [("grpc-status", "5"), ("grpc-message", "not found"),
                             odd("grpc-status-details-bin", details)], True)]
    if name == "grpc_message_percent":
        return [("headers", GRPC_HEADERS, False),
                ("headers", [("grpc-status", "2"),
                             odd("grpc-message", percent_encode(PERCENT_TEXT))], True)]
    if name == "grpc_message_bad_percent":
        return [("headers", GRPC_HEADERS, False),
                ("headers", [("grpc-status", "2"), odd("grpc-message", "bad %zz %E2%98 end %")],
                 True)]
    if name == "rst_refused":
        return [("rst", h2.errors.ErrorCodes.REFUSED_STREAM)]
    if name == "rst_cancel_after_headers":
        return [("headers", GRPC_HEADERS, False), ("rst", h2.errors.ErrorCodes.CANCEL)]
    if name == "goaway_after_response":
        return plan_for("ok_echo", request) + [("goaway", h2.errors.ErrorCodes.NO_ERROR)]
    if name == "no_response":
        return [("hold",)]
    return [("headers", GRPC_HEADERS + [("grpc-status", "12"),
                                        ("grpc-message", f"no such scenario: {name}")], True)]


class Stream:
    def __init__(self, sid: int, path: str, headers: dict[str, str], on_message):
        self.id = sid
        self.path = path
        self.encoding = headers.get("grpc-encoding")
        self.deframer = pc.GrpcDeframer(on_message, keep=True)
        self.plan: list[tuple] | None = None
        self.dead = False

    @property
    def scenario(self) -> tuple[str, bool]:
        """(name, immediate) from /scenario/<name>[/immediate]."""
        parts = self.path.split("/")
        if len(parts) >= 3 and parts[1] == "scenario":
            return parts[2], len(parts) > 3 and parts[3] == "immediate"
        return self.path, False


class Connection:
    """One client connection, served on its own thread until it closes or breaks."""

    def __init__(self, sock: socket.socket, number: int, peer):
        self.sock = sock
        self.number = number
        self.peer = peer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=False, header_encoding="utf-8"))
        self.streams: dict[int, Stream] = {}
        self.closing = False

    def serve(self) -> None:
        pc.emit("connection_opened", None, conn=self.number,
                peer=f"{self.peer[0]}:{self.peer[1]}")
        try:
            self.h2.initiate_connection()
            self.flush()
            while not self.closing:
                data = self.sock.recv(65536)
                if not data:
                    break
                try:
                    events = self.h2.receive_data(data)
                except h2.exceptions.ProtocolError as error:
                    pc.emit("protocol_error", None, conn=self.number, error=type(error).__name__)
                    self.flush()  # h2 has queued a GOAWAY
                    break
                for event in events:
                    self.on_event(event)
                self.advance()
                self.flush()
        except OSError:
            pass  # the client went away
        except Exception:  # noqa: BLE001 - one broken connection must not stop the server
            pc.log(f"raw_h2_server: connection {self.number}:\n{traceback.format_exc()}")
        finally:
            try:
                self.sock.close()
            finally:
                pc.emit("connection_closed", None, conn=self.number)

    def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def on_event(self, event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            headers = pc.decode_header_list(event.headers)
            fields = dict(headers)
            path = fields.get(":path", "?")
            stream = Stream(event.stream_id, path, fields, self.message_event(event.stream_id, path))
            self.streams[event.stream_id] = stream
            pc.emit("request", path, conn=self.number, stream=event.stream_id, headers=headers)
            name, immediate = stream.scenario
            if immediate or event.stream_ended is not None:
                stream.plan = plan_for(name, stream)
        elif isinstance(event, h2.events.DataReceived):
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.deframer.feed(event.data)
        elif isinstance(event, h2.events.StreamEnded):
            stream = self.streams.get(event.stream_id)
            if stream is not None and stream.plan is None:
                stream.plan = plan_for(stream.scenario[0], stream)
        elif isinstance(event, h2.events.StreamReset):
            stream = self.streams.pop(event.stream_id, None)
            pc.emit("rst_stream", stream.path if stream else None, conn=self.number,
                    stream=event.stream_id, **{"from": "client" if event.remote_reset else
                                               "server"},
                    code=pc.h2_error_name(int(event.error_code)))
        elif isinstance(event, h2.events.ConnectionTerminated):
            pc.emit("goaway", None, conn=self.number, **{"from": "client"},
                    code=pc.h2_error_name(int(event.error_code)))

    def message_event(self, sid: int, path: str):
        def on_message(index: int, flag: int, length: int, _body) -> None:
            pc.emit("message", path, conn=self.number, stream=sid, dir="request", index=index,
                    compressed=flag, length=length)
        return on_message

    def advance(self) -> None:
        """Runs every stream's plan as far as flow control allows."""
        for stream in list(self.streams.values()):
            try:
                self.advance_stream(stream)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError) as error:
                # The client reset or closed the stream meanwhile: drop the rest of the plan.
                pc.log(f"raw_h2_server: stream {stream.id}: {type(error).__name__}: {error}")
                self.streams.pop(stream.id, None)
            if self.closing:
                return

    def advance_stream(self, stream: Stream) -> None:
        while stream.plan:
            step = stream.plan[0]
            kind = step[0]
            if kind == "hold":
                return
            if kind == "headers":
                self.h2.send_headers(stream.id, step[1], end_stream=step[2])
            elif kind == "data":
                data, end_stream = step[1], step[2]
                while data:
                    room = min(self.h2.local_flow_control_window(stream.id),
                               self.h2.max_outbound_frame_size)
                    if room <= 0:
                        stream.plan[0] = ("data", data, end_stream)
                        return  # wait for WINDOW_UPDATE
                    chunk, data = data[:room], data[room:]
                    self.h2.send_data(stream.id, chunk, end_stream=end_stream and not data)
                if not step[1] and end_stream:
                    self.h2.send_data(stream.id, b"", end_stream=True)
            elif kind == "rst":
                self.h2.reset_stream(stream.id, error_code=step[1])
            elif kind == "goaway":
                self.h2.close_connection(error_code=step[1], last_stream_id=stream.id)
            elif kind == "close":
                self.flush()
                self.closing = True
                try:
                    self.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            stream.plan.pop(0)
        if stream.plan == []:
            self.streams.pop(stream.id, None)


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    args = parser.parse_args()
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0...65535, not {args.port}")

    pc.serve_threaded(args.host, args.port,
                      lambda sock, number, peer: Connection(sock, number, peer).serve(),
                      nodelay=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
