#!/usr/bin/env python3
"""A scripted fake of Fleet Engine's trip API, for the FleetConsumer tests.

A grpcio (asyncio) server implementing `maps.fleetengine.v1.TripService/GetTrip` with
Google's own message classes from `google-maps-fleetengine` (the raw protobuf classes behind
`fleetengine_v1.GetTripRequest` and `fleetengine_v1.Trip`), and FleetConsumer's own streaming
feed `fleetconsumer.v1.TripFeed/WatchTrip` (its two small messages encoded by hand here, the
Trip inside by Google's class). Every other TripService method is left unregistered, so
grpcio answers it UNIMPLEMENTED.

Usage (the venv's interpreter; see Tests/PeerSupport/PeerServer.swift):

    .venv/bin/python Tests/Python/fake_fleet_engine.py [--host 127.0.0.1] [--port 0]
        [--script FILE] [--script-dir DIR] [--quiet] [--verify-jwt-public-key PEM_FILE]
        [--max-connection-age-ms N]

`--max-connection-age-ms N` sets grpcio's `grpc.max_connection_age_ms` (and a 1 s grace): each
client connection gets a GOAWAY after about N ms, so clients keep making new connections.

Prints `LISTENING <port>` once, then EVENT lines (below); SIGTERM/SIGINT end it (status 0).

Scripts
-------
A script is a JSON object `{"trips": {NAME: TRIP_SCRIPT, ...}, "templates": [TEMPLATE, ...]}`.
`--script FILE` loads one at start. `--script-dir DIR` is for a server shared by many tests:
whenever a request names a trip no script knows yet, every `*.json` file of DIR not read
before is loaded, so a test writes its script file and then starts following.

    TRIP_SCRIPT = {"steps": [STEP, ...], "feed": [STEP, ...]?, "requireToken": TOKEN?}
    TEMPLATE    = {"prefix": "providers/p/trips/load-", "steps": [STEP, ...]}
    STEP        = {"trip": TRIP_JSON}                    answer with this Trip
                | {"error": {"code": "UNAVAILABLE",      end the call with this status;
                             "message": "...",           retryDelayMs adds a google.rpc
                             "retryDelayMs": 250}}       RetryInfo detail
                  (either may add "delayMs": N: wait N ms before answering, and
                   "requireToken": TOKEN, see below; a trip step may add
                   "stampLocation": true: its lastLocation gets updateTime and
                   serverTime = the time of the call at which this trip's vehicle
                   location last changed, as a driver app reporting only moves would)

Each call of a trip answers with its next step; after the last step the last one repeats. A
trip matching a template's prefix (and with no script of its own) runs the template's steps
with a cursor of its own. `TRIP_JSON` is a Trip in protobuf's JSON mapping, parsed by
`google.protobuf.json_format` into Google's class (field names in camelCase or snake_case,
enums by name, timestamps as RFC 3339 strings); its `name` defaults to
the request's. `feed` scripts WatchTrip the same way, one step per streamed update: an
error step ends the stream with its status, and after the last step the stream ends with OK
(the next stream repeats it). A trip without `feed` answers WatchTrip UNIMPLEMENTED, as a
server without the feed would. `requireToken`, on a trip or a step: a call whose `authorization` is not
`Bearer TOKEN` is answered UNAUTHENTICATED ("the access token is not valid for this trip")
without using up the step. A trip no script knows is answered NOT_FOUND.

Consumer JWTs
-------------
With `--verify-jwt-public-key PEM_FILE` (an RSA public key), every GetTrip and WatchTrip
must carry `authorization: Bearer <JWT>` that `consumer_jwt.check_token` accepts for the
requested trip: an RS256 signature that verifies with the key, the header exactly
`{"alg":"RS256","typ":"JWT","kid":...}`, iss = sub, aud `https://fleetengine.googleapis.com/`,
iat within 60 s of the server's clock, iat < exp <= iat + 3600, exp still in the future, and
`authorization` exactly `{"tripid": <the trip ID of the request's name>}`. A call whose
token fails is answered UNAUTHENTICATED ("the access token is not valid for this trip: <why>")
before its script is consulted, so no step is used up; its EVENT line says why in `jwt=`.
This check comes first; a script's `requireToken` still applies after it.

EVENT lines (peer_common.emit)
------------------------------
  EVENT connection - peer=<ipv4:127.0.0.1:port> ms=<arrival>
      the first call from a new client connection (grpcio's peer string names it).
      `ms`, here and on getTrip: when the call arrived, in milliseconds of the server's
      monotonic clock.
  EVENT getTrip /maps.fleetengine.v1.TripService/GetTrip trip=<name> view=<TripView>
        format=<PolylineFormatType> crsv=<version> rwv=<version> trafficv=<version>
        rwrv=<version> region=<code> language=<code> sdk=<SdkType> sdkv=<version>
        peer=<peer> step=<index or -> answer=<OK or code name> ms=<arrival>
        [jwt=<ok or why not>] [located=<unix seconds of the stamped updateTime>]
        headers=[[name, value], ...]
      every GetTrip, after it was answered. Versions are `<seconds>.<nanos>` or `-` when
      the request left them unset; `headers` is the request metadata as received, including
      `authorization` and `x-goog-request-params`.
  EVENT watchTrip /fleetconsumer.v1.TripFeed/WatchTrip trip=<name> view=<n> format=<n>
        crsv=<version> rwv=<version> trafficv=<version> rwrv=<version> peer=<peer>
        sent=<updates> answer=<OK or code name> [jwt=<ok or why not>] headers=[[name, value], ...]
      every WatchTrip, once it has ended.
  `jwt=` only with --verify-jwt-public-key: `ok`, or why the token was refused (spaces as _).
  EVENT summary - requests=<n> connections=<n>
      once, when the server stops.
With `--quiet` the getTrip lines are left out (the load test makes thousands of calls).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import consumer_jwt
import peer_common as pc

try:
    import grpc
    from google.maps import fleetengine_v1 as fe
    from google.protobuf import duration_pb2, json_format
    from google.rpc import code_pb2, error_details_pb2, status_pb2
except ImportError as error:  # pragma: no cover - environment problem
    print(f"fake_fleet_engine: cannot import grpcio or Google's classes ({error}); run with "
          "the venv that scripts/test creates (.venv/bin/python)", file=sys.stderr)
    sys.exit(2)

Trip = fe.Trip.pb()
GetTripRequest = fe.GetTripRequest.pb()
SERVICE = "maps.fleetengine.v1.TripService"
GET_TRIP = f"/{SERVICE}/GetTrip"
FEED_SERVICE = "fleetconsumer.v1.TripFeed"
WATCH_TRIP = f"/{FEED_SERVICE}/WatchTrip"


def enum_name(enum_type, value: int) -> str:
    """The name of `value` in one of the proto-plus enums of fleetengine_v1."""
    try:
        return enum_type(value).name
    except ValueError:
        return str(value)


def version(request, field: str) -> str:
    if not request.HasField(field):
        return "-"
    stamp = getattr(request, field)
    return f"{stamp.seconds}.{stamp.nanos:09d}"


class ScriptError(Exception):
    """A script that cannot be used; the message says where."""


class Cursor:
    """The steps of one trip and how far its calls have got."""

    def __init__(self, steps: list[dict], require_token: str | None, where: str,
                 parsed: list | None = None):
        if parsed is None:
            if not steps:
                raise ScriptError(f"{where}: no steps")
            parsed = []
            for index, step in enumerate(steps):
                if ("trip" in step) == ("error" in step):
                    raise ScriptError(f"{where} step {index}: needs exactly one of trip, error")
                if "trip" in step:
                    try:
                        parsed.append(json_format.ParseDict(step["trip"], Trip()))
                    except json_format.ParseError as error:
                        raise ScriptError(f"{where} step {index}: {error}") from None
                else:
                    code = step["error"].get("code")
                    if code not in code_pb2.Code.keys() or code == "OK":
                        raise ScriptError(f"{where} step {index}: unknown error code {code!r}")
                    parsed.append(None)
        self.steps = steps
        # Each step's Trip, parsed once (a template's steps for all its trips): parsing the
        # JSON on every call cost the fake more than the rest of a GetTrip.
        self.parsed = parsed
        self.require_token = require_token
        self.next = 0
        # (latitude, longitude, unix seconds) of the last stamped vehicle location.
        self.located: tuple[float, float, float] | None = None

    def restarted(self) -> Cursor:
        """A cursor over the same steps from the first, checked and parsed no more."""
        return Cursor(self.steps, self.require_token, "", self.parsed)

    def trip(self, index: int):
        """A Trip of its own for step `index` (the caller may change it)."""
        trip = Trip()
        trip.CopyFrom(self.parsed[index])
        return trip

    def stamp(self, trip) -> float | None:
        """Stamps `trip`'s lastLocation with the time its location last changed (now, if it
        moved); returns that time, or None when the trip has no location."""
        if not trip.HasField("last_location") or not trip.last_location.HasField("location"):
            return None
        point = (trip.last_location.location.latitude, trip.last_location.location.longitude)
        if self.located is None or self.located[:2] != point:
            self.located = (*point, time.time())
        seconds = self.located[2]
        for field in (trip.last_location.update_time, trip.last_location.server_time):
            field.seconds = int(seconds)
            field.nanos = int((seconds - int(seconds)) * 1e9)
        return seconds

    def take(self, authorization: str | None) -> tuple[int | None, dict]:
        """The step for this call (index None: the token was refused, nothing used up)."""
        index = min(self.next, len(self.steps) - 1)
        step = self.steps[index]
        token = step.get("requireToken", self.require_token)
        if token is not None and authorization != f"Bearer {token}":
            return None, {"error": {"code": "UNAUTHENTICATED",
                                    "message": "the access token is not valid for this trip"}}
        self.next += 1
        return index, step


class Script:
    """Every loaded script: cursors by trip name, templates by prefix."""

    def __init__(self, directory: Path | None):
        self.directory = directory
        self.read_files: set[str] = set()
        self.cursors: dict[str, Cursor] = {}
        self.feeds: dict[str, Cursor] = {}
        self.templates: list[tuple[str, Cursor]] = []

    def load(self, path: Path) -> None:
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise ScriptError(f"{path}: {error}") from None
        for name, spec in document.get("trips", {}).items():
            self.cursors[name] = Cursor(spec.get("steps", []), spec.get("requireToken"),
                                        f"{path.name} trip {name}")
            if "feed" in spec:
                self.feeds[name] = Cursor(spec["feed"], spec.get("requireToken"),
                                          f"{path.name} feed of {name}")
        for template in document.get("templates", []):
            prefix = template["prefix"]
            self.templates.append(
                (prefix, Cursor(template.get("steps", []), None, f"{path.name} template {prefix}")))

    def cursor(self, name: str) -> Cursor | None:
        if name not in self.cursors and self.directory is not None:
            for path in sorted(self.directory.glob("*.json")):
                if path.name not in self.read_files:
                    self.read_files.add(path.name)
                    try:
                        self.load(path)
                    except ScriptError as error:
                        pc.log(f"fake_fleet_engine: ignoring script {error}")
        if name not in self.cursors:
            for prefix, template in self.templates:
                if name.startswith(prefix):
                    self.cursors[name] = template.restarted()
                    break
        return self.cursors.get(name)


# ---------------------------------------------------------------------------------------------
# The trip feed's messages, by hand: WatchTripRequest and TripUpdate are FleetConsumer's own,
# not in Google's packages.


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def parse_fields(data: bytes) -> dict[int, list]:
    """Field number -> values (ints for varints, bytes otherwise), in order."""
    fields: dict[int, list] = {}
    position = 0
    while position < len(data):
        key, position = read_varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, position = read_varint(data, position)
        elif wire_type == 2:
            length, position = read_varint(data, position)
            value, position = data[position:position + length], position + length
        elif wire_type == 1:
            value, position = data[position:position + 8], position + 8
        elif wire_type == 5:
            value, position = data[position:position + 4], position + 4
        else:
            raise ValueError(f"wire type {wire_type}")
        fields.setdefault(number, []).append(value)
    return fields


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class WatchTripRequest:
    """fleetconsumer.v1.WatchTripRequest: name 1, view 2, route_format_type 3, versions 4-7."""

    VERSIONS = {4: "crsv", 5: "rwv", 6: "trafficv", 7: "rwrv"}

    def __init__(self, data: bytes):
        fields = parse_fields(data)
        self.name = fields.get(1, [b""])[-1].decode()
        self.view = fields.get(2, [0])[-1]
        self.route_format_type = fields.get(3, [0])[-1]
        self.versions = {}
        for number, key in self.VERSIONS.items():
            if number in fields:
                stamp = parse_fields(fields[number][-1])
                self.versions[key] = f"{stamp.get(1, [0])[-1]}.{stamp.get(2, [0])[-1]:09d}"
            else:
                self.versions[key] = "-"


def trip_update(trip_bytes: bytes, sequence: int) -> bytes:
    """fleetconsumer.v1.TripUpdate with trip (1) and sequence (2)."""
    return (b"\x0a" + encode_varint(len(trip_bytes)) + trip_bytes
            + b"\x10" + encode_varint(sequence))


class FakeTripService:
    def __init__(self, script: Script, quiet: bool, jwt_public_key=None):
        self.script = script
        self.quiet = quiet
        self.jwt_public_key = jwt_public_key
        self.peers: set[str] = set()
        self.requests = 0
        self.arrived_ms = 0  # when the latest call arrived (monotonic milliseconds)

    def arrived(self, context) -> tuple[str, list[tuple[str, str]], str | None]:
        """Counts a call, announces a new peer, and returns its peer, printable metadata
        and authorization."""
        self.requests += 1
        self.arrived_ms = int(time.monotonic() * 1000)
        peer = context.peer()
        if peer not in self.peers:
            self.peers.add(peer)
            pc.emit("connection", None, peer=peer, ms=self.arrived_ms)
        metadata = [(key, value if isinstance(value, str) else f"<{len(value)} bytes>")
                    for key, value in context.invocation_metadata()]
        authorization = next((v for k, v in metadata if k == "authorization"), None)
        return peer, metadata, authorization

    def check_jwt(self, authorization: str | None, trip_name: str) -> str | None:
        """None without --verify-jwt-public-key; else "ok" or why the token is refused."""
        if self.jwt_public_key is None:
            return None
        if authorization is None or not authorization.startswith("Bearer "):
            return "no bearer token"
        trip_id = trip_name.rpartition("/trips/")[2]
        try:
            consumer_jwt.check_token(authorization[len("Bearer "):], self.jwt_public_key, trip_id)
        except consumer_jwt.TokenRejected as error:
            return str(error)
        return "ok"

    @staticmethod
    def refused(verdict: str) -> dict:
        return {"error": {"code": "UNAUTHENTICATED",
                          "message": f"the access token is not valid for this trip: {verdict}"}}

    async def get_trip(self, request, context):
        peer, metadata, authorization = self.arrived(context)
        arrived_ms = self.arrived_ms

        verdict = self.check_jwt(authorization, request.name)
        cursor = self.script.cursor(request.name)
        if verdict not in (None, "ok"):
            index, step = None, self.refused(verdict)
        elif cursor is None:
            index, step = None, {"error": {"code": "NOT_FOUND",
                                           "message": f"trip {request.name} not found"}}
        else:
            index, step = cursor.take(authorization)
        if step.get("delayMs"):
            await asyncio.sleep(step["delayMs"] / 1000)
        answer = step["error"]["code"] if "error" in step else "OK"
        trip, located = None, None
        if "trip" in step:
            trip = cursor.trip(index)
            if not trip.name:
                trip.name = request.name
            if step.get("stampLocation") and cursor is not None:
                located = cursor.stamp(trip)
        if not self.quiet:
            header = request.header
            pc.emit("getTrip", GET_TRIP, headers=metadata,
                    trip=request.name,
                    view=enum_name(fe.TripView, request.view),
                    format=enum_name(fe.PolylineFormatType, request.route_format_type),
                    crsv=version(request, "current_route_segment_version"),
                    rwv=version(request, "remaining_waypoints_version"),
                    trafficv=version(request, "current_route_segment_traffic_version"),
                    rwrv=version(request, "remaining_waypoints_route_version"),
                    region=header.region_code or "-", language=header.language_code or "-",
                    sdk=enum_name(fe.RequestHeader.SdkType, header.sdk_type), sdkv=header.sdk_version or "-",
                    peer=peer, step="-" if index is None else index, answer=answer,
                    ms=arrived_ms, jwt=verdict,
                    located=None if located is None else f"{located:.6f}")
        if "error" in step:
            await self.abort(context, step["error"])
        return trip

    async def watch_trip(self, request: WatchTripRequest, context):
        peer, metadata, authorization = self.arrived(context)
        verdict = self.check_jwt(authorization, request.name)
        self.script.cursor(request.name)  # loads new script files
        feed = self.script.feeds.get(request.name)
        sent = 0
        answer = "OK"

        recorded = False

        def record() -> None:
            nonlocal recorded
            if recorded or self.quiet:
                return
            recorded = True
            pc.emit("watchTrip", WATCH_TRIP, headers=metadata, trip=request.name,
                    view=enum_name(fe.TripView, request.view),
                    format=enum_name(fe.PolylineFormatType, request.route_format_type),
                    peer=peer, sent=sent, answer=answer, jwt=verdict, **request.versions)

        # Recorded once, however the stream ends: a status of ours, the end of the script, or
        # the client going away (CancelledError, or GeneratorExit while suspended at a yield).
        try:
            if verdict not in (None, "ok"):
                answer = "UNAUTHENTICATED"
                await self.abort(context, self.refused(verdict)["error"])
            if feed is None:
                answer = "UNIMPLEMENTED"
                await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                                    "this server has no trip feed for this trip")
            while True:
                last = feed.next >= len(feed.steps) - 1
                index, step = feed.take(authorization)
                if step.get("delayMs"):
                    await asyncio.sleep(step["delayMs"] / 1000)
                if "error" in step:
                    answer = step["error"]["code"]
                    await self.abort(context, step["error"])
                trip = feed.trip(index)
                if not trip.name:
                    trip.name = request.name
                sent += 1
                yield trip_update(trip.SerializeToString(), sent)
                if last:
                    break
        except (asyncio.CancelledError, GeneratorExit):
            answer = "CANCELLED"
            raise
        finally:
            record()

    @staticmethod
    async def abort(context, error: dict) -> None:
        code = getattr(grpc.StatusCode, error["code"])
        message = error.get("message", "")
        trailing = ()
        if error.get("retryDelayMs") is not None:
            millis = int(error["retryDelayMs"])
            info = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(
                seconds=millis // 1000, nanos=(millis % 1000) * 1_000_000))
            status = status_pb2.Status(code=code.value[0], message=message)
            status.details.add().Pack(info)
            trailing = (("grpc-status-details-bin", status.SerializeToString()),)
        await context.abort(code, message, trailing_metadata=trailing)


async def serve(args, script: Script) -> None:
    options = [("grpc.so_reuseport", 0)]
    if args.max_connection_age_ms is not None:
        options += [("grpc.max_connection_age_ms", args.max_connection_age_ms),
                    ("grpc.max_connection_age_grace_ms", 1000)]
    server = grpc.aio.server(options=options)
    service = FakeTripService(script, args.quiet, args.jwt_public_key)
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "GetTrip": grpc.unary_unary_rpc_method_handler(
            service.get_trip,
            request_deserializer=GetTripRequest.FromString,
            response_serializer=Trip.SerializeToString),
    })
    feed = grpc.method_handlers_generic_handler(FEED_SERVICE, {
        "WatchTrip": grpc.unary_stream_rpc_method_handler(
            service.watch_trip, request_deserializer=WatchTripRequest,
            response_serializer=lambda data: data),
    })
    server.add_generic_rpc_handlers((handler, feed))
    host = f"[{args.host}]" if ":" in args.host else args.host
    port = server.add_insecure_port(f"{host}:{args.port}")
    if port == 0:
        raise SystemExit("fake_fleet_engine: could not bind the port")
    await server.start()

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    pc.watch_parent(lambda: loop.call_soon_threadsafe(stop.set))
    pc.announce_listening(port)
    await stop.wait()
    pc.emit("summary", None, requests=service.requests, connections=len(service.peers))
    await server.stop(grace=0.2)


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    parser.add_argument("--script", type=Path, help="a script to load at start")
    parser.add_argument("--script-dir", type=Path, help="load new *.json scripts on demand")
    parser.add_argument("--quiet", action="store_true", help="no getTrip EVENT lines")
    parser.add_argument("--max-connection-age-ms", type=int, metavar="N",
                        help="GOAWAY each client connection after about N ms")
    parser.add_argument("--verify-jwt-public-key", metavar="PEM_FILE",
                        help="require consumer JWTs signed by this RSA key (see above)")
    args = parser.parse_args()
    args.jwt_public_key = None
    if args.verify_jwt_public_key is not None:
        try:
            args.jwt_public_key = consumer_jwt.load_public_key(args.verify_jwt_public_key)
        except (OSError, ValueError) as error:
            pc.log(f"fake_fleet_engine: --verify-jwt-public-key: {error}")
            return 2
    script = Script(args.script_dir)
    try:
        if args.script is not None:
            script.load(args.script)
    except ScriptError as error:
        pc.log(f"fake_fleet_engine: {error}")
        return 2
    asyncio.run(serve(args, script))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    sys.exit(main())
