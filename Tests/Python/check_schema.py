#!/usr/bin/env python3
"""Proves that the .proto files under Protos/ are wire-compatible with Google's.

Compiles every .proto under Protos/ with `protoc` into a FileDescriptorSet and
compares it, in both directions, with the official descriptors shipped in the
Python packages `google-maps-fleetengine` (proto-plus types of
`google.maps.fleetengine_v1`, restricted to the trip API files) and
`googleapis-common-protos` (`google.rpc` status, error details and code;
`google.type.LatLng`). TripService is compared with the stubs that the official
gRPC transport builds.

Usage, from anywhere (the repository root is found from this file's path):

    /tmp/venv/bin/python Tests/Python/check_schema.py [--protos DIR]

Prints one line per difference, then
`schema: N messages, M enums, K fields compared, D differences`.
Exit status: 0 when everything matches, 1 on any difference or when nothing
was compared, 2 when the check cannot run (no protoc, packages missing,
protoc rejects the files).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[2]

# Packages whose messages and enums must match the official descriptors.
COMPARED_PACKAGES = ("maps.fleetengine.v1", "google.rpc", "google.type")

# The Fleet Engine files of the trip API. Official types of this package that
# live in other files (vehicles, vehicle_api) are not required of us, but are
# still compared if we declare them.
TRIP_API_FILES = {
    "fleetengine.proto",
    "header.proto",
    "traffic.proto",
    "trips.proto",
    "trip_api.proto",
}

COMMON_PROTO_MODULES = (
    "google.rpc.status_pb2",
    "google.rpc.error_details_pb2",
    "google.rpc.code_pb2",
    "google.type.latlng_pb2",
)


class SetupError(Exception):
    """The check cannot run; not a schema difference."""


def fail_setup(message: str) -> None:
    raise SetupError(message)


try:
    from google.protobuf import descriptor_pb2
    from google.protobuf.descriptor_pb2 import FieldDescriptorProto as FDP
except ImportError:  # pragma: no cover - environment problem
    print(
        "check_schema: cannot import google.protobuf; run with the venv that has "
        "google-maps-fleetengine and googleapis-common-protos (e.g. /tmp/venv/bin/python)",
        file=sys.stderr,
    )
    sys.exit(2)

TYPE_NAMES = {v: k for k, v in FDP.Type.items()}
LABEL_NAMES = {v: k for k, v in FDP.Label.items()}


# --------------------------------------------------------------------------
# Indexing descriptor protos


@dataclass
class TypeEntry:
    """One message or enum, with where it was declared."""

    kind: str  # "message" or "enum"
    full_name: str
    file_name: str
    proto: object  # DescriptorProto or EnumDescriptorProto


@dataclass
class SchemaIndex:
    """Every message, enum and service of a set of files, by full name."""

    types: dict[str, TypeEntry] = field(default_factory=dict)
    map_entries: dict[str, object] = field(default_factory=dict)
    services: dict[str, tuple[str, object]] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)  # full name -> package

    def add_file(self, fp: descriptor_pb2.FileDescriptorProto) -> None:
        prefix = fp.package + "." if fp.package else ""
        for m in fp.message_type:
            self._add_message(m, prefix, fp)
        for e in fp.enum_type:
            self._add(TypeEntry("enum", prefix + e.name, fp.name, e), fp.package)
        for s in fp.service:
            self.services[prefix + s.name] = (fp.name, s)

    def _add_message(self, m, prefix: str, fp) -> None:
        full = prefix + m.name
        if m.options.map_entry:
            self.map_entries[full] = m
        else:
            self._add(TypeEntry("message", full, fp.name, m), fp.package)
        for n in m.nested_type:
            self._add_message(n, full + ".", fp)
        for e in m.enum_type:
            self._add(TypeEntry("enum", full + "." + e.name, fp.name, e), fp.package)

    def _add(self, entry: TypeEntry, package: str) -> None:
        self.types[entry.full_name] = entry
        self.packages[entry.full_name] = package


# --------------------------------------------------------------------------
# Our side: protoc over Protos/


def compile_ours(protos: Path, include: Path) -> list[descriptor_pb2.FileDescriptorProto]:
    protoc = shutil.which("protoc")
    if protoc is None:
        fail_setup("`protoc` not found on PATH; install protobuf-compiler (apt) and retry")
    if not protos.is_dir():
        fail_setup(f"proto directory {protos} does not exist")
    sources = sorted(p.relative_to(protos).as_posix() for p in protos.rglob("*.proto"))
    if not sources:
        fail_setup(f"no .proto files under {protos}")
    with tempfile.TemporaryDirectory(prefix="check_schema.") as tmp:
        out = Path(tmp) / "ours.pb"
        cmd = [
            protoc,
            f"-I{protos}",
            f"-I{include}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            *sources,
        ]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            fail_setup(
                "protoc rejected the sources:\n  " + " ".join(cmd) + "\n" + run.stderr.strip()
            )
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return list(fds.file)


# --------------------------------------------------------------------------
# Official side: installed Google packages


def import_or_fail(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        fail_setup(
            f"cannot import {name} ({error}); run with the venv that has "
            "google-maps-fleetengine and googleapis-common-protos"
        )


def official_files() -> list[descriptor_pb2.FileDescriptorProto]:
    """File descriptors of every proto-plus type of fleetengine_v1, plus common protos."""
    fe = import_or_fail("google.maps.fleetengine_v1")
    seen: dict[str, object] = {}

    def walk(fd) -> None:
        if fd.name in seen:
            return
        seen[fd.name] = fd
        for dep in fd.dependencies:
            walk(dep)

    for name in getattr(fe, "__all__", dir(fe)):
        obj = getattr(fe, name, None)
        # proto-plus message classes have `pb`; proto-plus enums are reached
        # through their file.
        if inspect.isclass(obj) and hasattr(obj, "pb") and hasattr(obj, "meta"):
            try:
                walk(obj.pb(obj()).DESCRIPTOR.file)
            except Exception:  # not a message class after all
                continue
    for module_name in COMMON_PROTO_MODULES:
        walk(import_or_fail(module_name).DESCRIPTOR)

    files = []
    for fd in seen.values():
        fp = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(fp)
        files.append(fp)
    return files


@dataclass(frozen=True)
class Method:
    name: str
    input_type: str
    output_type: str
    client_streaming: bool
    server_streaming: bool


def message_full_name(callable_) -> str:
    """Full proto name of the class a (de)serializer belongs to."""
    owner = getattr(callable_, "__self__", None)
    if owner is None:
        return f"<unknown: {callable_!r}>"
    if not inspect.isclass(owner):
        owner = type(owner)
    if hasattr(owner, "pb") and hasattr(owner, "meta"):  # proto-plus
        return owner.pb().DESCRIPTOR.full_name
    return owner.DESCRIPTOR.full_name


def official_services() -> dict[str, dict[str, Method]]:
    """Services and methods as built by the official gRPC transports."""
    import grpc

    class RecordingChannel(grpc.Channel):
        """A channel that records the stubs made on it and never connects."""

        def __init__(self) -> None:
            self.stubs: list[tuple[str, str, tuple, dict]] = []

        def _record(self, kind, method, *args, **kwargs):
            self.stubs.append((kind, method, args, kwargs))
            return lambda *a, **k: None

        def unary_unary(self, method, *args, **kwargs):
            return self._record("unary_unary", method, *args, **kwargs)

        def unary_stream(self, method, *args, **kwargs):
            return self._record("unary_stream", method, *args, **kwargs)

        def stream_unary(self, method, *args, **kwargs):
            return self._record("stream_unary", method, *args, **kwargs)

        def stream_stream(self, method, *args, **kwargs):
            return self._record("stream_stream", method, *args, **kwargs)

        def subscribe(self, callback, try_to_connect=False):
            pass

        def unsubscribe(self, callback):
            pass

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    services_pkg = import_or_fail("google.maps.fleetengine_v1.services")
    result: dict[str, dict[str, Method]] = {}
    for info in pkgutil.iter_modules(services_pkg.__path__):
        try:
            grpc_module = importlib.import_module(
                f"{services_pkg.__name__}.{info.name}.transports.grpc"
            )
        except ImportError:
            continue
        for _, transport_class in inspect.getmembers(grpc_module, inspect.isclass):
            if not transport_class.__name__.endswith("GrpcTransport"):
                continue
            if transport_class.__module__ != grpc_module.__name__:
                continue
            channel = RecordingChannel()
            # The transport wraps its channel in a logging interceptor that
            # makes stubs lazily; bypass it so each stub is made on our channel.
            with mock.patch.object(grpc, "intercept_channel", lambda ch, *_: ch):
                transport = transport_class(channel=channel)
                for name, attr in inspect.getmembers(transport_class):
                    if isinstance(attr, property):
                        try:
                            getattr(transport, name)
                        except Exception:
                            pass
            for kind, path, args, kwargs in channel.stubs:
                service, _, method = path.strip("/").partition("/")
                serializer = kwargs.get("request_serializer", args[0] if args else None)
                deserializer = kwargs.get(
                    "response_deserializer", args[1] if len(args) > 1 else None
                )
                result.setdefault(service, {})[method] = Method(
                    name=method,
                    input_type=message_full_name(serializer),
                    output_type=message_full_name(deserializer),
                    client_streaming=kind.startswith("stream_"),
                    server_streaming=kind.endswith("_stream"),
                )
    if not result:
        fail_setup("found no gRPC transport in google.maps.fleetengine_v1.services")
    return result


# --------------------------------------------------------------------------
# Comparison


@dataclass
class Report:
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    messages: int = 0
    enums: int = 0
    fields: int = 0
    methods: int = 0

    def diff(self, where: str, what: str) -> None:
        self.differences.append(f"{where}: {what}")


def short_file(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def in_official_scope(entry: TypeEntry, package: str) -> bool:
    if package == "maps.fleetengine.v1":
        return short_file(entry.file_name) in TRIP_API_FILES
    return package in COMPARED_PACKAGES


def real_oneof(message, fld) -> str | None:
    """Name of the non-synthetic oneof the field belongs to, if any."""
    if not fld.HasField("oneof_index") or fld.proto3_optional:
        return None
    return message.oneof_decl[fld.oneof_index].name


def spelled_out_optional(message, fld) -> bool:
    """True for `oneof _x { T x = N; }`, the explicit form of `optional T x = N;`."""
    name = real_oneof(message, fld)
    if name != "_" + fld.name:
        return False
    members = [f for f in message.field if f.HasField("oneof_index") and f.oneof_index == fld.oneof_index]
    return len(members) == 1


def type_ref(fld) -> str:
    if fld.type in (FDP.TYPE_MESSAGE, FDP.TYPE_ENUM, FDP.TYPE_GROUP):
        return fld.type_name.lstrip(".")
    return ""


def describe_map(fld, index: SchemaIndex) -> str | None:
    """`map<K, V>` for a map field, None otherwise."""
    if fld.label != FDP.LABEL_REPEATED or fld.type != FDP.TYPE_MESSAGE:
        return None
    entry = index.map_entries.get(type_ref(fld))
    if entry is None:
        return None
    parts = []
    for f in sorted(entry.field, key=lambda f: f.number):
        parts.append(type_ref(f) or TYPE_NAMES[f.type])
    return "map<" + ", ".join(parts) + ">"


def compare_field(where: str, om, of, um, uf, official: SchemaIndex, ours: SchemaIndex, report: Report) -> None:
    def check(what: str, theirs, mine) -> None:
        if theirs != mine:
            report.diff(where, f"{what} {theirs} (official) != {mine} (ours)")

    check("number", of.number, uf.number)
    check("label", LABEL_NAMES[of.label], LABEL_NAMES[uf.label])
    official_map, our_map = describe_map(of, official), describe_map(uf, ours)
    if official_map or our_map:
        check("map type", official_map, our_map)
    else:
        check("type", TYPE_NAMES[of.type], TYPE_NAMES[uf.type])
        check("referenced type", type_ref(of) or None, type_ref(uf) or None)
    if of.proto3_optional and not uf.proto3_optional and spelled_out_optional(um, uf):
        # protoc-c 1.4.1 cannot generate proto3 `optional`; the one-member
        # oneof `_x` is what protoc lowers it to, with the same wire format.
        report.notes.append(
            f"note: {where}: proto3 optional (official) spelled as `oneof _{uf.name}` (ours); same wire format"
        )
    else:
        check("oneof", real_oneof(om, of), real_oneof(um, uf))
        check("proto3 optional", of.proto3_optional, uf.proto3_optional)
    official_packed = of.options.packed if of.options.HasField("packed") else None
    our_packed = uf.options.packed if uf.options.HasField("packed") else None
    check("packed option", official_packed, our_packed)


def compare_message(full: str, o: TypeEntry, u: TypeEntry, official: SchemaIndex, ours: SchemaIndex, report: Report) -> None:
    om, um = o.proto, u.proto
    theirs = {f.name: f for f in om.field}
    mine = {f.name: f for f in um.field}
    for name in sorted(theirs.keys() - mine.keys()):
        report.diff(f"{full}.{name}", f"field missing from ours (official: {theirs[name].number})")
    for name in sorted(mine.keys() - theirs.keys()):
        report.diff(f"{full}.{name}", f"field not in the official descriptor (ours: {mine[name].number})")
    for name in sorted(theirs.keys() & mine.keys()):
        report.fields += 1
        compare_field(f"{full}.{name}", om, theirs[name], um, mine[name], official, ours, report)


def compare_enum(full: str, o: TypeEntry, u: TypeEntry, report: Report) -> None:
    theirs = {v.name: v.number for v in o.proto.value}
    mine = {v.name: v.number for v in u.proto.value}
    for name in sorted(theirs.keys() - mine.keys()):
        report.diff(f"{full}.{name}", f"enum value missing from ours (official: {theirs[name]})")
    for name in sorted(mine.keys() - theirs.keys()):
        report.diff(f"{full}.{name}", f"enum value not in the official descriptor (ours: {mine[name]})")
    for name in sorted(theirs.keys() & mine.keys()):
        if theirs[name] != mine[name]:
            report.diff(f"{full}.{name}", f"number {theirs[name]} (official) != {mine[name]} (ours)")


def compare_types(official: SchemaIndex, ours: SchemaIndex, report: Report) -> None:
    required = {
        full for full, entry in official.types.items()
        if in_official_scope(entry, official.packages[full])
    }
    declared = {
        full for full in ours.types if ours.packages[full] in COMPARED_PACKAGES
    }
    for full in sorted(required - declared):
        entry = official.types[full]
        report.diff(full, f"{entry.kind} missing from ours (official file {short_file(entry.file_name)})")
    for full in sorted(declared):
        u = ours.types[full]
        o = official.types.get(full)
        if o is None:
            report.diff(full, f"{u.kind} not in the official descriptors")
            continue
        if o.kind != u.kind:
            report.diff(full, f"is a {o.kind} officially, a {u.kind} in ours")
            continue
        if short_file(o.file_name) != short_file(u.file_name):
            report.diff(full, f"declared in {short_file(o.file_name)} officially, in {short_file(u.file_name)} in ours")
        if u.kind == "message":
            report.messages += 1
            compare_message(full, o, u, official, ours, report)
        else:
            report.enums += 1
            compare_enum(full, o, u, report)


def compare_services(official: dict[str, dict[str, Method]], official_index: SchemaIndex, ours: SchemaIndex, report: Report) -> None:
    def in_scope(methods: dict[str, Method]) -> bool:
        return all(
            m.input_type in official_index.types
            and in_official_scope(official_index.types[m.input_type], official_index.packages[m.input_type])
            for m in methods.values()
        )

    required = {name for name, methods in official.items() if in_scope(methods)}
    declared = {
        name for name in ours.services
        if name.rpartition(".")[0] in COMPARED_PACKAGES
    }
    for name in sorted(required - declared):
        report.diff(name, "service missing from ours")
    for name in sorted(declared):
        if name not in official:
            report.diff(name, "service not in the official transports")
            continue
        theirs = official[name]
        _, service = ours.services[name]
        mine = {
            m.name: Method(
                name=m.name,
                input_type=m.input_type.lstrip("."),
                output_type=m.output_type.lstrip("."),
                client_streaming=m.client_streaming,
                server_streaming=m.server_streaming,
            )
            for m in service.method
        }
        for method in sorted(theirs.keys() - mine.keys()):
            report.diff(f"{name}/{method}", "rpc missing from ours")
        for method in sorted(mine.keys() - theirs.keys()):
            report.diff(f"{name}/{method}", "rpc not in the official transport")
        for method in sorted(theirs.keys() & mine.keys()):
            report.methods += 1
            o, u = theirs[method], mine[method]
            for attr in ("input_type", "output_type", "client_streaming", "server_streaming"):
                if getattr(o, attr) != getattr(u, attr):
                    report.diff(
                        f"{name}/{method}",
                        f"{attr} {getattr(o, attr)} (official) != {getattr(u, attr)} (ours)",
                    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--protos", type=Path, default=REPO_ROOT / "Protos",
        help="directory of our .proto sources (default: <repo>/Protos)",
    )
    parser.add_argument(
        "--include", type=Path, default=Path("/usr/include"),
        help="where protoc finds google/protobuf/*.proto (default: /usr/include)",
    )
    args = parser.parse_args(argv)

    try:
        ours = SchemaIndex()
        for fp in compile_ours(args.protos.resolve(), args.include):
            ours.add_file(fp)
        official = SchemaIndex()
        for fp in official_files():
            official.add_file(fp)
        services = official_services()
    except SetupError as error:
        print(f"check_schema: {error}", file=sys.stderr)
        return 2

    report = Report()
    compare_types(official, ours, report)
    compare_services(services, official, ours, report)

    for note in report.notes:
        print(note)
    for line in report.differences:
        print(line)
    print(f"services: {report.methods} rpcs compared")
    print(
        f"schema: {report.messages} messages, {report.enums} enums, "
        f"{report.fields} fields compared, {len(report.differences)} differences"
    )
    nothing = report.messages == 0 or report.enums == 0 or report.fields == 0 or report.methods == 0
    if nothing:
        print("check_schema: nothing (or not everything) was compared", file=sys.stderr)
    return 1 if report.differences or nothing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
