#!/usr/bin/env python3
"""Writes the generated modules: protobuf-c's C code placed in one C target per module
(Sources/<Module>C) and the Swift message layer over it (Sources/<Module>/Generated).

Input: a FileDescriptorSet from `protoc --include_imports --include_source_info` of every
proto we generate, and the protobuf-c output directory (its *.pb-c.c files are read for the
exact C names protoc-c chose, so this script never re-derives protobuf-c's naming rules).
Output, per module of MODULES: the C target (protoc-c's files, an umbrella header with one
descriptor accessor per message, a module map naming every header), one Swift file per
.proto (its types, and the file's own descriptor for reflection), one namespace file and one
index of the module's file descriptors. Called by CodeGen/generate; see CodeGen/README.md.
"""

import argparse
import base64
import os
import re
import shutil
import sys

from google.protobuf import descriptor_pb2 as pb

F = pb.FieldDescriptorProto

# proto package -> Swift namespace (a caseless enum). A package not listed is an error, so a
# new proto makes its author choose a name.
NAMESPACES = {
    "maps.fleetengine.v1": "FleetEngine",
    "google.rpc": "GoogleRPC",
    "google.type": "GoogleType",
    "google.protobuf": "GoogleProtobuf",
    "grpc.testing": "GRPCTesting",
    "fleetconsumer.v1": "FleetFeed",
    "grpc.health.v1": "GRPCHealthV1",
    "grpc.reflection.v1": "GRPCReflectionV1",
    "grpc.reflection.v1alpha": "GRPCReflectionV1Alpha",
}

# proto package -> the Swift module its types are generated into; the module's C target is
# its name + "C". A package not listed is an error, like a missing namespace.
# - ProtoRuntime: the runtime, plus what gRPC itself needs — the well-known types and
#   google.rpc's Status and error details (grpc-status-details-bin). GRPCWire depends on it
#   alone, so it never sees, nor rebuilds for, a Fleet Engine message.
# - FleetProtos: the Fleet Engine trip API, google.type.LatLng it uses, and our trip feed.
# - GRPCTestingProtos: grpc.testing, for the interop and benchmark services.
# - GRPCServiceProtos: gRPC's standard health and reflection services.
MODULES = {
    "google.protobuf": "ProtoRuntime",
    "google.rpc": "ProtoRuntime",
    "google.type": "FleetProtos",
    "maps.fleetengine.v1": "FleetProtos",
    "fleetconsumer.v1": "FleetProtos",
    "grpc.testing": "GRPCTestingProtos",
    "grpc.health.v1": "GRPCServiceProtos",
    "grpc.reflection.v1": "GRPCServiceProtos",
    "grpc.reflection.v1alpha": "GRPCServiceProtos",
}

# .proto file -> module, for a file that does not go where its package goes. descriptor.proto
# (package google.protobuf) is what protoc describes every other file with: the code generator
# reads it, no call does, so it stays out of the runtime every module links.
FILE_MODULES = {
    "google/protobuf/descriptor.proto": "ProtoDescriptors",
}

# The module every other one builds on: its protos may import only its own.
RUNTIME = "ProtoRuntime"

# Messages kept in copy-on-write storage: the struct holds one reference to a class with the
# fields, so a copy is one retain instead of one per field, and an absent optional of it
# takes 8 bytes instead of its whole size. For messages that are large and copied often:
# FleetConsumer keeps a Trip per followed trip, hands copies to subscribers and merges every
# poll's answer into it (a Trip's fields take 1.6 KB inline, a VehicleLocation's 480 bytes,
# a TripWaypoint's 264).
COW_MESSAGES = {
    ".maps.fleetengine.v1.Trip",
    ".maps.fleetengine.v1.TripWaypoint",
    ".maps.fleetengine.v1.VehicleLocation",
    ".maps.fleetengine.v1.TerminalLocation",
    ".maps.fleetengine.v1.StopLocation",
}

# Proto names that are not usable as Swift type names.
TYPE_RENAMES = {"google.protobuf.Any": "AnyMessage"}

# Nested type names Swift gives a meaning of its own (`Outer.Type` is Outer's metatype): such a
# message gets `Message` appended, such an enum `Enum` (`FieldDescriptorProto.TypeEnum`).
SWIFT_TYPE_MEMBERS = {"Type", "Protocol", "Self"}

# Message fields of these types become optional Swift scalars (`Int32?`), as the wrappers
# exist only to give a scalar presence.
WRAPPERS = {
    ".google.protobuf.DoubleValue": ("Double", "double"),
    ".google.protobuf.FloatValue": ("Float", "float"),
    ".google.protobuf.Int64Value": ("Int64", "int"),
    ".google.protobuf.UInt64Value": ("UInt64", "int"),
    ".google.protobuf.Int32Value": ("Int32", "int"),
    ".google.protobuf.UInt32Value": ("UInt32", "int"),
    ".google.protobuf.BoolValue": ("Bool", "bool"),
    ".google.protobuf.StringValue": ("String", "string"),
    ".google.protobuf.BytesValue": ("[UInt8]", "bytes"),
}

SCALARS = {
    F.TYPE_DOUBLE: ("Double", "0", "plain"),
    F.TYPE_FLOAT: ("Float", "0", "plain"),
    F.TYPE_INT64: ("Int64", "0", "plain"),
    F.TYPE_UINT64: ("UInt64", "0", "plain"),
    F.TYPE_INT32: ("Int32", "0", "plain"),
    F.TYPE_FIXED64: ("UInt64", "0", "plain"),
    F.TYPE_FIXED32: ("UInt32", "0", "plain"),
    F.TYPE_BOOL: ("Bool", "false", "bool"),
    F.TYPE_STRING: ("String", '""', "string"),
    F.TYPE_BYTES: ("[UInt8]", "[]", "bytes"),
    F.TYPE_UINT32: ("UInt32", "0", "plain"),
    F.TYPE_SFIXED32: ("Int32", "0", "plain"),
    F.TYPE_SFIXED64: ("Int64", "0", "plain"),
    F.TYPE_SINT32: ("Int32", "0", "plain"),
    F.TYPE_SINT64: ("Int64", "0", "plain"),
}

SWIFT_KEYWORDS = set(
    """associatedtype class deinit enum extension fileprivate func import init inout internal let
    open operator private precedencegroup protocol public rethrows static struct subscript typealias
    var break case catch continue default defer do else fallthrough for guard if in repeat return
    throw switch where while Any as await false is nil self Self super throws true try Type
    Protocol some any""".split()
)

