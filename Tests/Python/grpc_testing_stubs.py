"""The `grpc.testing` messages and services, built at run time from Debian's grpc-proto.

The interop protos (test.proto, messages.proto, empty.proto) are not on PyPI, so
this module compiles them from /usr/share/grpc-proto with grpcio-tools' bundled
protoc (`grpc_tools.protoc`, so the code matches the installed protobuf runtime
and does not depend on the system protoc) into a FileDescriptorSet in a temp
directory, loads that into a private DescriptorPool and builds the message
classes with `message_factory`.

Why no generated `_pb2` modules: protoc names them after the .proto path, so
they would be `grpc/testing/test_pb2.py` and would import each other as
`from grpc.testing import empty_pb2`. `grpc` is grpcio's own package, so those
imports either fail or need `grpc.__path__` patched. A descriptor set has no
module names at all, and a private pool cannot clash with any other `_pb2`
module loaded in the same process (the default pool is shared). The service
side needs no generated code either: `SERVICES` describes every method of
every service in test.proto (path, request/response classes, streaming kind),
and `generic_handler` / `client_method` turn that into grpcio handlers and
client callables with explicit serializers.

Usage:

    import grpc_testing_stubs as stubs
    m = stubs.messages()              # m.SimpleRequest, m.Payload, m.Empty, ...
    stubs.SERVICES["grpc.testing.TestService"]["UnaryCall"].path
    server.add_generic_rpc_handlers((stubs.generic_handler("grpc.testing.TestService", impl),))
    call = stubs.client_method(channel, "grpc.testing.TestService", "UnaryCall")
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

GRPC_PROTO_DIR = Path("/usr/share/grpc-proto")  # Debian's grpc-proto package
SOURCES = ("grpc/testing/empty.proto", "grpc/testing/messages.proto", "grpc/testing/test.proto")


class SetupError(Exception):
    """The stubs cannot be built: a package, protoc or the protos are missing."""


@dataclass(frozen=True)
class Method:
    """One RPC of a `grpc.testing` service."""

    service: str  # full name, e.g. grpc.testing.TestService
    name: str  # e.g. UnaryCall
    request: type
    response: type
    client_streaming: bool
    server_streaming: bool

    @property
    def path(self) -> str:
        """The HTTP/2 `:path`, e.g. /grpc.testing.TestService/UnaryCall."""
        return f"/{self.service}/{self.name}"

    @property
    def kind(self) -> str:
        """unary_unary, unary_stream, stream_unary or stream_stream (grpcio's names)."""
        return ("stream" if self.client_streaming else "unary") + "_" + (
            "stream" if self.server_streaming else "unary"
        )


def _descriptor_set() -> bytes:
    try:
        from grpc_tools import protoc
    except ImportError as error:
        raise SetupError(f"grpcio-tools is not installed ({error}); use the venv") from error
    for source in SOURCES:
        if not (GRPC_PROTO_DIR / source).is_file():
            raise SetupError(f"{GRPC_PROTO_DIR / source} is missing; apt-get install grpc-proto")
    with tempfile.TemporaryDirectory(prefix="grpc_testing_stubs.") as tmp:
        out = Path(tmp) / "grpc_testing.pb"
        args = [
            "grpc_tools.protoc",
            f"-I{GRPC_PROTO_DIR}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            *SOURCES,
        ]
        if protoc.main(args) != 0 or not out.is_file():
            raise SetupError("grpc_tools.protoc failed: " + " ".join(args))
        return out.read_bytes()


@functools.cache
def _build() -> tuple[SimpleNamespace, dict[str, dict[str, Method]]]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    files = descriptor_pb2.FileDescriptorSet.FromString(_descriptor_set()).file
    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    classes = message_factory.GetMessages(list(files), pool=pool)
    # Short names (SimpleRequest, ...) for the grpc.testing package.
    short = {
        name.removeprefix("grpc.testing."): cls
        for name, cls in classes.items()
        if name.startswith("grpc.testing.")
    }
    services: dict[str, dict[str, Method]] = {}
    for file in files:
        for service in file.service:
            full = f"{file.package}.{service.name}"
            services[full] = {
                m.name: Method(
                    service=full,
                    name=m.name,
                    request=classes[m.input_type.lstrip(".")],
                    response=classes[m.output_type.lstrip(".")],
                    client_streaming=m.client_streaming,
                    server_streaming=m.server_streaming,
                )
                for m in service.method
            }
    return SimpleNamespace(**short), services


def messages() -> SimpleNamespace:
    """The message classes of grpc.testing by short name (Empty, SimpleRequest, ...)."""
    return _build()[0]


def services() -> dict[str, dict[str, Method]]:
    """Every service of test.proto: {full service name: {method name: Method}}."""
    return _build()[1]


def generic_handler(service: str, implementation: Any, only: set[str] | None = None):
    """A grpcio generic handler that serves `service` with `implementation`'s methods.

    A method is served when `implementation` has an attribute of its name (and it is in
    `only`, when given); the others are left out, so grpcio answers them UNIMPLEMENTED.
    """
    import grpc

    factories = {
        "unary_unary": grpc.unary_unary_rpc_method_handler,
        "unary_stream": grpc.unary_stream_rpc_method_handler,
        "stream_unary": grpc.stream_unary_rpc_method_handler,
        "stream_stream": grpc.stream_stream_rpc_method_handler,
    }
    handlers = {}
    for name, method in services()[service].items():
        function = getattr(implementation, name, None)
        if function is None or (only is not None and name not in only):
            continue
        handlers[name] = factories[method.kind](
            function,
            request_deserializer=method.request.FromString,
            response_serializer=method.response.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(service, handlers)


def client_method(channel, service: str, name: str) -> Callable:
    """A grpcio multi-callable for one method, e.g. `client_method(ch, svc, "UnaryCall")`."""
    method = services()[service][name]
    factory = getattr(channel, method.kind)
    return factory(
        method.path,
        request_serializer=method.request.SerializeToString,
        response_deserializer=method.response.FromString,
    )
