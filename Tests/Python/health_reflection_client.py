#!/usr/bin/env python3
"""grpcio's own health-checking and reflection clients against our server (GRPCHealth and
GRPCReflection, as fleet-sim and interop-server serve them).

Health (`grpcio-health-checking`'s `HealthStub`): Check answers SERVING for "" and for each
--serving service and NOT_FOUND for an unknown one; Watch of an unknown service sends
SERVICE_UNKNOWN and stays open. Reflection (`grpcio-reflection`'s
`ProtoReflectionDescriptorDatabase` on v1alpha, and the same client on the v1 path): the
services are listed, the file declaring --call's service is fetched with what it imports, a
descriptor pool builds the request and response classes from them with
`google.protobuf.message_factory`, and the call is made with grpcio and its answer checked.
A raw v1 stream checks the rest of the protocol: dependencies sent once per stream, NOT_FOUND
error responses, extension numbers. With --stop-pid, last: Watch sees SERVING, the script
sends SIGTERM to that PID, and Watch sees NOT_SERVING before the server goes.

Usage (the venv's interpreter; run by Tests/FleetSimulatorTests/Executable and
Tests/GRPCWireTests/Server):

    .venv/bin/python Tests/Python/health_reflection_client.py --target 127.0.0.1:PORT
        --call get-trip:providers/sim-provider/trips/trip-1 | --call unary-call
        [--serving SERVICE ...] [--token TOKEN] [--stop-pid PID]

Prints one `CHECK <name>` line per check that passed and finally `RESULT ok` with a JSON
summary; on the first failed check prints `FAILED <name>: <why>` to stdout and exits 1.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

import peer_common as pc
from check_lines import CheckFailed, check, report

try:
    import grpc
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )
except ImportError as error:  # pragma: no cover - environment problem
    print(f"health_reflection_client: cannot import grpcio's health or reflection client "
          f"({error}); run with the venv that scripts/test creates (.venv/bin/python)",
          file=sys.stderr)
    sys.exit(2)

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE_UNKNOWN = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
V1_PATH = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
REFLECTION_SERVICES = {
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
}

# What --call calls: the service and method, the file reflection must find them in, and how
# to fill the request and judge the response.
CALLS = {
    "get-trip": ("maps.fleetengine.v1.TripService", "GetTrip",
                 "google/maps/fleetengine/v1/trip_api.proto"),
    "unary-call": ("grpc.testing.TestService", "UnaryCall", "grpc/testing/test.proto"),
}


class V1Stub:
    """grpcio-reflection ships a v1alpha client only; v1 is the same service under another
    package name, its messages identical on the wire, so v1alpha's classes speak v1."""

    def __init__(self, channel: grpc.Channel):
        self.ServerReflectionInfo = channel.stream_stream(
            V1_PATH,
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )


class V1Database(ProtoReflectionDescriptorDatabase):
    """grpcio-reflection's descriptor database, asking the v1 service."""

    def __init__(self, channel: grpc.Channel):
        super().__init__(channel)
        self._stub = V1Stub(channel)