# Members every generated message has; a proto field with one of these names would shadow it.
RESERVED_MEMBERS = {"unknownFields", "protoMessageName", "serializedBytes", "encode"}

ACRONYMS = {"id": "ID", "url": "URL", "uri": "URI"}


class GenError(Exception):
    pass


def camel(snake, upper_first):
    words = [w for w in snake.split("_") if w]
    out = []
    for i, w in enumerate(words):
        lw = w.lower()
        if i == 0 and not upper_first:
            out.append(lw if w.isupper() or w.islower() else w[0].lower() + w[1:])
        elif lw in ACRONYMS:
            out.append(ACRONYMS[lw])
        else:
            out.append(w[0].upper() + (w[1:].lower() if w.isupper() else w[1:]))
    return "".join(out)


def ident(name):
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


def enum_case_name(enum_name, value_name):
    """SCREAMING_SNAKE value to lowerCamel, without the enum's own name as a prefix."""
    prefix = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", enum_name).upper() + "_"
    stripped = value_name[len(prefix):] if value_name.startswith(prefix) else value_name
    if not stripped or stripped[0].isdigit():
        stripped = value_name
    return camel(stripped.lower(), False)


def doc(comment, indent):
    lines = [l.rstrip() for l in (comment or "").strip("\n").split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or not any(l.strip() for l in lines):
        return []
    # Comments in .proto files are indented by one space after `//`.
    return [f"{indent}///{l}" if l.startswith(" ") or not l else f"{indent}/// {l}" for l in lines]


class CNames:
    """protoc-c's names, read from its output."""

    DESC = re.compile(
        r"const ProtobufCMessageDescriptor (\w+)__descriptor =\s*\{\s*PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,"
        r"\s*\"([\w.]+)\",\s*\"\w+\",\s*\"(\w+)\""
    )
    FIELD = re.compile(
        r"\{\s*\"(\w+)\",\s*(\d+),\s*PROTOBUF_C_LABEL_\w+,\s*PROTOBUF_C_TYPE_\w+,\s*"
        r"(?:0,\s*/\* quantifier_offset \*/|offsetof\((\w+), (\w+)\),)\s*offsetof\((\w+), (\w+)\)"
    )

    def __init__(self, c_dir):
        self.messages = {}  # full proto name -> (lower symbol prefix, C type)
        self.fields = {}  # (C type, field number) -> (C member, quantifier member)
        for root, _, files in os.walk(c_dir):
            for f in files:
                if f.endswith(".pb-c.c"):
                    text = open(os.path.join(root, f)).read()
                    for lower, full, ctype in self.DESC.findall(text):
                        self.messages[full] = (lower, ctype)
                    for m in self.FIELD.finditer(text):
                        _, number, _, qmember, ctype, member = m.groups()
                        self.fields[(ctype, int(number))] = (member, qmember)

    def message(self, full):
        if full not in self.messages:
            raise GenError(f"protoc-c emitted no descriptor for {full}")
        return self.messages[full]

    def field(self, ctype, number):
        if (ctype, number) not in self.fields:
            raise GenError(f"protoc-c emitted no field {number} for {ctype}")
        return self.fields[(ctype, number)]


class Model:
    """Every message and enum of the descriptor set, by full name with a leading dot."""

    def __init__(self, fds):
        self.messages = {}
        self.enums = {}
        self.swift = {}
        self.comments = {}
        for fd in fds.file:
            if fd.package not in NAMESPACES:
                raise GenError(f"{fd.name}: package {fd.package!r} has no Swift namespace in swiftgen.py")
            ns = NAMESPACES[fd.package]
            for loc in fd.source_code_info.location:
                self.comments[(fd.name, tuple(loc.path))] = loc.leading_comments
            for i, m in enumerate(fd.message_type):
                self._add_message(fd, m, f".{fd.package}", ns, (4, i))
            for i, e in enumerate(fd.enum_type):
                self._add_enum(fd, e, f".{fd.package}", ns, (5, i))

    def _swift_name(self, full, parent_swift, name, suffix):
        if name in SWIFT_TYPE_MEMBERS:
            name += suffix
        return f"{parent_swift}.{TYPE_RENAMES.get(full[1:], name)}"

    def _add_message(self, fd, m, parent, parent_swift, path):
        full = f"{parent}.{m.name}"
        self.messages[full] = (fd, m, path)
        self.swift[full] = self._swift_name(full, parent_swift, m.name, "Message")
        for i, n in enumerate(m.nested_type):
            self._add_message(fd, n, full, self.swift[full], path + (3, i))
        for i, e in enumerate(m.enum_type):
            self._add_enum(fd, e, full, self.swift[full], path + (4, i))

    def _add_enum(self, fd, e, parent, parent_swift, path):
        full = f"{parent}.{e.name}"
        self.enums[full] = (fd, e, path)
        self.swift[full] = self._swift_name(full, parent_swift, e.name, "Enum")

    def comment(self, fd, path):
        return self.comments.get((fd.name, tuple(path)), "")

    def is_map_entry(self, type_name):
        return type_name in self.messages and self.messages[type_name][1].options.map_entry


class Field:
    """How one proto field looks in Swift and in protobuf-c's struct."""

    def __init__(self, model, cnames, ctype, f, syntax):
        self.f = f
        self.name = camel(f.name, False)
        if self.name in RESERVED_MEMBERS:
            raise GenError(f"field {f.name} collides with a generated member")
        self.id = ident(self.name)
        self.cmember, self.cquant = cnames.field(ctype, f.number)
        self.repeated = f.label == F.LABEL_REPEATED
        # Set for a field with presence and a Swift optional: a one-field oneof standing in for
        # proto3 `optional` (see SwiftWriter.message), or a proto2 `optional` scalar. A Bool
        # expression over the C message `m` saying the field is present, and the statement
        # that marks it present in `c` (None when setting the member is enough).
        self.present_if = None
        self.mark_present = None
        self.map = self.repeated and model.is_map_entry(f.type_name)
        if f.proto3_optional:
            raise GenError(f"{f.name}: proto3 `optional` is not supported by swiftgen.py yet")
        if f.type == F.TYPE_GROUP:
            raise GenError(f"{f.name}: groups are not supported")
        self.kind, self.swift, self.default = self._classify(model, f)
        if (syntax in ("", "proto2") and f.label == F.LABEL_OPTIONAL and self.kind != "message"
                and not f.HasField("oneof_index")):
            # protoc-c gives a proto2 optional scalar a `has_` member; a string has none, as
            # NULL says it is absent. The .proto's [default = …] is the reader's to apply.
            if self.cquant:
                self.present_if = f"m.{self.cquant} != 0"
                self.mark_present = f"c.pointee.{self.cquant} = 1"
            else:
                self.present_if = f"m.{self.cmember} != nil"

    def _classify(self, model, f):
        if f.type == F.TYPE_MESSAGE:
            if not self.repeated and f.type_name in WRAPPERS:
                return "wrapper", WRAPPERS[f.type_name][0], "nil"
            return "message", model.swift[f.type_name], "nil"
        if f.type == F.TYPE_ENUM:
            e = model.enums[f.type_name][1]
            return "enum", model.swift[f.type_name], "." + ident(enum_case_name(e.name, e.value[0].name))
        swift, default, kind = SCALARS[f.type]
        return kind, swift, default


class SwiftWriter:
    def __init__(self, model, cnames):
        self.model = model
        self.cnames = cnames
        self.out = []
        self.bridges = []
        self.entry_accessors = []

    def line(self, s=""):
        self.out.append(s)

    # MARK: declarations

    def enum(self, fd, e, path, indent):
        m = self.model
        full = self._full_of_enum(e, fd, path)
        swift_name = m.swift[full].rsplit(".", 1)[1]
        seen, cases = set(), []
        for v in e.value:
            if v.number in seen:
                continue  # an alias (allow_alias): the first name stands for the number
            seen.add(v.number)
            cases.append((ident(enum_case_name(e.name, v.name)), v.number, v.name))
        for l in doc(m.comment(fd, path), indent):
            self.line(l)
        self.line(f"{indent}public enum {ident(swift_name)}: RawRepresentable, CaseIterable, Hashable, Sendable,")
        self.line(f"{indent}  CustomStringConvertible")
        self.line(f"{indent}{{")
        i2 = indent + "  "
        for vi, v in enumerate(e.value):
            if any(c[2] == v.name for c in cases):
                for l in doc(m.comment(fd, path + (2, vi)), i2):
                    self.line(l)
                name, number, _ = next(c for c in cases if c[2] == v.name)
                self.line(f"{i2}case {name}  // = {number}")
        self.line(f"{i2}/// A value this version of the schema does not know; kept so it survives a round trip.")
        self.line(f"{i2}case unrecognized(Int32)")
        self.line()
        self.line(f"{i2}public init(rawValue: Int32) {{")
        self.line(f"{i2}  switch rawValue {{")
        for name, number, _ in cases:
            self.line(f"{i2}  case {number}: self = .{name}")
        self.line(f"{i2}  default: self = .unrecognized(rawValue)")
        self.line(f"{i2}  }}")
        self.line(f"{i2}}}")
        self.line()
        self.line(f"{i2}public var rawValue: Int32 {{")
        self.line(f"{i2}  switch self {{")
        for name, number, _ in cases:
            self.line(f"{i2}  case .{name}: {number}")
        self.line(f"{i2}  case .unrecognized(let value): value")
        self.line(f"{i2}  }}")
        self.line(f"{i2}}}")
        self.line()
        self.line(f"{i2}public static let allCases: [Self] = [")
        for name, _, _ in cases:
            self.line(f"{i2}  .{name},")
        self.line(f"{i2}]")
        self.line()
        self.line(f"{i2}/// The value's name in the .proto file, or its number when it has none.")
        self.line(f"{i2}public var description: String {{")
        self.line(f"{i2}  switch self {{")
        for name, _, pname in cases:
            self.line(f'{i2}  case .{name}: "{pname}"')
        self.line(f'{i2}  case .unrecognized(let value): "\\(value)"')
        self.line(f"{i2}  }}")
        self.line(f"{i2}}}")
        self.line(f"{indent}}}")

    def _full_of_enum(self, e, fd, path):
        for full, (efd, ee, p) in self.model.enums.items():
            if efd is fd and tuple(p) == tuple(path):
                return full
        raise GenError(f"enum {e.name} not indexed")

    def message(self, full, indent):
        m = self.model
        fd, msg, path = m.messages[full]
        lower, ctype = self.cnames.message(full[1:])
        swift_full = m.swift[full]
        swift_name = swift_full.rsplit(".", 1)[1]
        fields = [Field(m, self.cnames, ctype, f, fd.syntax) for f in msg.field]
        oneofs = {}
        for f in fields:
            if f.f.HasField("oneof_index"):
                oneofs.setdefault(f.f.oneof_index, []).append(f)
        # A oneof of one field named `_<field>` is how a proto3 `optional` field is written for
        # protoc-c (which rejects `optional`): in Swift it is simply an optional field.
        optionals = []
        for index, members in list(oneofs.items()):
            name = msg.oneof_decl[index].name
            if len(members) == 1 and name == "_" + members[0].f.name:
                case = name.lower() + "_case"
                members[0].present_if = f"m.{case}.rawValue == {members[0].f.number}"
                members[0].mark_present = f"c.pointee.{case} = .init(rawValue: {members[0].f.number})"
                optionals.append(members[0])
                del oneofs[index]
        plain = [f for f in fields if not f.f.HasField("oneof_index")] + optionals

        for l in doc(m.comment(fd, path), indent):
            self.line(l)
        self.line(f"{indent}public struct {ident(swift_name)}: ProtoMessage {{")
        i2 = indent + "  "
        self.line(f'{i2}public static let protoMessageName = "{full[1:]}"')
        self.line()
        # (doc lines, name, type, default) of every stored field, in declaration order.
        decls = []
        for f in plain:
            lines = doc(m.comment(fd, path + (2, list(msg.field).index(f.f))), i2)
            if f.f.options.deprecated:
                # Not @available(deprecated): the bridge below must still copy the field.
                lines = lines + [f"{i2}/// - Note: Deprecated in the .proto file."]
            decls.append((lines, f.id, self._decl_type(f), self._decl_default(f)))
        for index, members in sorted(oneofs.items()):
            o = msg.oneof_decl[index]
            tname, pname = camel(o.name, True), ident(camel(o.name, False))
            decls.append((doc(m.comment(fd, path + (8, index)), i2), pname, f"{tname}?", "nil"))
        decls.append(([f"{i2}/// Fields this schema does not know, kept as they arrived and sent again on encode."],
                      "unknownFields", "ProtoUnknownFields", "ProtoUnknownFields()"))
        if full in COW_MESSAGES:
            self._cow_fields(swift_name, decls, i2)
        else:
            for lines, name, typ, default in decls:
                for l in lines:
                    self.line(l)
                if name == "unknownFields":
                    self.line(f"{i2}public var unknownFields = ProtoUnknownFields()")
                else:
                    self.line(f"{i2}public var {name}: {typ} = {default}")
        self.line()
        self.line(f"{i2}public init() {{}}")
        self.line()
        self.line(f"{i2}public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) {{")
        self.line(f"{i2}  self = try Self.decodeThroughC(bytes)")
        self.line(f"{i2}}}")
        self.line()
        self.line(f"{i2}public func encode(appendingTo buffer: inout [UInt8]) {{")
        self.line(f"{i2}  encodeThroughC(appendingTo: &buffer)")
        self.line(f"{i2}}}")
        for index, members in sorted(oneofs.items()):
            o = msg.oneof_decl[index]
            self.line()
            for l in doc(m.comment(fd, path + (8, index)), i2):
                self.line(l)
            self.line(f"{i2}public enum {camel(o.name, True)}: Hashable, Sendable {{")
            for f in members:
                for l in doc(m.comment(fd, path + (2, list(msg.field).index(f.f))), i2 + "  "):
                    self.line(l)
                self.line(f"{i2}  case {f.id}({self._element_type(f)})")
            self.line(f"{i2}}}")
        for i, n in enumerate(msg.nested_type):
            if n.options.map_entry:
                continue
            self.line()
            self.message(f"{full}.{n.name}", i2)
        for i, e in enumerate(msg.enum_type):
            self.line()
            self.enum(fd, e, path + (4, i), i2)
        self.line(f"{indent}}}")
        self.bridges.append((full, lower, ctype, plain, oneofs, msg))

    def _cow_fields(self, swift_name, decls, i2):
        """The fields of a COW_MESSAGES message: a storage class shared by copies, accessors
        that copy it before the first change of a shared one, and == and hash(into:) over
        the fields (the storage class is not Hashable)."""
        i3, i4 = i2 + "  ", i2 + "    "
        self.line(f"{i2}/// The fields, shared by copies of this message until one of them changes (copy-on-write).")
        self.line(f"{i2}/// Usable from inline code, so that other modules read a field in place rather than")
        self.line(f"{i2}/// through a call (and a retain of the storage) per read.")
        self.line(f"{i2}@usableFromInline final class Storage: @unchecked Sendable {{")
        self.line(f"{i3}// @unchecked Sendable: changed only through a struct that holds the only reference.")
        self.line(f"{i3}// @exclusivity(unchecked): a class's stored properties are checked at run time on every")
        self.line(f"{i3}// access (a third of a field read); the struct's own accesses are checked statically.")
        for _, name, typ, default in decls:
            self.line(f"{i3}@usableFromInline @exclusivity(unchecked) var {name}: {typ} = {default}")
        self.line()
        self.line(f"{i3}init() {{}}")
        self.line()
        self.line(f"{i3}init(copying other: Storage) {{")
        for _, name, _, _ in decls:
            self.line(f"{i4}{name} = other.{name}")
        self.line(f"{i3}}}")
        self.line(f"{i2}}}")
        self.line()
        self.line(f"{i2}@usableFromInline var storage = Storage()")
        self.line()
        self.line(f"{i2}/// The storage, copied first if another copy of this message shares it.")
        self.line(f"{i2}private mutating func uniqueStorage() -> Storage {{")
        self.line(f"{i3}if !isKnownUniquelyReferenced(&storage) {{ storage = Storage(copying: storage) }}")
        self.line(f"{i3}return storage")
        self.line(f"{i2}}}")
        for lines, name, typ, _ in decls:
            self.line()
            for l in lines:
                self.line(l)
            self.line(f"{i2}public var {name}: {typ} {{")
            self.line(f"{i3}@inlinable get {{ storage.{name} }}")
            self.line(f"{i3}set {{ uniqueStorage().{name} = newValue }}")
            self.line(f"{i3}_modify {{ yield &uniqueStorage().{name} }}")
            self.line(f"{i2}}}")
        self.line()
        self.line(f"{i2}public static func == (lhs: {swift_name}, rhs: {swift_name}) -> Bool {{")
        self.line(f"{i3}if lhs.storage === rhs.storage {{ return true }}")
        self.line(f"{i3}let (a, b) = (lhs.storage, rhs.storage)")
        for _, name, _, _ in decls:
            self.line(f"{i3}guard a.{name} == b.{name} else {{ return false }}")
        self.line(f"{i3}return true")
        self.line(f"{i2}}}")
        self.line()
        self.line(f"{i2}public func hash(into hasher: inout Hasher) {{")
        for _, name, _, _ in decls:
            self.line(f"{i3}hasher.combine(storage.{name})")
        self.line(f"{i2}}}")

    def _map_types(self, f):
        entry = self.model.messages[f.f.type_name][1]
        key, value = entry.field[0], entry.field[1]
        return self._scalar_swift(key), self._scalar_swift(value)

    def _scalar_swift(self, pf):
        if pf.type == F.TYPE_MESSAGE:
            return self.model.swift[pf.type_name]
        if pf.type == F.TYPE_ENUM:
            return self.model.swift[pf.type_name]
        return SCALARS[pf.type][0]

    def _element_type(self, f):
        return f.swift

    def _decl_type(self, f):
        if f.map:
            k, v = self._map_types(f)
            return f"[{k}: {v}]"
        if f.repeated:
            return f"[{f.swift}]"
        if f.kind in ("message", "wrapper") or f.present_if:
            return f"{f.swift}?"
        return f.swift

    def _decl_default(self, f):
        if f.present_if:
            return "nil"
        if f.map:
            return "[:]"
        if f.repeated:
            return "[]"
        return f.default

    # MARK: the bridge to protobuf-c

    def bridge(self, full, lower, ctype, plain, oneofs, msg):
        m = self.model
        swift = m.swift[full]
        self.line(f"extension {swift}: CBridgedMessage {{")
        self.line(f"  @usableFromInline package typealias CMessage = {ctype}")
        self.line()
        self.line(f"  @usableFromInline package static var cDescriptor: UnsafePointer<ProtobufCMessageDescriptor> {{")
        self.line(f"    {ACCESSOR_PREFIX}{lower}()")
        self.line(f"  }}")
        self.line()
        self.line(f"  @usableFromInline package init(cMessage c: UnsafePointer<{ctype}>) throws(ProtoDecodingError) {{")
        if msg.field:
            self.line(f"    let m = c.pointee")
        for f in plain:
            self._read(f, "    ")
        for index, members in sorted(oneofs.items()):
            o = msg.oneof_decl[index]
            self.line(f"    switch m.{o.name.lower()}_case.rawValue {{")
            for f in members:
                self.line(f"    case {f.f.number}: {ident(camel(o.name, False))} = .{f.id}({self._read_value(f, 'm.' + f.cmember)})")
            self.line(f"    default: break")
            self.line(f"    }}")
        self.line(f"    unknownFields = try ProtoUnknownFields(cMessage: c)")
        self.line(f"  }}")
        self.line()
        self._matches(ctype, plain, oneofs, msg)
        self.line()
        self.line(f"  @usableFromInline package func fill(_ c: UnsafeMutablePointer<{ctype}>, _ arena: ProtoArena) {{")
        for f in plain:
            self._write(f, "    ")
        for index, members in sorted(oneofs.items()):
            o = msg.oneof_decl[index]
            self.line(f"    switch {ident(camel(o.name, False))} {{")
            for f in members:
                self.line(f"    case .{f.id}(let v)?:")
                self.line(f"      c.pointee.{o.name.lower()}_case = .init(rawValue: {f.f.number})")
                self.line(f"      c.pointee.{f.cmember} = {self._write_value(f, 'v', oneof=True)}")
            self.line(f"    case nil: break")
            self.line(f"    }}")
        self.line(f"    unknownFields.fill(c, arena)")
        self.line(f"  }}")
        self.line(f"}}")

    def _matches(self, ctype, plain, oneofs, msg):
        """`matches(cMessage:)`: whether the C message decodes to exactly this value, read in
        place (see ProtoC+Matching.swift). A map compares as equal only when both are empty:
        false for equal maps only costs the caller a decode, and maps never change on a hot
        path."""
        self.line(f"  @usableFromInline package func matches(cMessage c: UnsafePointer<{ctype}>) -> Bool {{")
        if msg.field:
            self.line(f"    let m = c.pointee")
        for f in plain:
            c = f"m.{f.cmember}"
            if f.present_if:
                self.line(f"    if {f.present_if} {{")
                self.line(f"      guard let h = {f.id}, {self._same_value(f, 'h', c)} else {{ return false }}")
                self.line(f"    }} else if {f.id} != nil {{")
                self.line(f"      return false")
                self.line(f"    }}")
            elif f.map:
                self.line(f"    guard {f.id}.isEmpty && m.{f.cquant} == 0 else {{ return false }}")
            elif f.repeated:
                n = f"m.{f.cquant}"
                if f.kind == "message":
                    self.line(f"    guard ProtoC.sameMessages({f.id}, {c}, {n}) else {{ return false }}")
                else:
                    self.line(f"    guard ProtoC.sameElements({f.id}, {c}, {n}, {{ h, v in {self._same_value(f, 'h', 'v')} }}) else {{ return false }}")
            elif f.kind == "message":
                self.line(f"    guard ProtoC.same({f.id}, {c}) else {{ return false }}")
            elif f.kind == "wrapper":
                wk = WRAPPERS[f.f.type_name][1]
                same = {"double": "ProtoC.same(h, p.pointee.value)", "float": "ProtoC.same(h, p.pointee.value)",
                        "int": "h == p.pointee.value", "bool": "h == (p.pointee.value != 0)",
                        "string": "ProtoC.same(h, p.pointee.value)", "bytes": "ProtoC.same(h, p.pointee.value)"}[wk]
                self.line(f"    if let p = {c} {{")
                self.line(f"      guard let h = {f.id}, {same} else {{ return false }}")
                self.line(f"    }} else if {f.id} != nil {{")
                self.line(f"      return false")
                self.line(f"    }}")
            else:
                self.line(f"    guard {self._same_value(f, f.id, c)} else {{ return false }}")
        for index, members in sorted(oneofs.items()):
            o = msg.oneof_decl[index]
            case = f"m.{o.name.lower()}_case.rawValue"
            self.line(f"    switch {ident(camel(o.name, False))} {{")
            for f in members:
                same = self._same_value(f, "v", "m." + f.cmember)
                self.line(f"    case .{f.id}(let v)?: guard {case} == {f.f.number}, {same} else {{ return false }}")
            known = " || ".join(f"{case} == {f.f.number}" for f in members)
            self.line(f"    case nil: if {known} {{ return false }}")
            self.line(f"    }}")
        self.line(f"    return unknownFields.matches(cMessage: c)")
        self.line(f"  }}")

    def _same_value(self, f, held, expr):
        """A Bool expression: whether the C value `expr` decodes to `held` (one value)."""
        k = f.kind
        if k in ("plain", "string", "bytes"):
            return f"ProtoC.same({held}, {expr})"
        if k == "bool":
            return f"{held} == ({expr} != 0)"
        if k == "enum":
            return f"{held} == {f.swift}(rawValue: Int32(truncatingIfNeeded: {expr}.rawValue))"
        if k == "message":
            return f"ProtoC.sameMember({held}, {expr})"
        raise GenError(f"no single-value comparison for {k}")

    def _read_value(self, f, expr):
        k = f.kind
        if k == "plain":
            return expr
        if k == "bool":
            return f"{expr} != 0"
        if k == "string":
            return f"try ProtoC.string({expr})"
        if k == "bytes":
            return f"ProtoC.bytes({expr})"
        if k == "enum":
            return f"{f.swift}(rawValue: Int32(truncatingIfNeeded: {expr}.rawValue))"
        if k == "message":
            return f"try ProtoC.message({expr}, as: {f.swift}.self)"
        raise GenError(f"no single-value read for {k}")

    def _read(self, f, ind):
        c = f"m.{f.cmember}"
        if f.present_if:
            self.line(f"{ind}if {f.present_if} {{ {f.id} = {self._read_value(f, c)} }}")
        elif f.map:
            entry = self.model.messages[f.f.type_name][1]
            kf, vf = entry.field[0], entry.field[1]
            self.line(f"{ind}for entry in UnsafeBufferPointer(start: {c}, count: m.{f.cquant}) {{")
            self.line(f"{ind}  let e = entry!.pointee")
            self.line(f"{ind}  {f.id}[{self._entry_read(kf, 'e.key')}] = {self._entry_read(vf, 'e.value')}")
            self.line(f"{ind}}}")
        elif f.repeated:
            n = f"m.{f.cquant}"
            if f.kind == "message":
                self.line(f"{ind}{f.id} = try ProtoC.messages({c}, {n}, as: {f.swift}.self)")
            elif f.kind == "plain":
                self.line(f"{ind}{f.id} = ProtoC.scalars({c}, {n})")
            else:
                self.line(f"{ind}{f.id} = try ProtoC.map({c}, {n}) {{ v throws(ProtoDecodingError) in {self._read_value(f, 'v')} }}")
        elif f.kind == "message":
            self.line(f"{ind}if let p = {c} {{ {f.id} = try {f.swift}(cMessage: p) }}")
        elif f.kind == "wrapper":
            wk = WRAPPERS[f.f.type_name][1]
            val = {"double": "p.pointee.value", "float": "p.pointee.value", "int": "p.pointee.value", "bool": "p.pointee.value != 0",
                   "string": "try ProtoC.string(p.pointee.value)", "bytes": "ProtoC.bytes(p.pointee.value)"}[wk]
            self.line(f"{ind}if let p = {c} {{ {f.id} = {val} }}")
        else:
            self.line(f"{ind}{f.id} = {self._read_value(f, c)}")

    def _entry_read(self, pf, expr):
        if pf.type == F.TYPE_MESSAGE:
            return f"try {expr}.map {{ p throws(ProtoDecodingError) in try {self.model.swift[pf.type_name]}(cMessage: p) }} ?? {self.model.swift[pf.type_name]}()"
        if pf.type == F.TYPE_ENUM:
            return f"{self.model.swift[pf.type_name]}(rawValue: Int32(truncatingIfNeeded: {expr}.rawValue))"
        kind = SCALARS[pf.type][2]
        return {"plain": expr, "bool": f"{expr} != 0", "string": f"try ProtoC.string({expr})",
                "bytes": f"ProtoC.bytes({expr})"}[kind]

    def _write_value(self, f, v, oneof=False):
        k = f.kind
        if k == "plain":
            return v
        if k == "bool":
            return f"{v} ? 1 : 0"
        if k == "string":
            return f"arena.cString({v})"
        if k == "bytes":
            return f"arena.binary({v})"
        if k == "enum":
            return f".init(rawValue: .init(truncatingIfNeeded: {v}.rawValue))"
        if k == "message":
            return f"arena.message({v})"
        raise GenError(f"no single-value write for {k}")

    def _write(self, f, ind):
        c = f"c.pointee.{f.cmember}"
        if f.present_if:
            self.line(f"{ind}if let v = {f.id} {{")
            if f.mark_present:
                self.line(f"{ind}  {f.mark_present}")
            self.line(f"{ind}  {c} = {self._write_value(f, 'v')}")
            self.line(f"{ind}}}")
        elif f.map:
            entry_full = f.f.type_name
            entry_lower, entry_ctype = self.cnames.message(entry_full[1:])
            self.entry_accessors.append(entry_lower)
            entry = self.model.messages[entry_full][1]
            kf, vf = entry.field[0], entry.field[1]
            self.line(f"{ind}if !{f.id}.isEmpty {{")
            self.line(f"{ind}  c.pointee.{f.cquant} = {f.id}.count")
            self.line(f"{ind}  {c} = arena.mapEntries(")
            self.line(f"{ind}    {f.id}, descriptor: {ACCESSOR_PREFIX}{entry_lower}(), as: {entry_ctype}.self")
            self.line(f"{ind}  ) {{ key, value, e in")
            self.line(f"{ind}    e.pointee.key = {self._entry_write(kf, 'key')}")
            self.line(f"{ind}    e.pointee.value = {self._entry_write(vf, 'value')}")
            self.line(f"{ind}  }}")
            self.line(f"{ind}}}")
        elif f.repeated:
            self.line(f"{ind}if !{f.id}.isEmpty {{")
            self.line(f"{ind}  c.pointee.{f.cquant} = {f.id}.count")
            if f.kind == "message":
                self.line(f"{ind}  {c} = arena.messages({f.id})")
            elif f.kind == "plain":
                self.line(f"{ind}  {c} = arena.copy({f.id})")
            else:
                self.line(f"{ind}  {c} = arena.map({f.id}) {{ v in {self._write_value(f, 'v')} }}")
            self.line(f"{ind}}}")
        elif f.kind == "message":
            self.line(f"{ind}if let v = {f.id} {{ {c} = arena.message(v) }}")
        elif f.kind == "wrapper":
            wrapper = self.model.swift[f.f.type_name]
            self.line(f"{ind}if let v = {f.id} {{")
            self.line(f"{ind}  var wrapper = {wrapper}()")
            self.line(f"{ind}  wrapper.value = v")
            self.line(f"{ind}  {c} = arena.message(wrapper)")
            self.line(f"{ind}}}")
        elif f.kind in ("string", "bytes"):
            self.line(f"{ind}if !{f.id}.isEmpty {{ {c} = {self._write_value(f, f.id)} }}")
        else:
            self.line(f"{ind}{c} = {self._write_value(f, f.id)}")

    def _entry_write(self, pf, v):
        if pf.type == F.TYPE_MESSAGE:
            return f"arena.message({v})"
        if pf.type == F.TYPE_ENUM:
            return f".init(rawValue: .init(truncatingIfNeeded: {v}.rawValue))"
        kind = SCALARS[pf.type][2]
        return {"plain": v, "bool": f"{v} ? 1 : 0", "string": f"arena.cString({v})",
                "bytes": f"arena.binary({v})"}[kind]


# protoc-c's descriptors are `extern const`, which Swift cannot take the address of; the
# umbrella header of each C target has a function per message returning it, named this.
ACCESSOR_PREFIX = "proto_descriptor__"

HEADER = """\
// DO NOT EDIT. Generated by CodeGen/generate from {source}.
// Regenerate with `CodeGen/generate`; CodeGen/check fails when this file is stale.
"""


def swift_file_name(proto_name):
    return proto_name[: -len(".proto")].replace("/", "_") + ".pb.swift"


def module_of(fd):
    if fd.name in FILE_MODULES:
        return FILE_MODULES[fd.name]
    if fd.package not in MODULES:
        raise GenError(f"{fd.name}: package {fd.package!r} has no module in swiftgen.py")
    return MODULES[fd.package]


def all_modules():
    return set(MODULES.values()) | set(FILE_MODULES.values())


def generate(fds, c_dir, sources, targets):
    model = Model(fds)
    cnames = CNames(c_dir)
    wanted = set(targets)
    by_name = {fd.name: fd for fd in fds.file}
    modules = sorted(all_modules(), key=lambda m: (m != RUNTIME, m))
    # Per module: Swift file name -> text, descriptor accessors, descriptor names (in the set's
    # order: protoc lists a file after the files it imports), its .proto files.
    swift = {m: {} for m in modules}
    accessors = {m: [] for m in modules}
    descriptors = {m: [] for m in modules}
    protos = {m: [] for m in modules}
    for fd in fds.file:
        if fd.name not in wanted:
            continue
        module = module_of(fd)
        for dep in fd.dependency:
            if module_of(by_name[dep]) not in (module, RUNTIME):
                raise GenError(f"{fd.name} ({module}) imports {dep}, which is neither in {module} "
                               f"nor in {RUNTIME}")
        protos[module].append(fd.name)
        w = SwiftWriter(model, cnames)
        w.line(HEADER.format(source=fd.name).rstrip("\n"))
        w.line()
        if fd.message_type:
            # Public, though no user sees a C type: the bridges' witnesses name protobuf-c's
            # types and are @usableFromInline, as the runtime's @inlinable helpers, inlined
            # here, call them (CBridgedMessage).
            w.line("public import CProtobufC")
            w.line(f"public import {module}C")
        if module != RUNTIME:
            # Public when a message or service of the file conforms to or names a runtime type.
            access = "public" if fd.message_type or fd.service else "internal"
            w.line(f"{access} import {RUNTIME}")
        ns = NAMESPACES[fd.package]
        for i, e in enumerate(fd.enum_type):
            w.line()
            w.line(f"extension {ns} {{")
            w.enum(fd, e, (5, i), "  ")
            w.line("}")
        for m in fd.message_type:
            w.line()
            w.line(f"extension {ns} {{")
            w.message(f".{fd.package}.{m.name}", "  ")
            w.line("}")
        for bridge in w.bridges:
            w.line()
            w.bridge(*bridge)
            accessors[module].append(bridge[1])
        accessors[module] += w.entry_accessors
        for s in fd.service:
            w.line()
            service(w, model, fd, s, ns)
        w.line()
        file_descriptor(w, fd)
        descriptors[module].append(descriptor_name(fd.name))
        swift[module][swift_file_name(fd.name)] = "\n".join(w.out) + "\n"

    for module in modules:
        if not protos[module]:
            continue
        ns_lines = [HEADER.format(source="the proto packages").rstrip("\n"), ""]
        if module != RUNTIME:
            ns_lines.append(f"// The messages are used through the runtime ({RUNTIME}.ProtoMessage,")
            ns_lines.append("// serializedBytes(), the well-known types): importing this module is enough.")
            ns_lines.append(f"@_exported public import {RUNTIME}")
            ns_lines.append("")
        for package, ns in sorted(NAMESPACES.items(), key=lambda kv: kv[1]):
            if MODULES.get(package) != module:
                continue
            ns_lines.append(f"/// Messages, enums and services of the proto package `{package}`.")
            ns_lines.append(f"public enum {ns} {{}}")
            ns_lines.append("")
        swift[module]["Namespaces.pb.swift"] = "\n".join(ns_lines)
        swift[module]["FileDescriptors.pb.swift"] = descriptor_index(module, descriptors[module])
        write_swift(os.path.join(sources, module, "Generated"), swift[module])
        write_c_target(os.path.join(sources, module + "C"), module + "C", c_dir, protos[module],
                       accessors[module])


def write_swift(out_dir, files):
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):
        if old.endswith(".swift") and old not in files:
            os.remove(os.path.join(out_dir, old))
    for name, text in files.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)


