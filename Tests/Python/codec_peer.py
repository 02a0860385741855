#!/usr/bin/env python3
"""The Python side of the wire test: Google's own message classes make and check bytes.

`make` prints a JSON object {name: base64 of the serialized message} of fully
populated messages built with Google's classes: the proto-plus types of
`google.maps.fleetengine_v1` (serialised through their raw protobuf classes,
`Type.pb()`), `google.rpc.status_pb2` / `error_details_pb2`, and the
`grpc.testing` messages (built at run time from /usr/share/grpc-proto by
`protoc --descriptor_set_out`, because those classes are not on PyPI and
protoc 3.21's generated `_pb2` code is too old for the protobuf 7 runtime).

`check` reads the same JSON shape on stdin (the Swift re-encodings), parses each
message with Google's classes and compares it with what `make` builds: full
message equality (which includes unknown fields) and, for unknown fields, their
numbers, wire types and raw bytes. It prints a JSON object {name: "ok" | what
differs} and exits 0 only when every message is "ok".

Usage, with the venv's interpreter (scripts/test creates it):

    .venv/bin/python Tests/Python/codec_peer.py make
    .venv/bin/python Tests/Python/codec_peer.py check < reencoded.json

Exit status: 0 all good, 1 some message differs, 2 the script cannot run
(packages or protoc missing, unreadable input, a fixture left a field unset).

Every value is a literal, so the bytes are the same on every run; the Swift
test (Tests/FleetProtosTests/WireTests.swift) spells out the same values.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GRPC_PROTO_DIR = Path("/usr/share/grpc-proto")  # Debian's grpc-proto package


class SetupError(Exception):
    """The script cannot run; not a difference between messages."""


try:
    from google.maps import fleetengine_v1 as fe
    from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2, wrappers_pb2
    from google.protobuf.message import DecodeError
    from google.protobuf.unknown_fields import UnknownFieldSet
    from google.rpc import error_details_pb2, status_pb2
    from google.type import latlng_pb2
except ImportError as error:  # pragma: no cover - environment problem
    print(
        f"codec_peer: cannot import Google's message classes ({error}); run with the venv "
        "that scripts/test creates (.venv/bin/python)",
        file=sys.stderr,
    )
    sys.exit(2)

# The raw protobuf classes behind the proto-plus types.
Trip = fe.Trip.pb()
TerminalLocation = fe.TerminalLocation.pb()
TerminalPointId = fe.TerminalPointId.pb()
StopLocation = fe.StopLocation.pb()
TripWaypoint = fe.TripWaypoint.pb()
VehicleLocation = fe.VehicleLocation.pb()
ConsumableTrafficPolyline = fe.ConsumableTrafficPolyline.pb()
SpeedReadingInterval = fe.SpeedReadingInterval.pb()
TripAttribute = fe.TripAttribute.pb()
RequestHeader = fe.RequestHeader.pb()
GetTripRequest = fe.GetTripRequest.pb()
CreateTripRequest = fe.CreateTripRequest.pb()
UpdateTripRequest = fe.UpdateTripRequest.pb()
SearchTripsRequest = fe.SearchTripsRequest.pb()

WAYPOINT = fe.WaypointType
SPEED = fe.SpeedReadingInterval.Speed
SENSOR = fe.LocationSensor


# --------------------------------------------------------------------------
# grpc.testing classes, built from the .proto files at run time


def grpc_testing_classes() -> dict[str, type]:
    """Message classes of grpc/testing/messages.proto, by full name."""
    protoc = shutil.which("protoc")
    if protoc is None:
        raise SetupError("`protoc` not found on PATH; run scripts/test (it installs it)")
    source = "grpc/testing/messages.proto"
    if not (GRPC_PROTO_DIR / source).is_file():
        raise SetupError(f"{GRPC_PROTO_DIR / source} is missing; run scripts/test (apt grpc-proto)")
    with tempfile.TemporaryDirectory(prefix="codec_peer.") as tmp:
        out = Path(tmp) / "grpc_testing.pb"
        cmd = [protoc, f"-I{GRPC_PROTO_DIR}", f"--descriptor_set_out={out}", source]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise SetupError("protoc failed:\n  " + " ".join(cmd) + "\n" + run.stderr.strip())
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    # A pool of our own: the default pool is shared with every installed _pb2 module.
    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    return message_factory.GetMessages(list(files), pool=pool)


# --------------------------------------------------------------------------
# Small builders


def latlng(latitude: float, longitude: float):
    return latlng_pb2.LatLng(latitude=latitude, longitude=longitude)


def ts(seconds: int, nanos: int):
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)


def dur(seconds: int, nanos: int):
    return duration_pb2.Duration(seconds=seconds, nanos=nanos)


def stop(latitude: float, longitude: float, timestamp, stop_time):
    return StopLocation(point=latlng(latitude, longitude), timestamp=timestamp, stop_time=stop_time)


def interval(start: int, end: int, speed):
    return SpeedReadingInterval(
        start_polyline_point_index=start, end_polyline_point_index=end, speed=speed
    )


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def packed(message) -> any_pb2.Any:
    wrapped = any_pb2.Any()
    # Deterministic, so that maps inside (ErrorInfo.metadata) pack to the same bytes in `make`
    # and in `check`; the type URL is "type.googleapis.com/<full name>".
    wrapped.Pack(message, deterministic=True)
    return wrapped


# --------------------------------------------------------------------------
# Fixtures. WireTests.swift checks each of these values field by field.

HEADER = RequestHeader(
    language_code="de-CH",
    region_code="CH",
    sdk_version="5.2.1",
    os_version="14.1",
    device_model="Pixel 8 Pro",
    sdk_type=RequestHeader.SdkType.DRIVER,
    maps_sdk_version="18.2.0",
    nav_sdk_version="5.3.0",
    platform=RequestHeader.Platform.ANDROID,
    manufacturer="Google",
    android_api_level=34,
    trace_id="trace-7f3a9c",
)

TRIP_NAME = "providers/fleet-consumer-test/trips/trip-0042"

PICKUP = TerminalLocation(
    point=latlng(37.7749, -122.4194),
    terminal_point_id=TerminalPointId(
        place_id="ChIJIQBpAG2ahYAR_6128GcTUEo", value="terminal-pickup"
    ),
    access_point_id="access-point-pickup",
    trip_id="trip-0042",
    terminal_location_type=WAYPOINT.PICKUP_WAYPOINT_TYPE,
)
STOP_1 = TerminalLocation(
    point=latlng(37.7849, -122.4094),
    terminal_point_id=TerminalPointId(generated_id="generated-stop-1", value="terminal-stop-1"),
    access_point_id="access-point-stop-1",
    trip_id="trip-0042",
    terminal_location_type=WAYPOINT.INTERMEDIATE_DESTINATION_WAYPOINT_TYPE,
)
STOP_2 = TerminalLocation(
    point=latlng(37.7949, -122.3994),
    terminal_point_id=TerminalPointId(place_id="place-stop-2", value="terminal-stop-2"),
    access_point_id="access-point-stop-2",
    trip_id="trip-0042",
    terminal_location_type=WAYPOINT.INTERMEDIATE_DESTINATION_WAYPOINT_TYPE,
)
DROPOFF = TerminalLocation(
    point=latlng(37.8049, -122.2711),
    terminal_point_id=TerminalPointId(generated_id="generated-dropoff", value="terminal-dropoff"),
    access_point_id="access-point-dropoff",
    trip_id="trip-0042",
    terminal_location_type=WAYPOINT.DROP_OFF_WAYPOINT_TYPE,
)
# Another trip's pickup on the same (shared) vehicle, first in vehicle_waypoints.
OTHER_PICKUP = TerminalLocation(
    point=latlng(37.7699, -122.4469),
    terminal_point_id=TerminalPointId(place_id="place-other-pickup", value="terminal-other-pickup"),
    access_point_id="access-point-other-pickup",
    trip_id="trip-0099",
    terminal_location_type=WAYPOINT.PICKUP_WAYPOINT_TYPE,
)

TO_OTHER_PICKUP = TripWaypoint(
    location=OTHER_PICKUP,
    trip_id="trip-0099",
    waypoint_type=WAYPOINT.PICKUP_WAYPOINT_TYPE,
    path_to_waypoint=[latlng(37.7793, -122.4155), latlng(37.7751, -122.4301)],
    encoded_path_to_waypoint="o`qeFbcsjVpY~{A",
    traffic_to_waypoint=ConsumableTrafficPolyline(
        speed_reading_interval=[
            interval(1, 2, SPEED.SLOW),
            interval(2, 3, SPEED.NORMAL),
        ],
        encoded_path_to_waypoint="o`qeFbcsjVpY~{A",
    ),
    distance_meters=wrappers_pb2.Int32Value(value=1850),
    eta=ts(1767226620, 5),
    duration=dur(240, 5),
)
TO_STOP_2 = TripWaypoint(
    location=STOP_2,
    trip_id="trip-0042",
    waypoint_type=WAYPOINT.INTERMEDIATE_DESTINATION_WAYPOINT_TYPE,
    path_to_waypoint=[
        latlng(37.7793, -122.4155), latlng(37.7871, -122.4052), latlng(37.7949, -122.3994)
    ],
    encoded_path_to_waypoint="_p~iF~ps|U_ulLnnqC",
    traffic_to_waypoint=ConsumableTrafficPolyline(
        speed_reading_interval=[
            interval(1, 2, SPEED.NORMAL),
            interval(2, 3, SPEED.TRAFFIC_JAM),
        ],
        encoded_path_to_waypoint="_p~iF~ps|U_ulLnnqC",
    ),
    distance_meters=wrappers_pb2.Int32Value(value=2380),
    eta=ts(1767226980, 750000000),
    duration=dur(480, 750000000),
)
TO_DROPOFF = TripWaypoint(
    location=DROPOFF,
    trip_id="trip-0042",
    waypoint_type=WAYPOINT.DROP_OFF_WAYPOINT_TYPE,
    path_to_waypoint=[
        latlng(37.7949, -122.3994), latlng(37.8012, -122.3351), latlng(37.8049, -122.2711)
    ],
    encoded_path_to_waypoint="_mqNvxq`@",
    traffic_to_waypoint=ConsumableTrafficPolyline(
        speed_reading_interval=[
            interval(1, 2, SPEED.SLOW),
            interval(2, 3, SPEED.NORMAL),
        ],
        encoded_path_to_waypoint="_mqNvxq`@",
    ),
    distance_meters=wrappers_pb2.Int32Value(value=12750),
    eta=ts(1767228000, 987654321),
    duration=dur(1020, 987654321),
)

LAST_LOCATION = VehicleLocation(
    location=latlng(37.7793, -122.4155),
    horizontal_accuracy=wrappers_pb2.DoubleValue(value=4.5),
    latlng_accuracy=wrappers_pb2.DoubleValue(value=3.25),
    heading=wrappers_pb2.Int32Value(value=271),
    bearing_accuracy=wrappers_pb2.DoubleValue(value=12.5),
    heading_accuracy=wrappers_pb2.DoubleValue(value=7.75),
    altitude=wrappers_pb2.DoubleValue(value=52.125),
    vertical_accuracy=wrappers_pb2.DoubleValue(value=2.5),
    altitude_accuracy=wrappers_pb2.DoubleValue(value=1.875),
    speed_kmph=wrappers_pb2.Int32Value(value=43),
    speed=wrappers_pb2.DoubleValue(value=11.875),
    speed_accuracy=wrappers_pb2.DoubleValue(value=0.625),
    update_time=ts(1767226500, 111111111),
    server_time=ts(1767226501, 222222222),
    location_sensor=SENSOR.FUSED_LOCATION_PROVIDER,
    is_road_snapped=wrappers_pb2.BoolValue(value=True),
    # A present `false`: proves a wrapper's presence survives even when its value is the default.
    is_gps_sensor_enabled=wrappers_pb2.BoolValue(value=False),
    time_since_update=wrappers_pb2.Int32Value(value=5),
    num_stale_updates=wrappers_pb2.Int32Value(value=2),
    raw_location=latlng(37.77931, -122.41551),
    raw_location_time=ts(1767226499, 333333333),
    raw_location_sensor=SENSOR.GPS,
    raw_location_accuracy=wrappers_pb2.DoubleValue(value=6.5),
    flp_location=latlng(37.77932, -122.41552),
    flp_update_time=ts(1767226498, 444444444),
    flp_latlng_accuracy_meters=wrappers_pb2.DoubleValue(value=3.5),
    flp_heading_degrees=wrappers_pb2.Int32Value(value=268),
    supplemental_location=latlng(37.77933, -122.41553),
    supplemental_location_time=ts(1767226497, 555555555),
    supplemental_location_sensor=SENSOR.CUSTOMER_SUPPLIED_LOCATION,
    supplemental_location_accuracy=wrappers_pb2.DoubleValue(value=9.25),
    road_snapped=True,
)

# A TripView number that our schema (and Google's, today) does not define.
UNKNOWN_TRIP_VIEW = 99


def full_trip():
    """Every field of maps.fleetengine.v1.Trip set, nested messages included."""
    trip = Trip(
        name=TRIP_NAME,
        vehicle_id="vehicle-0007",
        trip_status=fe.TripStatus.ENROUTE_TO_INTERMEDIATE_DESTINATION,
        trip_type=fe.TripType.EXCLUSIVE,
        pickup_point=PICKUP,
        actual_pickup_point=stop(
            37.77495, -122.41935, ts(1767225900, 250000000), ts(1767225901, 1)
        ),
        actual_pickup_arrival_point=stop(
            37.77492, -122.41938, ts(1767225840, 500000000), ts(1767225841, 999999999)
        ),
        pickup_time=ts(1767225900, 123456789),
        intermediate_destinations=[STOP_1, STOP_2],
        intermediate_destinations_version=ts(1767225000, 42),
        intermediate_destination_index=1,
        actual_intermediate_destination_arrival_points=[
            stop(37.78491, -122.40941, ts(1767226200, 100), ts(1767226201, 200)),
            stop(37.79491, -122.39941, ts(1767226800, 300), ts(1767226801, 400)),
        ],
        actual_intermediate_destinations=[
            stop(37.78492, -122.40942, ts(1767226260, 500), ts(1767226261, 600)),
            stop(37.79492, -122.39942, ts(1767226860, 700), ts(1767226861, 800)),
        ],
        dropoff_point=DROPOFF,
        actual_dropoff_point=stop(
            37.80491, -122.27111, ts(1767228000, 900000000), ts(1767228001, 900000001)
        ),
        dropoff_time=ts(1767228000, 987654321),
        remaining_waypoints=[TO_STOP_2, TO_DROPOFF],
        vehicle_waypoints=[TO_OTHER_PICKUP, TO_STOP_2, TO_DROPOFF],
        route=[latlng(37.7793, -122.4155), latlng(37.7871, -122.4052), latlng(37.7949, -122.3994)],
        current_route_segment="_p~iF~ps|U_ulLnnqC_mqNvxq`@",
        current_route_segment_version=ts(1767226400, 1),
        current_route_segment_traffic=ConsumableTrafficPolyline(
            speed_reading_interval=[
                interval(1, 4, SPEED.NORMAL),
                interval(4, 9, SPEED.SLOW),
                interval(9, 15, SPEED.TRAFFIC_JAM),
            ],
            encoded_path_to_waypoint="_p~iF~ps|U_ulLnnqC_mqNvxq`@",
        ),
        current_route_segment_traffic_version=ts(1767226400, 2),
        current_route_segment_end_point=TO_STOP_2,
        remaining_distance_meters=wrappers_pb2.Int32Value(value=2380),
        eta_to_first_waypoint=ts(1767226980, 750000000),
        remaining_time_to_first_waypoint=dur(480, 750000000),
        remaining_waypoints_version=ts(1767226400, 3),
        remaining_waypoints_route_version=ts(1767226400, 4),
        number_of_passengers=3,
        last_location=LAST_LOCATION,
        last_location_snappable=True,
        attributes=[
            TripAttribute(key="fare_class", string_value="Zürich Flughafen ✈"),
            TripAttribute(key="wheelchair_accessible", bool_value=True),
            TripAttribute(key="surge_multiplier", number_value=1.75),
        ],
    )
    # Proto3 enums are open: the raw class keeps a number no descriptor names.
    trip.view = UNKNOWN_TRIP_VIEW
    return trip


def get_trip_request():
    return GetTripRequest(
        header=HEADER,
        name=TRIP_NAME,
        view=fe.TripView.JOURNEY_SHARING_V1S,
        current_route_segment_version=ts(1767226400, 10),
        remaining_waypoints_version=ts(1767226401, 20),
        route_format_type=fe.PolylineFormatType.ENCODED_POLYLINE_TYPE,
        current_route_segment_traffic_version=ts(1767226402, 30),
        remaining_waypoints_route_version=ts(1767226403, 40),
    )


def create_trip_request():
    return CreateTripRequest(
        header=HEADER, parent="providers/fleet-consumer-test", trip_id="trip-0042", trip=full_trip()
    )


def update_trip_request():
    return UpdateTripRequest(
        header=HEADER,
        name=TRIP_NAME,
        trip=full_trip(),
        update_mask=field_mask_pb2.FieldMask(
            paths=[
                "trip_status",
                "intermediate_destination_index",
                "intermediate_destinations_version",
                "vehicle_id",
            ]
        ),
    )


def search_trips_request():
    return SearchTripsRequest(
        header=HEADER,
        parent="providers/fleet-consumer-test",
        vehicle_id="vehicle-0007",
        active_trips_only=True,
        page_size=25,
        page_token="page-token-2",
        minimum_staleness=dur(30, 500000000),
    )


def error_info():
    return error_details_pb2.ErrorInfo(
        reason="TRIP_STATE_CONFLICT",
        domain="fleetengine.googleapis.com",
        metadata={
            "trip_id": "trip-0042",
            "current_status": "COMPLETE",
            "requested_status": "ARRIVED_AT_PICKUP",
        },
    )


def retry_info():
    return error_details_pb2.RetryInfo(retry_delay=dur(2, 750000000))


def bad_request():
    violation = error_details_pb2.BadRequest.FieldViolation
    localized = error_details_pb2.LocalizedMessage
    return error_details_pb2.BadRequest(
        field_violations=[
            violation(
                field="trip.trip_status",
                description="COMPLETE is final",
                reason="FINAL_STATE",
                localized_message=localized(locale="en-US", message="The trip has already ended."),
            ),
            violation(
                field="update_mask.paths[1]",
                description="unknown field path",
                reason="UNKNOWN_PATH",
                localized_message=localized(
                    locale="de-DE", message="Unbekannter Feldpfad „foo“."
                ),
            ),
            violation(
                field="trip.number_of_passengers",
                description="must be at least 1",
                reason="OUT_OF_RANGE",
                localized_message=localized(
                    locale="fr-FR", message="Au moins un passager, s’il vous plaît."
                ),
            ),
        ]
    )


def status():
    return status_pb2.Status(
        code=9,  # FAILED_PRECONDITION
        message="Trip ‘trip-0042’ cannot move from COMPLETE to ARRIVED_AT_PICKUP",
        details=[packed(error_info()), packed(retry_info()), packed(bad_request())],
    )


def simple_request(gt):
    return gt["grpc.testing.SimpleRequest"](
        # COMPRESSABLE (0) is PayloadType's only value, so this field cannot be non-default.
        response_type=0,
        response_size=314159,
        payload=gt["grpc.testing.Payload"](type=0, body=bytes(range(256))),
        fill_username=True,
        fill_oauth_scope=True,
        response_compressed=gt["grpc.testing.BoolValue"](value=True),
        response_status=gt["grpc.testing.EchoStatus"](code=13, message="echo this status"),
        # A present `false`: the message is there though its only field is the default.
        expect_compressed=gt["grpc.testing.BoolValue"](value=False),
        fill_server_id=True,
        fill_grpclb_route_type=True,
        orca_per_query_report=gt["grpc.testing.TestOrcaReport"](
            cpu_utilization=0.625,
            memory_utilization=0.375,
            request_cost={"db_queries": 12.0, "cache_misses": 3.5},
            utilization={"gpu": 0.25, "disk": 0.875},
        ),
        orca_oob_report=gt["grpc.testing.TestOrcaReport"](
            cpu_utilization=0.125,
            memory_utilization=0.5,
            request_cost={"queue_depth": 7.0},
            utilization={"network": 0.0625, "threads": 0.75},
        ),
    )


def simple_response(gt):
    return gt["grpc.testing.SimpleResponse"](
        payload=gt["grpc.testing.Payload"](type=0, body=b"\x00\x01response body\xff"),
        username="test-user@example.com",
        oauth_scope="https://www.googleapis.com/auth/xapi.zoo",
        server_id="server-3",
        grpclb_route_type=2,  # GRPCLB_ROUTE_TYPE_BACKEND
        hostname="interop-host-1",
    )


def streaming_output_call_request(gt):
    parameters = gt["grpc.testing.ResponseParameters"]
    bool_value = gt["grpc.testing.BoolValue"]
    return gt["grpc.testing.StreamingOutputCallRequest"](
        response_type=0,  # COMPRESSABLE, the only value
        response_parameters=[
            parameters(size=31415, interval_us=1000, compressed=bool_value(value=True)),
            parameters(size=9, interval_us=2000, compressed=bool_value(value=False)),
            parameters(size=2653, interval_us=3000, compressed=bool_value(value=True)),
        ],
        payload=gt["grpc.testing.Payload"](type=0, body=b"\x00\x00\x00stream"),
        response_status=gt["grpc.testing.EchoStatus"](code=2, message="streaming status"),
        orca_oob_report=gt["grpc.testing.TestOrcaReport"](
            cpu_utilization=0.875,
            memory_utilization=0.5,
            request_cost={"rpcs": 3.0},
            utilization={"memory_pressure": 0.25},
        ),
    )


# Field 999, length-delimited: something a newer Fleet Engine might send.
UNKNOWN_FIELD_NUMBER = 999
UNKNOWN_FIELD_DATA = b"a field from a newer Fleet Engine"


def trip_with_unknown_field():
    known = Trip(
        name="providers/fleet-consumer-test/trips/trip-0043", trip_status=fe.TripStatus.NEW
    )
    tag = varint(UNKNOWN_FIELD_NUMBER << 3 | 2)
    extra = tag + varint(len(UNKNOWN_FIELD_DATA)) + UNKNOWN_FIELD_DATA
    return Trip.FromString(known.SerializeToString() + extra)


def messages() -> dict[str, object]:
    gt = grpc_testing_classes()
    return {
        "trip": full_trip(),
        "get_trip_request": get_trip_request(),
        "create_trip_request": create_trip_request(),
        "update_trip_request": update_trip_request(),
        "search_trips_request": search_trips_request(),
        "status": status(),
        "simple_request": simple_request(gt),
        "simple_response": simple_response(gt),
        "streaming_output_call_request": streaming_output_call_request(gt),
        "trip_with_unknown_field": trip_with_unknown_field(),
    }


# --------------------------------------------------------------------------
# Guarding "fully populated"

# (message, field) pairs that stay at the default on purpose.
DEFAULTS_ON_PURPOSE = {
    # PayloadType has only COMPRESSABLE = 0.
    ("grpc.testing.SimpleRequest", "response_type"),
    ("grpc.testing.StreamingOutputCallRequest", "response_type"),
    ("grpc.testing.Payload", "type"),
    # Present `false` wrappers (see the fixtures).
    ("google.protobuf.BoolValue", "value"),
    ("grpc.testing.BoolValue", "value"),
}


def unset_fields(message, path: str) -> list[str]:
    """Paths of fields left at their default, so a fixture cannot quietly miss one."""
    out = []
    descriptor = message.DESCRIPTOR
    for field in descriptor.fields:
        where = f"{path}.{field.name}"
        if (descriptor.full_name, field.name) in DEFAULTS_ON_PURPOSE:
            continue
        oneof = field.containing_oneof
        if oneof is not None:
            # One member per message; each oneof must have some member set.
            chosen = message.WhichOneof(oneof.name)
            if chosen is None and field is oneof.fields[0]:
                out.append(f"{path}.{oneof.name} (oneof)")
            if chosen != field.name:
                continue
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            if len(value) == 0:
                out.append(where)
            elif field.message_type.fields_by_name["value"].message_type is not None:
                for key in value:
                    out += unset_fields(value[key], f"{where}[{key!r}]")
        elif field.is_repeated:
            if len(value) == 0:
                out.append(where)
            elif field.message_type is not None:
                for i, element in enumerate(value):
                    out += unset_fields(element, f"{where}[{i}]")
        elif field.message_type is not None:
            if not message.HasField(field.name):
                out.append(where)
            elif field.message_type.full_name != "google.protobuf.Any":
                out += unset_fields(value, where)
        elif value == field.default_value:
            out.append(where)
    return out


def check_fully_populated(made: dict[str, object]) -> None:
    unset = []
    for name, message in made.items():
        if name == "trip_with_unknown_field":
            continue  # deliberately small: it is about the unknown field
        unset += unset_fields(message, name)
    details = {"ErrorInfo": error_info(), "RetryInfo": retry_info(), "BadRequest": bad_request()}
    for name, detail in details.items():
        unset += unset_fields(detail, f"status.details<{name}>")
    if unset:
        raise SetupError("fixtures leave these fields at their default: " + ", ".join(unset))


# --------------------------------------------------------------------------
# Describing differences


def value_text(field, value) -> str:
    if field.enum_type is not None:
        named = field.enum_type.values_by_number.get(value)
        return f"{named.name} ({value})" if named else str(value)
    return repr(value)


def unknown_fields(message) -> list[tuple[int, int, object]]:
    return [(f.field_number, f.wire_type, f.data) for f in UnknownFieldSet(message)]


def differences(expected, actual, path: str) -> list[str]:
    """What differs between two messages of the same type, field by field."""
    out = []
    for field in expected.DESCRIPTOR.fields:
        where = f"{path}.{field.name}"
        want, got = getattr(expected, field.name), getattr(actual, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            if set(want.keys()) != set(got.keys()):
                out.append(f"{where}: keys {sorted(want)} expected, {sorted(got)} found")
                continue
            value_field = field.message_type.fields_by_name["value"]
            for key in want:
                if value_field.message_type is not None:
                    out += differences(want[key], got[key], f"{where}[{key!r}]")
                elif want[key] != got[key]:
                    out.append(f"{where}[{key!r}]: {want[key]!r} expected, {got[key]!r} found")
        elif field.is_repeated:
            if len(want) != len(got):
                out.append(f"{where}: {len(want)} elements expected, {len(got)} found")
                continue
            for i, (w, g) in enumerate(zip(want, got)):
                if field.message_type is not None:
                    out += differences(w, g, f"{where}[{i}]")
                elif w != g:
                    w, g = value_text(field, w), value_text(field, g)
                    out.append(f"{where}[{i}]: {w} expected, {g} found")
        elif field.message_type is not None:
            has_want, has_got = expected.HasField(field.name), actual.HasField(field.name)
            if has_want != has_got:
                out.append(f"{where}: {'present' if has_want else 'absent'} expected, "
                           f"{'present' if has_got else 'absent'} found")
            elif has_want:
                out += differences(want, got, where)
        else:
            if field.has_presence and expected.HasField(field.name) != actual.HasField(field.name):
                out.append(f"{where}: presence {expected.HasField(field.name)} expected, "
                           f"{actual.HasField(field.name)} found")
            elif want != got:
                out.append(
                    f"{where}: {value_text(field, want)} expected, {value_text(field, got)} found"
                )
    if unknown_fields(expected) != unknown_fields(actual):
        out.append(f"{path} unknown fields: {unknown_fields(expected)!r} expected, "
                   f"{unknown_fields(actual)!r} found")
    return out


def compare(name: str, expected, data: bytes) -> str:
    try:
        actual = type(expected).FromString(data)
    except DecodeError as error:
        return f"{len(data)} bytes do not parse as {expected.DESCRIPTOR.full_name}: {error}"
    found = differences(expected, actual, name)
    if expected != actual and not found:
        found = ["messages differ, but no field-level difference was found"]
    if name == "trip_with_unknown_field":
        want = [(UNKNOWN_FIELD_NUMBER, 2, UNKNOWN_FIELD_DATA)]
        if not found and unknown_fields(actual) != want:  # e.g. both sides lost it
            found.append(f"unknown fields {unknown_fields(actual)!r}, expected {want!r}")
    if found:
        shown = found[:12]
        more = f" (and {len(found) - len(shown)} more)" if len(found) > len(shown) else ""
        return "; ".join(shown) + more
    return "ok"


# --------------------------------------------------------------------------
# Commands


def make() -> int:
    made = messages()
    check_fully_populated(made)
    # Deterministic: map entries sorted by key, so every run prints the same bytes.
    encoded = {
        name: base64.b64encode(message.SerializeToString(deterministic=True)).decode("ascii")
        for name, message in made.items()
    }
    print(json.dumps(encoded, indent=1, sort_keys=True))
    return 0


def check() -> int:
    try:
        received = json.load(sys.stdin)
        if not isinstance(received, dict):
            raise ValueError("the top level is not an object")
        data = {name: base64.b64decode(text, validate=True) for name, text in received.items()}
    except (ValueError, TypeError) as error:
        raise SetupError(f"stdin is not a JSON object of base64 strings: {error}") from error
    made = messages()
    results = {}
    for name, expected in made.items():
        if name in data:
            results[name] = compare(name, expected, data[name])
        else:
            results[name] = "missing from the input"
    for name in sorted(data.keys() - made.keys()):
        results[name] = "not a message this script makes"
    print(json.dumps(results, indent=1, sort_keys=True))
    return 0 if all(result == "ok" for result in results.values()) else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["make", "check"])
    args = parser.parse_args(argv)
    try:
        return make() if args.command == "make" else check()
    except SetupError as error:
        print(f"codec_peer: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
