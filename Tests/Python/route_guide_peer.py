#!/usr/bin/env python3
"""grpcio's route guide, server and client, for Examples/RouteGuide's test.

The Python side of gRPC's route guide example on grpcio: `route_guide_pb2` and
`route_guide_pb2_grpc` are generated at start-up by grpcio-tools (`grpc_tools.protoc`)
from Examples/RouteGuide/Protos/routeguide/route_guide.proto into a temporary folder.

  server --features FILE [--port N]
      Serves routeguide.RouteGuide on 127.0.0.1 (port 0: the OS picks), with gRPC's
      example semantics; prints `LISTENING <port>`; SIGTERM/SIGINT end it (status 0).
  client --port N --features FILE
      Calls every RPC against 127.0.0.1:N and checks each answer against what FILE and the
      route guide's rules say it must be; prints `PASS <rpc>` or `FAIL <rpc>: <why>` per
      RPC; exits 0 when all passed, 1 otherwise.
  expected-client-output --features FILE
      Prints the lines Examples/RouteGuide's route-guide-client must print against a server
      with FILE's features (its calls are fixed; see its main.swift), worked out here.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc

import peer_common

PROTO_ROOT = Path(__file__).resolve().parents[2] / "Examples" / "RouteGuide" / "Protos"
PROTO = "routeguide/route_guide.proto"


def generated():
    """route_guide_pb2 and route_guide_pb2_grpc, generated now by grpcio-tools."""
    out = Path(tempfile.mkdtemp(prefix="route-guide-py-"))
    peer_common.grpcio_stubs([PROTO_ROOT], [PROTO], out)
    # Imported once, the modules need their folder no more.
    from routeguide import route_guide_pb2, route_guide_pb2_grpc  # noqa: E402
    sys.path.remove(str(out))
    shutil.rmtree(out)
    return route_guide_pb2, route_guide_pb2_grpc


pb, pb_grpc = generated()


def load_features(path: str):
    return [pb.Feature(name=e["name"], location=pb.Point(
        latitude=e["location"]["latitude"], longitude=e["location"]["longitude"]))
        for e in json.loads(Path(path).read_text())]


def distance(a, b) -> int:
    """Haversine distance in whole metres, as gRPC's route guide examples compute it."""
    factor, radius = 1e7, 6371000.0
    lat1, lat2 = math.radians(a.latitude / factor), math.radians(b.latitude / factor)
    lon1, lon2 = math.radians(a.longitude / factor), math.radians(b.longitude / factor)
    h = (math.sin((lat2 - lat1) / 2) ** 2
         + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
    return int(radius * 2 * math.atan2(math.sqrt(h), math.sqrt(1 - h)))


def named_at(features, point):
    for f in features:
        if f.name and f.location.latitude == point.latitude and \
                f.location.longitude == point.longitude:
            return f
    return None


def inside(features, rect):
    lo_lat, hi_lat = sorted((rect.lo.latitude, rect.hi.latitude))
    lo_lon, hi_lon = sorted((rect.lo.longitude, rect.hi.longitude))
    return [f for f in features if f.name and lo_lat <= f.location.latitude <= hi_lat
            and lo_lon <= f.location.longitude <= hi_lon]


class Servicer(pb_grpc.RouteGuideServicer):
    def __init__(self, features):
        self.features = features
        self.notes: dict[tuple[int, int], list] = {}
        self.lock = threading.Lock()

    def GetFeature(self, request, context):
        return named_at(self.features, request) or pb.Feature(name="", location=request)

    def ListFeatures(self, request, context):
        yield from inside(self.features, request)

    def RecordRoute(self, request_iterator, context):
        points = features = dist = 0
        previous = None
        start = time.monotonic()
        for point in request_iterator:
            points += 1
            features += named_at(self.features, point) is not None
            if previous is not None:
                dist += distance(previous, point)
            previous = point
        return pb.RouteSummary(point_count=points, feature_count=features, distance=dist,
                               elapsed_time=int(time.monotonic() - start))

    def RouteChat(self, request_iterator, context):
        for note in request_iterator:
            key = (note.location.latitude, note.location.longitude)
            with self.lock:
                earlier = list(self.notes.get(key, []))
                self.notes.setdefault(key, []).append(note)
            yield from earlier


def serve(args) -> int:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb_grpc.add_RouteGuideServicer_to_server(Servicer(load_features(args.features)), server)
    port = server.add_insecure_port(f"127.0.0.1:{args.port}")
    server.start()
    peer_common.serve_grpc_threads(server, port)
    return 0


def client(args) -> int:
    features = load_features(args.features)
    channel = grpc.insecure_channel(f"127.0.0.1:{args.port}")
    stub = pb_grpc.RouteGuideStub(channel)
    failed = False

    def check(rpc, ok, why):
        nonlocal failed
        print(f"PASS {rpc}" if ok else f"FAIL {rpc}: {why}", flush=True)
        failed |= not ok

    try:
        known = next(f for f in features if f.name)
        got = stub.GetFeature(known.location, timeout=10)
        missing = stub.GetFeature(pb.Point(latitude=0, longitude=0), timeout=10)
        check("GetFeature", got == known and missing.name == ""
              and missing.location == pb.Point(latitude=0, longitude=0),
              f"{got} / {missing}")

        rect = pb.Rectangle(lo=pb.Point(latitude=400000000, longitude=-750000000),
                            hi=pb.Point(latitude=420000000, longitude=-730000000))
        listed = list(stub.ListFeatures(rect, timeout=10))
        expected = inside(features, rect)
        check("ListFeatures", listed == expected and len(expected) > 0,
              f"{len(listed)} features, expected {len(expected)}")

        route = [f.location for f in features[:10]] + [pb.Point(latitude=1, longitude=1)]
        summary = stub.RecordRoute(iter(route), timeout=10)
        want = pb.RouteSummary(
            point_count=len(route),
            feature_count=sum(named_at(features, p) is not None for p in route),
            distance=sum(distance(a, b) for a, b in zip(route, route[1:])),
            elapsed_time=summary.elapsed_time)
        check("RecordRoute", summary == want, f"got {summary}, expected {want}")

        def note(message, lat, lon):
            return pb.RouteNote(message=message, location=pb.Point(latitude=lat, longitude=lon))
        sent = [note("First", 0, 0), note("Second", 0, 1), note("Third", 1, 0),
                note("Fourth", 0, 0), note("Fifth", 0, 1)]
        received = list(stub.RouteChat(iter(sent), timeout=10))
        check("RouteChat", received == [sent[0], sent[1]], f"received {received}")
    except grpc.RpcError as error:
        print(f"FAIL call: {error.code()} {error.details()}", flush=True)
        failed = True
    finally:
        channel.close()
    return 1 if failed else 0


def expected_client_output(args) -> int:
    features = load_features(args.features)

    def show(p):
        return f"{p.latitude},{p.longitude}"
    for point in (pb.Point(latitude=409146138, longitude=-746188906), pb.Point()):
        f = named_at(features, point)
        print(f"GetFeature {show(point)}: {f.name if f else 'no feature'}")
    rect = pb.Rectangle(lo=pb.Point(latitude=400000000, longitude=-750000000),
                        hi=pb.Point(latitude=420000000, longitude=-730000000))
    for f in inside(features, rect):
        print(f"ListFeatures {show(f.location)}: {f.name}")
    route = [f.location for f in features[:10]]
    print(f"RecordRoute: {len(route)} points, "
          f"{sum(named_at(features, p) is not None for p in route)} features, "
          f"{sum(distance(a, b) for a, b in zip(route, route[1:]))} m")
    print("RouteChat: First message at 0,0")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--features", required=True)
    s.add_argument("--port", type=int, default=0)
    c = sub.add_parser("client")
    c.add_argument("--features", required=True)
    c.add_argument("--port", type=int, required=True)
    e = sub.add_parser("expected-client-output")
    e.add_argument("--features", required=True)
    args = parser.parse_args()
    peer_common.unblock_signals()
    return {"server": serve, "client": client,
            "expected-client-output": expected_client_output}[args.role](args)


if __name__ == "__main__":
    sys.exit(main())