def write_c_target(target, c_module, c_dir, protos, accessors):
    """protoc-c's files of `protos`, each marked generated (sources at the top, headers under
    include/), an umbrella header and a module map of our own: SwiftPM's umbrella-header rule
    does not allow include/ to have the subfolders that protoc-c's #include lines need."""
    shutil.rmtree(target, ignore_errors=True)
    headers = []
    for proto in protos:
        stem = proto[: -len(".proto")]
        for suffix, dest in ((".pb-c.c", stem + ".pb-c.c"), (".pb-c.h", "include/" + stem + ".pb-c.h")):
            path = os.path.join(target, dest)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(os.path.join(c_dir, stem + suffix)) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write("/* Regenerate with CodeGen/generate; CodeGen/check fails when this file is stale. */\n")
                f.write(text)
        headers.append(stem + ".pb-c.h")
    headers.sort()
    guard = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", c_module).upper() + "_H"
    h = [f"/* DO NOT EDIT. Generated by CodeGen/generate: the protobuf-c headers of {c_module}. */",
         f"#ifndef {guard}", f"#define {guard}", "",
         "/* Deprecated proto fields are still on the wire and the Swift layer must copy them; the",
         "   deprecation attribute would warn on each copy (the Swift docs carry the note instead). */",
         "#define PROTOBUF_C__NO_DEPRECATED 1", ""]
    h += [f'#include "{p}"' for p in headers]
    h += ["", "/* Swift cannot take the address of a C `extern const`; these return protoc-c's descriptors. */"]
    for lower in sorted(accessors):
        h.append(f"static inline const ProtobufCMessageDescriptor *{ACCESSOR_PREFIX}{lower}(void) {{")
        h.append(f"  return &{lower}__descriptor;")
        h.append("}")
    h += ["", "#endif", ""]
    with open(os.path.join(target, "include", c_module + ".h"), "w") as f:
        f.write("\n".join(h))
    # Every header is named, so that another module's #include of one of them is an import
    # of this module, not a second copy of its types.
    m = ["// DO NOT EDIT. Generated by CodeGen/generate.", f"module {c_module} {{",
         f'  header "{c_module}.h"']
    m += [f'  header "{p}"' for p in headers]
    m += ["  export *", "}", ""]
    with open(os.path.join(target, "include", "module.modulemap"), "w") as f:
        f.write("\n".join(m))