def check_health(channel: grpc.Channel, serving: list[str]) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in [""] + serving:
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        check(f"health.check.serving[{service}]", answer.status == SERVING, str(answer))
    try:
        answer = health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
        raise CheckFailed(f"health.check.unknown: answered {answer}, not NOT_FOUND")
    except grpc.RpcError as error:
        check("health.check.unknown_is_not_found", error.code() == grpc.StatusCode.NOT_FOUND,
              f"{error.code()}: {error.details()}")
    watch = health.Watch(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    first = next(watch)
    check("health.watch.unknown_is_service_unknown", first.status == SERVICE_UNKNOWN, str(first))
    # Still open: the call has not ended with a status after its first message.
    check("health.watch.unknown_stays_open", watch.is_active(), "the Watch call ended")
    watch.cancel()


def call_through_reflection(version: str, database, channel, call: str, token: str) -> dict:
    """Lists the services, builds --call's classes from the fetched descriptors, calls it."""
    kind, _, argument = call.partition(":")
    service_name, method_name, file_name = CALLS[kind]
    services = set(database.get_services())
    check(f"{version}.list_services", {service_name} | REFLECTION_SERVICES <= services,
          str(sorted(services)))
    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName(service_name)
    check(f"{version}.file_of_service", service.file.name == file_name, service.file.name)
    method = service.FindMethodByName(method_name)
    request_class = message_factory.GetMessageClass(method.input_type)
    response_class = message_factory.GetMessageClass(method.output_type)
    invoke = channel.unary_unary(
        f"/{service_name}/{method_name}",
        request_serializer=request_class.SerializeToString,
        response_deserializer=response_class.FromString,
    )
    if kind == "get-trip":
        request = request_class(name=argument)
        answer = invoke(request, metadata=[("authorization", f"Bearer {token}")], timeout=10)
        check(f"{version}.get_trip", answer.name == argument and answer.vehicle_id != "",
              f"name {answer.name!r}, vehicle {answer.vehicle_id!r}")
        return {"trip": answer.name, "vehicle": answer.vehicle_id,
                "files": sorted(pool_files(database))}
    request = request_class(response_size=10, fill_username=False)
    answer = invoke(request, timeout=10)
    check(f"{version}.unary_call", len(answer.payload.body) == 10, str(answer))
    return {"payload": len(answer.payload.body), "files": sorted(pool_files(database))}


def pool_files(database) -> set[str]:
    return set(database._known_files)  # what the client was sent; read-only use


def check_raw_v1(channel: grpc.Channel, call: str) -> None:
    """One v1 stream, request by request, for what the descriptor database does not show."""
    service_name, method_name, file_name = CALLS[call.partition(":")[0]]
    Request = reflection_pb2.ServerReflectionRequest
    requests = [
        Request(host="h", file_by_filename=file_name),
        Request(file_containing_symbol=f"{service_name}.{method_name}"),
        Request(file_containing_symbol="no.such.Symbol"),
        Request(file_by_filename="no/such/file.proto"),
        Request(file_containing_extension=reflection_pb2.ExtensionRequest(
            containing_type="grpc.health.v1.HealthCheckRequest", extension_number=100)),
        Request(all_extension_numbers_of_type=service_name.rsplit(".", 1)[0] + ".NoSuchType"),
    ]
    answers = list(V1Stub(channel).ServerReflectionInfo(iter(requests), timeout=10))
    check("v1.raw.one_answer_per_request", len(answers) == len(requests), str(len(answers)))
    first = answers[0]
    check("v1.raw.valid_host", first.valid_host == "h" and first.original_request == requests[0],
          str(first.original_request))
    files = [descriptor_pb2.FileDescriptorProto.FromString(b)
             for b in first.file_descriptor_response.file_descriptor_proto]
    names = [f.name for f in files]
    check("v1.raw.requested_file_first", names[:1] == [file_name], str(names))
    # Every file imported, directly or not, came along (each file sent imports only files
    # sent), each once.
    imported = {d for f in files for d in f.dependency}
    check("v1.raw.transitive_dependencies", imported <= set(names) and len(names) == len(set(names)),
          f"sent {names}, imported {sorted(imported)}")
    check("v1.raw.no_source_info", all(not f.HasField("source_code_info") for f in files))
    again = [descriptor_pb2.FileDescriptorProto.FromString(b).name
             for b in answers[1].file_descriptor_response.file_descriptor_proto]
    check("v1.raw.symbol_of_method_sends_its_file_only_once_per_stream", again == [file_name],
          str(again))
    for index, name in [(2, "symbol"), (3, "file"), (4, "extension"), (5, "extension_numbers")]:
        answer = answers[index]
        check(f"v1.raw.unknown_{name}_is_not_found",
              answer.WhichOneof("message_response") == "error_response"
              and answer.error_response.error_code == NOT_FOUND, str(answer))
    numbers = list(V1Stub(channel).ServerReflectionInfo(
        iter([Request(all_extension_numbers_of_type="grpc.health.v1.HealthCheckRequest")]),
        timeout=10))[0]
    check("v1.raw.extension_numbers_of_a_message",
          numbers.all_extension_numbers_response.base_type_name == "grpc.health.v1.HealthCheckRequest"
          and list(numbers.all_extension_numbers_response.extension_number) == [], str(numbers))


def watch_shutdown(channel: grpc.Channel, services: list[str], pid: int) -> None:
    """Watch sees SERVING, then NOT_SERVING once the server at `pid` starts shutting down."""
    health = health_pb2_grpc.HealthStub(channel)
    watches = [health.Watch(health_pb2.HealthCheckRequest(service=s), timeout=20)
               for s in [""] + services]
    for service, watch in zip([""] + services, watches):
        first = next(watch)
        check(f"health.watch.serving[{service}]", first.status == SERVING, str(first))
    os.kill(pid, signal.SIGTERM)
    for service, watch in zip([""] + services, watches):
        change = next(watch)
        check(f"health.watch.not_serving_on_shutdown[{service}]", change.status == NOT_SERVING,
              str(change))


def run(arguments) -> dict:
    channel = grpc.insecure_channel(arguments.target)
    check_health(channel, arguments.serving)
    summary = {
        "v1alpha": call_through_reflection(
            "v1alpha", ProtoReflectionDescriptorDatabase(channel), channel, arguments.call,
            arguments.token),
        "v1": call_through_reflection(
            "v1", V1Database(channel), channel, arguments.call, arguments.token),
    }
    check_raw_v1(channel, arguments.call)
    if arguments.stop_pid:
        watch_shutdown(channel, arguments.serving, arguments.stop_pid)
    channel.close()
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="host:port of the server")
    parser.add_argument("--call", required=True,
                        help="get-trip:<trip name> (fleet-sim) or unary-call (interop-server)")
    parser.add_argument("--serving", action="append", default=[],
                        help="a service that must be SERVING (repeatable)")
    parser.add_argument("--token", default="python-token")
    parser.add_argument("--stop-pid", type=int, help="SIGTERM this PID and watch NOT_SERVING")
    arguments = parser.parse_args()
    if arguments.call.partition(":")[0] not in CALLS:
        parser.error(f"--call must start with one of {sorted(CALLS)}")
    return report(lambda: run(arguments), grpc.RpcError,
                  lambda e: f"{e.code()}: {e.details()}")


if __name__ == "__main__":
    # Not sys.exit: see pc.exit_without_finalizing.
    pc.exit_without_finalizing(main())
