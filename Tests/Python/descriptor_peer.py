#!/usr/bin/env python3
"""The Python side of the descriptor test: protoc describes .proto files, Google's classes
read the description, and the Swift side (ProtoDescriptors, on our protobuf-c codec) must
read the same.

`make` runs protoc (`--include_imports --include_source_info`) on the package's own protos,
gRPC's test service, descriptor.proto itself and a small proto of this script's own (proto3
`optional`, a map, a oneof, nested types, a deprecated field, streaming methods, comments),
and prints one JSON object: `set`, the FileDescriptorSet protoc wrote (base64), and
`summary`, a list of rows (lists of strings) that Google's `descriptor_pb2` reads from it —
every file, message, field (number, label, type, type name, JSON name, oneof index and
proto3 `optional` when present, default value, deprecation), oneof, enum value, service
method (types and streaming), and every source location with a leading comment. The Swift
test builds the same rows from its own decode and compares them row by row.

Usage, with the venv's interpreter (scripts/test creates it):

    .venv/bin/python Tests/Python/descriptor_peer.py make

Exit status: 0 printed, 2 the script cannot run (protoc or packages missing, protoc failed).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from google.protobuf import descriptor_pb2
except ImportError as error:  # pragma: no cover - environment problem
    print(f"descriptor_peer: cannot import Google's descriptor classes ({error}); run with the "
          "venv that scripts/test creates (.venv/bin/python)", file=sys.stderr)
    sys.exit(2)

ROOT = Path(__file__).resolve().parents[2]
GRPC_PROTO_DIR = Path("/usr/share/grpc-proto")  # Debian's grpc-proto package
WKT_DIR = Path("/usr/include")  # libprotobuf-dev

# What the package's own protos do not use, so the decode of it is checked too.
OWN_PROTO = """\
syntax = "proto3";

// A package of the test's own.
package descriptorpeer.v1;

import "google/protobuf/timestamp.proto";

// Every shape of field a generator must read.
message Sample {
  // A nested message.
  message Inner { repeated int64 values = 1; }
  enum Mood { MOOD_UNSPECIFIED = 0; MOOD_CALM = 1; MOOD_LOUD = -2; }
  optional int32 maybe = 1;
  map<string, Inner> by_name = 2;
  oneof choice {
    string text = 3;
    bytes blob = 4;
    Inner inner = 5;
  }
  Mood mood = 6 [deprecated = true];
  google.protobuf.Timestamp at = 7;
  repeated Mood moods = 8;
  sint64 delta = 9 [json_name = "d"];
}

service Samples {
  rpc Get(Sample) returns (Sample);
  // Streams back.
  rpc Watch(Sample) returns (stream Sample);
  rpc Upload(stream Sample) returns (Sample);
  rpc Chat(stream Sample) returns (stream Sample);
}
"""


class SetupError(Exception):
    pass


def descriptor_set() -> bytes:
    protoc = shutil.which("protoc")
    if protoc is None:
        raise SetupError("`protoc` not found on PATH (Debian: protobuf-compiler)")
    ours = sorted(str(p.relative_to(ROOT / "Protos")) for p in (ROOT / "Protos").rglob("*.proto"))
    with tempfile.TemporaryDirectory() as work:
        Path(work, "descriptor_peer.proto").write_text(OWN_PROTO)
        out = Path(work, "set.pb")
        cmd = [protoc, f"-I{work}", f"-I{ROOT / 'Protos'}", f"-I{GRPC_PROTO_DIR}", f"-I{WKT_DIR}",
               "--include_imports", "--include_source_info", f"--descriptor_set_out={out}",
               "descriptor_peer.proto", "grpc/testing/test.proto",
               "google/protobuf/descriptor.proto", *ours]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise SetupError("protoc failed:\n  " + " ".join(cmd) + "\n" + run.stderr.strip())
        return out.read_bytes()


def present(message, field: str) -> str:
    """The field's value as text (`true`/`false` for a bool), or `-` when it is absent: the
    rows tell presence apart from a default, as proto2 does."""
    if message is None or not message.HasField(field):
        return "-"
    value = getattr(message, field)
    return str(value).lower() if isinstance(value, bool) else str(value)


def options(message):
    return message.options if message.HasField("options") else None


def summary(fds: descriptor_pb2.FileDescriptorSet) -> list[list[str]]:
    rows: list[list[str]] = []

    def message(scope: str, m) -> None:
        full = f"{scope}.{m.name}"
        rows.append(["message", full, present(options(m), "map_entry")])
        for f in m.field:
            rows.append([
                "field", full, f.name, present(f, "number"), present(f, "label"),
                present(f, "type"), present(f, "type_name"), present(f, "json_name"),
                present(f, "oneof_index"), present(f, "proto3_optional"),
                present(f, "default_value"), present(options(f), "deprecated"),
            ])
        for o in m.oneof_decl:
            rows.append(["oneof", full, o.name])
        for n in m.nested_type:
            message(full, n)
        for e in m.enum_type:
            enum(full, e)

    def enum(scope: str, e) -> None:
        for v in e.value:
            rows.append(["enum value", f"{scope}.{e.name}", v.name, str(v.number)])

    for fd in fds.file:
        rows.append([
            "file", fd.name, present(fd, "package"), present(fd, "syntax"), ",".join(fd.dependency),
        ])
        for m in fd.message_type:
            message(fd.package, m)
        for e in fd.enum_type:
            enum(fd.package, e)
        for s in fd.service:
            for meth in s.method:
                rows.append([
                    "method", f"{fd.package}.{s.name}", meth.name, present(meth, "input_type"),
                    present(meth, "output_type"), present(meth, "client_streaming"),
                    present(meth, "server_streaming"),
                ])
        for loc in fd.source_code_info.location:
            if loc.HasField("leading_comments"):
                rows.append([
                    "comment", fd.name, ",".join(map(str, loc.path)), ",".join(map(str, loc.span)),
                    loc.leading_comments,
                ])
    return rows


def main() -> int:
    if sys.argv[1:] != ["make"]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        raw = descriptor_set()
    except SetupError as error:
        print(f"descriptor_peer: {error}", file=sys.stderr)
        return 2
    fds = descriptor_pb2.FileDescriptorSet.FromString(raw)
    print(json.dumps({"set": base64.b64encode(raw).decode("ascii"), "summary": summary(fds)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