def service(w, model, fd, s, ns):
    si = list(fd.service).index(s)
    for l in doc(model.comment(fd, (6, si)), ""):
        w.line(l)
    w.line(f"extension {ns} {{")
    w.line(f"  /// The methods of `{fd.package}.{s.name}`, for calls through GRPCWire.")
    w.line(f"  public enum {s.name} {{")
    for mi, meth in enumerate(s.method):
        kind = {(False, False): "unary", (False, True): "serverStreaming",
                (True, False): "clientStreaming", (True, True): "bidirectionalStreaming"}[
            (meth.client_streaming, meth.server_streaming)]
        for l in doc(model.comment(fd, (6, si, 2, mi)), "    "):
            w.line(l)
        req, resp = model.swift[meth.input_type], model.swift[meth.output_type]
        w.line(f"    public static let {ident(camel_method(meth.name))} = ProtoMethod<{req}, {resp}>(")
        w.line(f'      path: "/{fd.package}.{s.name}/{meth.name}", kind: .{kind})')
    w.line("  }")
    w.line("}")


# MARK: file descriptors, for gRPC server reflection

# Characters of base64 per line of a descriptor's literal (a line then fits in 100 columns).
BASE64_LINE = 88


def descriptor_name(proto_name):
    return camel(proto_name[: -len(".proto")].replace("/", "_").replace("-", "_").replace(".", "_"), False)


