#!/usr/bin/env python3
"""A grpcio (asyncio) server whose calls fail their first N attempts: the peer of the service
config's retry, hedging and throttling tests.

Service `fleet.test.Retry`, messages as raw bytes (the response echoes the request):

* `Unary` (unary) and `Stream` (server streaming: the request echoed three times, or once
  and then the failure with `x-retry-fail-after-first`).
* `Collect` (client streaming): the requests joined; prints `EVENT collected` with their
  sizes and texts once they ended, then fails (or waits) as the hooks say.
* `Chat` (bidirectional): reads the requests (a failing attempt only `x-retry-read` of
  them, if set), prints `EVENT received`, fails (or waits) as the hooks say, else echoes every
  request and ends OK. With `x-retry-fail-after-first` it echoes the first request as soon
  as it arrives, then fails.

Per-call request metadata (a call is the set of attempts that share `x-retry-call`):

  x-retry-call: <id>              names the call; attempts are counted per id, from 1.
  x-retry-fail: <N>               attempts 1..N fail (default 0: none fails).
  x-retry-code: <number>          the status they fail with (default 14, UNAVAILABLE).
  x-retry-pushback-ms: <text>     failing attempts send `grpc-retry-pushback-ms: <text>`.
  x-retry-delay-ms: <ms>          every attempt waits this long before it answers (failing
                                  or not), so that hedged attempts overlap.
  x-retry-succeed-attempt: <k>    with a delay: attempt k answers at once, the others wait.
  x-retry-fail-after-first: 1     `Stream`, `Chat`: the failure comes after one response
                                  message.
  x-retry-read: <k>               `Chat`: a failing attempt reads only k requests.

Prints `LISTENING <port>`, then EVENT lines:

  EVENT attempt <path> call=<id> n=<k> previous=<grpc-previous-rpc-attempts or -> t=<ns>
  EVENT answered <path> call=<id> n=<k> code=<status number> t=<ns>
  EVENT cancelled <path> call=<id> n=<k> t=<ns>     the client cancelled that attempt
  EVENT collected <path> call=<id> n=<k> sizes=<a,b,...> texts=<a,b,...>
                                                    `Collect`'s requests, when they ended
  EVENT received <path> call=<id> n=<k> texts=<a,b,...>   `Chat`'s requests, as read

`t` is time.monotonic_ns() when the event happened.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import grpc

import peer_common as pc

SERVICE = "fleet.test.Retry"


class Attempts:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def next(self, call: str) -> int:
        self.counts[call] = self.counts.get(call, 0) + 1
        return self.counts[call]


def header(metadata, name: str) -> str | None:
    for key, value in metadata:
        if key == name:
            return value if isinstance(value, str) else value.decode()
    return None


class RetryService:
    def __init__(self) -> None:
        self.attempts = Attempts()

    def begin(self, path: str, context):
        metadata = context.invocation_metadata() or ()
        call = header(metadata, "x-retry-call") or "-"
        n = self.attempts.next(call)
        pc.emit("attempt", path, call=call, n=n,
                previous=header(metadata, "grpc-previous-rpc-attempts") or "-",
                t=time.monotonic_ns())
        return metadata, call, n

    async def fail_or_wait(self, path: str, context, metadata, call: str, n: int):
        """Waits as asked, then aborts the attempt if it is one of those that fail."""
        delay = int(header(metadata, "x-retry-delay-ms") or "0")
        succeed = header(metadata, "x-retry-succeed-attempt")
        if delay and not (succeed is not None and int(succeed) == n):
            await asyncio.sleep(delay / 1000)
        failing = int(header(metadata, "x-retry-fail") or "0")
        if n <= failing:
            code = int(header(metadata, "x-retry-code") or "14")
            trailing = ()
            pushback = header(metadata, "x-retry-pushback-ms")
            if pushback is not None:
                trailing = (("grpc-retry-pushback-ms", pushback),)
            pc.emit("answered", path, call=call, n=n, code=code, t=time.monotonic_ns())
            await context.abort(status_code(code), f"attempt {n} fails as asked",
                                trailing_metadata=trailing)

    async def answer(self, path: str, context, metadata, call: str, n: int):
        """Fails or waits as asked (`cancelled` if the client cancels meanwhile), else prints
        that the attempt is answered OK."""
        try:
            await self.fail_or_wait(path, context, metadata, call, n)
        except asyncio.CancelledError:
            pc.emit("cancelled", path, call=call, n=n, t=time.monotonic_ns())
            raise
        pc.emit("answered", path, call=call, n=n, code=0, t=time.monotonic_ns())

    async def unary(self, request: bytes, context) -> bytes:
        path = f"/{SERVICE}/Unary"
        metadata, call, n = self.begin(path, context)
        await self.answer(path, context, metadata, call, n)
        return request

    async def stream(self, request: bytes, context):
        path = f"/{SERVICE}/Stream"
        metadata, call, n = self.begin(path, context)
        try:
            if header(metadata, "x-retry-fail-after-first") == "1":
                yield request
                await self.fail_or_wait(path, context, metadata, call, n)
                return
            await self.fail_or_wait(path, context, metadata, call, n)
            for _ in range(3):
                yield request
        except asyncio.CancelledError:
            pc.emit("cancelled", path, call=call, n=n, t=time.monotonic_ns())
            raise
        pc.emit("answered", path, call=call, n=n, code=0, t=time.monotonic_ns())


    async def collect(self, requests, context) -> bytes:
        path = f"/{SERVICE}/Collect"
        metadata, call, n = self.begin(path, context)
        received = []
        try:
            async for request in requests:
                received.append(request)
        except asyncio.CancelledError:
            pc.emit("cancelled", path, call=call, n=n, t=time.monotonic_ns())
            raise
        except BaseException as error:
            pc.emit("failed", path, call=call, n=n, error=type(error).__name__,
                    cancelled=context.cancelled())
            raise
        pc.emit("collected", path, call=call, n=n, cancelled=context.cancelled(),
                sizes=",".join(str(len(r)) for r in received), texts=texts(received))
        await self.answer(path, context, metadata, call, n)
        return b"".join(received)

    async def chat(self, requests, context):
        path = f"/{SERVICE}/Chat"
        metadata, call, n = self.begin(path, context)
        failing = n <= int(header(metadata, "x-retry-fail") or "0")
        read = int(header(metadata, "x-retry-read") or "0") if failing else 0
        echo_first = header(metadata, "x-retry-fail-after-first") == "1"
        received = []
        try:
            async for request in requests:
                received.append(request)
                if echo_first and len(received) == 1:
                    yield request
                if read and len(received) >= read:
                    break
            pc.emit("received", path, call=call, n=n, texts=texts(received))
            await self.fail_or_wait(path, context, metadata, call, n)
            for request in received:
                yield request
        except asyncio.CancelledError:
            pc.emit("cancelled", path, call=call, n=n, t=time.monotonic_ns())
            raise
        pc.emit("answered", path, call=call, n=n, code=0, t=time.monotonic_ns())


def texts(messages) -> str:
    """The messages as text, comma-separated (the tests send short ASCII words)."""
    return ",".join(m.decode("ascii", errors="replace") for m in messages) or "-"


def status_code(number: int) -> grpc.StatusCode:
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code
    raise ValueError(f"no status code {number}")


async def serve(args) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    service = RetryService()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {
        "Unary": grpc.unary_unary_rpc_method_handler(service.unary),
        "Stream": grpc.unary_stream_rpc_method_handler(service.stream),
        "Collect": grpc.stream_unary_rpc_method_handler(service.collect),
        "Chat": grpc.stream_stream_rpc_method_handler(service.chat),
    }),))
    port = server.add_insecure_port(f"{args.host}:{args.port}")
    if port == 0:
        raise SystemExit("retry_server: could not bind the port")
    await server.start()
    await pc.serve_until_stopped(server, port)


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    asyncio.run(serve(parser.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
