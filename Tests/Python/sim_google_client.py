#!/usr/bin/env python3
"""Google's own Fleet Engine client library against our simulator (fleet-sim).

Uses `google.maps.fleetengine_v1.TripServiceClient` (the `google-maps-fleetengine` GAPIC
client) over an insecure grpcio channel, as Google's documentation shows for a custom
endpoint: `TripServiceGrpcTransport(channel=grpc.insecure_channel(target))`, with an
`authorization: Bearer <token>` metadata entry on every call. It creates, gets, updates and
searches trips, and checks the errors Google's library reads from our status details.

Usage (the venv's interpreter; run by Tests/FleetSimulatorTests/Executable):

    .venv/bin/python Tests/Python/sim_google_client.py --target 127.0.0.1:PORT
        [--provider ID] [--token TOKEN]

Prints one `CHECK <name>` line per check that passed and finally `RESULT ok` with a JSON
summary; on the first failed check prints `FAILED <name>: <why>` to stdout and exits 1.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid

from check_lines import CheckFailed, check, report

try:
    import grpc
    from google.api_core import exceptions as core_exceptions
    from google.maps import fleetengine_v1 as fe
    from google.maps.fleetengine_v1.services.trip_service.transports import (
        TripServiceGrpcTransport,
    )
    from google.protobuf import field_mask_pb2
    from google.type import latlng_pb2
except ImportError as error:  # pragma: no cover - environment problem
    print(f"sim_google_client: cannot import Google's client library ({error}); run with the "
          "venv that scripts/test creates (.venv/bin/python)", file=sys.stderr)
    sys.exit(2)


def point(latitude: float, longitude: float) -> fe.TerminalLocation:
    return fe.TerminalLocation(point=latlng_pb2.LatLng(latitude=latitude, longitude=longitude))


def expect_error(name: str, exception_type, call) -> core_exceptions.GoogleAPICallError:
    try:
        call()
    except exception_type as error:
        print(f"CHECK {name}", flush=True)
        return error
    except core_exceptions.GoogleAPICallError as error:
        raise CheckFailed(f"{name}: expected {exception_type.__name__}, got {type(error).__name__}: {error}")
    raise CheckFailed(f"{name}: expected {exception_type.__name__}, the call succeeded")


def run(target: str, provider: str, token: str) -> dict:
    channel = grpc.insecure_channel(target)
    client = fe.TripServiceClient(transport=TripServiceGrpcTransport(channel=channel))
    metadata = [("authorization", f"Bearer {token}")]
    parent = f"providers/{provider}"
    trip_id = f"py-{uuid.uuid4().hex[:10]}"
    name = f"{parent}/trips/{trip_id}"

    # CreateTrip with Google's request class and the stops we choose.
    created = client.create_trip(
        request=fe.CreateTripRequest(
            parent=parent,
            trip_id=trip_id,
            trip=fe.Trip(
                trip_type=fe.TripType.EXCLUSIVE,
                pickup_point=point(52.5200, 13.4050),
                intermediate_destinations=[point(52.5230, 13.4120)],
                dropoff_point=point(52.5300, 13.4200),
                number_of_passengers=2,
            ),
        ),
        metadata=metadata,
        timeout=10,
    )
    check("create.name", created.name == name, created.name)
    check("create.vehicle", created.vehicle_id.startswith("sim-vehicle-"), created.vehicle_id)
    check("create.status", created.trip_status == fe.TripStatus.NEW, str(created.trip_status))
    check("create.pickup", abs(created.pickup_point.point.latitude - 52.52) < 1e-6)
    check("create.intermediate", len(created.intermediate_destinations) == 1)
    check("create.vehicle_waypoints", len(created.vehicle_waypoints) == 3, str(len(created.vehicle_waypoints)))

    # GetTrip: the consumer's view, with route, traffic, waypoints and vehicle.
    got = client.get_trip(
        request=fe.GetTripRequest(name=name, view=fe.TripView.JOURNEY_SHARING_V1S),
        metadata=metadata,
        timeout=10,
    )
    check("get.name", got.name == name)
    check("get.vehicle", got.vehicle_id == created.vehicle_id)
    check("get.status", got.trip_status in (fe.TripStatus.NEW, fe.TripStatus.ENROUTE_TO_PICKUP),
          str(got.trip_status))
    check("get.route", len(got.route) >= 2, str(len(got.route)))
    check("get.route_version", got.current_route_segment_version.timestamp() > 0)
    check("get.traffic", len(got.current_route_segment_traffic.speed_reading_interval) >= 1)
    check("get.waypoints", [w.waypoint_type for w in got.remaining_waypoints] == [
        fe.WaypointType.PICKUP_WAYPOINT_TYPE,
        fe.WaypointType.INTERMEDIATE_DESTINATION_WAYPOINT_TYPE,
        fe.WaypointType.DROP_OFF_WAYPOINT_TYPE,
    ])
    check("get.remaining_distance", got.remaining_distance_meters > 0)
    check("get.eta", got.eta_to_first_waypoint.timestamp() > time.time() - 1)
    check("get.location", got.last_location.location.latitude != 0)
    check("get.passengers", got.number_of_passengers == 2)

    # GetTrip with the versions just received: the route is left out.
    again = client.get_trip(
        request=fe.GetTripRequest(
            name=name,
            current_route_segment_version=got.current_route_segment_version,
        ),
        metadata=metadata,
        timeout=10,
    )
    if again.current_route_segment_version == got.current_route_segment_version:
        check("get.version_honoured", len(again.route) == 0, str(len(again.route)))

    # GetTrip with the encoded route format.
    encoded = client.get_trip(
        request=fe.GetTripRequest(name=name, route_format_type=fe.PolylineFormatType.ENCODED_POLYLINE_TYPE),
        metadata=metadata,
        timeout=10,
    )
    check("get.encoded_route", len(encoded.current_route_segment) > 0 and len(encoded.route) == 0)

    # UpdateTrip with a field mask.
    updated = client.update_trip(
        request=fe.UpdateTripRequest(
            name=name,
            trip=fe.Trip(
                number_of_passengers=3,
                attributes=[fe.TripAttribute(key="colour", string_value="blue")],
            ),
            update_mask=field_mask_pb2.FieldMask(paths=["number_of_passengers", "attributes"]),
        ),
        metadata=metadata,
        timeout=10,
    )
    check("update.passengers", updated.number_of_passengers == 3)
    check("update.attributes", [(a.key, a.string_value) for a in updated.attributes] == [("colour", "blue")])
    check("update.persisted", client.get_trip(request={"name": name}, metadata=metadata, timeout=10).number_of_passengers == 3)

    # SearchTrips by the simulated vehicle, through the library's pager.
    found = list(client.search_trips(
        request=fe.SearchTripsRequest(parent=parent, vehicle_id=created.vehicle_id, page_size=10),
        metadata=metadata,
        timeout=10,
    ))
    check("search.found", [t.name for t in found] == [name], str([t.name for t in found]))
    active = list(client.search_trips(
        request=fe.SearchTripsRequest(parent=parent, vehicle_id=created.vehicle_id, active_trips_only=True),
        metadata=metadata,
        timeout=10,
    ))
    check("search.active", [t.name for t in active] == [name])

    # Errors as Google's library reads them, ErrorInfo included.
    bad = expect_error("error.invalid_argument", core_exceptions.InvalidArgument,
                       lambda: client.get_trip(request={"name": "trips/nope"}, metadata=metadata, timeout=10))
    check("error.invalid_argument.domain", bad.domain == "fleetengine.googleapis.com", str(bad.domain))
    missing = expect_error("error.not_found", core_exceptions.NotFound,
                           lambda: client.get_trip(request={"name": f"{parent}/trips/missing-{trip_id}"},
                                                   metadata=metadata, timeout=10))
    check("error.not_found.reason", missing.reason == "TRIP_NOT_FOUND", str(missing.reason))
    anonymous = expect_error("error.unauthenticated", core_exceptions.Unauthenticated,
                             lambda: client.get_trip(request={"name": name}, timeout=10))
    check("error.unauthenticated.reason", anonymous.reason == "CREDENTIALS_MISSING", str(anonymous.reason))

    # Cancel through UpdateTrip; search then finds no active trip.
    canceled = client.update_trip(
        request=fe.UpdateTripRequest(
            name=name,
            trip=fe.Trip(trip_status=fe.TripStatus.CANCELED),
            update_mask=field_mask_pb2.FieldMask(paths=["trip_status"]),
        ),
        metadata=metadata,
        timeout=10,
    )
    check("update.canceled", canceled.trip_status == fe.TripStatus.CANCELED)
    active = list(client.search_trips(
        request=fe.SearchTripsRequest(parent=parent, vehicle_id=created.vehicle_id, active_trips_only=True),
        metadata=metadata,
        timeout=10,
    ))
    check("search.none_active", active == [])
    channel.close()
    return {"trip": name, "vehicle": created.vehicle_id, "routePoints": len(got.route)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="host:port of fleet-sim")
    parser.add_argument("--provider", default="py-provider")
    parser.add_argument("--token", default="python-token")
    arguments = parser.parse_args()
    return report(lambda: run(arguments.target, arguments.provider, arguments.token),
                  core_exceptions.GoogleAPICallError, lambda e: f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    sys.exit(main())