def declared_symbols(fd):
    """Every fully qualified name (no leading dot) `fd` declares, as a descriptor pool resolves
    them: messages and enums (nested ones too), fields, oneofs, enum values (beside their enum,
    in the scope that holds it, as protobuf scopes them), services, methods and extensions."""
    names = []

    def scope(parent, name):
        return f"{parent}.{name}" if parent else name

    def enum(parent, e):
        names.append(scope(parent, e.name))
        names.extend(scope(parent, v.name) for v in e.value)

    def message(parent, m):
        full = scope(parent, m.name)
        names.append(full)
        names.extend(scope(full, f.name) for f in m.field)
        names.extend(scope(full, o.name) for o in m.oneof_decl)
        names.extend(scope(full, x.name) for x in m.extension)
        for n in m.nested_type:
            message(full, n)
        for e in m.enum_type:
            enum(full, e)

    for m in fd.message_type:
        message(fd.package, m)
    for e in fd.enum_type:
        enum(fd.package, e)
    for x in fd.extension:
        names.append(scope(fd.package, x.name))
    for s in fd.service:
        names.append(scope(fd.package, s.name))
        names.extend(scope(scope(fd.package, s.name), meth.name) for meth in s.method)
    return names


def declared_extensions(fd):
    """(extended message, field number) of every extension `fd` declares, nested ones too."""
    found = [(x.extendee.lstrip("."), x.number) for x in fd.extension]

    def message(m):
        found.extend((x.extendee.lstrip("."), x.number) for x in m.extension)
        for n in m.nested_type:
            message(n)

    for m in fd.message_type:
        message(m)
    return found


def file_descriptor(w, fd):
    """The file's serialized FileDescriptorProto and its index entries, as a ProtoFileDescriptor.

    Source code info (comments, spans) is left out: reflection clients do not need it and it
    would triple the size. The bytes are a base64 string literal, decoded when asked for: the
    compiler takes a long string literal at once, but type-checks a byte array literal element
    by element."""
    stripped = type(fd)()
    stripped.CopyFrom(fd)
    stripped.ClearField("source_code_info")
    encoded = base64.b64encode(stripped.SerializeToString(deterministic=True)).decode("ascii")
    chunks = [encoded[i : i + BASE64_LINE] for i in range(0, len(encoded), BASE64_LINE)] or [""]
    w.line("extension ProtoFileDescriptor {")
    w.line(f"  /// `{fd.name}`, as protoc compiled it; one of "
           f"``ProtoFileDescriptor/{descriptor_list_name(module_of(fd))}``.")
    w.line(f"  static let {descriptor_name(fd.name)} = ProtoFileDescriptor(")
    w.line(f'    name: "{fd.name}",')
    deps = ", ".join(f'"{d}"' for d in fd.dependency)
    w.line(f"    dependencies: [{deps}],")
    extensions = ", ".join(f'.init(extendee: "{e}", number: {n})' for e, n in declared_extensions(fd))
    w.line(f"    extensions: [{extensions}],")
    w.line('    symbols: """')
    for name in declared_symbols(fd):
        w.line(f"      {name}")
    w.line('      """,')
    w.line('    base64: """')
    for i, chunk in enumerate(chunks):
        w.line(f"      {chunk}" + ("\\" if i < len(chunks) - 1 else ""))
    w.line('      """)')
    w.line("}")


def descriptor_list_name(module):
    """`FleetProtos` -> `fleetProtos`, `GRPCTestingProtos` -> `grpcTestingProtos`."""
    head = re.match(r"[A-Z]+(?=[A-Z][a-z]|$)|[A-Z]", module).group(0)
    return head.lower() + module[len(head):]


def descriptor_index(module, names):
    out = [HEADER.format(source="every .proto file of " + module).rstrip("\n"), ""]
    out.append("extension ProtoFileDescriptor {")
    out.append(f"  /// Every .proto file {module} was generated from, each after the files it imports.")
    out.append(f"  public static let {descriptor_list_name(module)}: [ProtoFileDescriptor] = [")
    out.extend(f"    .{name}," for name in names)
    out.append("  ]")
    out.append("}")
    return "\n".join(out) + "\n"


def camel_method(name):
    return name[0].lower() + name[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--list-outputs", action="store_true",
                    help="print the folders this script writes (relative to the package) and exit")
    ap.add_argument("--list-namespaces", action="store_true",
                    help="print NAMESPACES as grpc-wire-gen's --namespace=PACKAGE=Name and exit")
    ap.add_argument("--descriptor-set")
    ap.add_argument("--c-dir", help="where protoc-c wrote *.pb-c.[ch]")
    ap.add_argument("--sources", help="the package's Sources folder")
    ap.add_argument("protos", nargs="*", help="proto file names (as protoc saw them) to generate")
    a = ap.parse_args()
    if a.list_outputs:
        for module in sorted(all_modules()):
            print(f"Sources/{module}C")
            print(f"Sources/{module}/Generated")
        return
    if a.list_namespaces:
        for package, ns in sorted(NAMESPACES.items()):
            print(f"--namespace={package}={ns}")
        return
    if not (a.descriptor_set and a.c_dir and a.sources and a.protos):
        ap.error("--descriptor-set, --c-dir, --sources and the protos are required")
    fds = pb.FileDescriptorSet()
    with open(a.descriptor_set, "rb") as f:
        fds.ParseFromString(f.read())
    try:
        generate(fds, a.c_dir, a.sources, a.protos)
    except GenError as e:
        print(f"swiftgen: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
