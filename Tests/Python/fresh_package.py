"""The fresh-package test: what a new user of FleetConsumer does with a .proto of their own.

In a temporary folder it makes a package `Shop` depending on this one by path (named
`FleetConsumer`, as the printed targets call it, whatever this checkout's folder is called;
with the same path and identity as this package's own build, so that in this package's
`.build`, after `swift test`, none of its modules is compiled again), with the protos of
Tests/FreshPackage/Protos (nested messages, a oneof, maps, repeated and bytes fields, enums,
Timestamp, Duration and wrappers, a file importing another, an RPC of each kind) and the
executable of Tests/FreshPackage/Sources/ShopApp. Then, as the user would:

1. runs `swift package --allow-writing-to-package-directory generate-grpc-wire ...` with a
   manifest that has no targets yet;
2. pastes the lines it printed from `// generate-grpc-wire: targets` to
   `// generate-grpc-wire: end`, exactly as printed, into Package.swift
   (Tests/FreshPackage/Package.swift.in), and checks that running the command again
   changes no file (neither content nor modification time);
3. builds ShopApp, and runs both directions against grpcio (shop_peer.py, whose `_pb2`
   modules grpcio-tools generates at start-up): the generated client calls grpcio's server,
   grpcio's client calls the generated server, every RPC kind, every message compared with
   the samples by the side receiving it.

All of it twice: with `--messages swift-protobuf`, where the package also depends on swift-protobuf and writes the
messages with its protoc-gen-swift (`protoc --swift_out`) beside the stubs, and with
`--messages protobuf-c` (our own messages and C target). ShopApp's code is
the same for both; only its Samples.swift (Tests/FreshPackage/Samples/<messages>/) differs.

Peers listen on 127.0.0.1 on ports the OS picks and are stopped by their PID; every wait
has a timeout. Exit status 0 when all passed, 1 otherwise (a missing peer or tool fails).

    fresh_package.py [--messages protobuf-c|swift-protobuf]... [--scratch-path DIR] [--keep]

The fresh package builds in this package's `.build` unless `--scratch-path` says otherwise:
llbuild then skips every command of FleetConsumer's modules and their dependencies, whose
inputs and command lines are those `swift test` just ran (1.4 min in all instead of 6 on our
shared 2-core machine). It takes that folder's lock, so it cannot run inside `swift test`;
and this package's next build there fetches again and recompiles the dependencies the fresh
package does not use (swift-protobuf, swift-prometheus, hdrhistogram-swift; about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURE = ROOT / "Tests" / "FreshPackage"
PEER = Path(__file__).resolve().parent / "shop_peer.py"
COMMAND = [
    "swift", "package", "--allow-writing-to-package-directory", "generate-grpc-wire",
    "--module", "ShopProtos", "--namespace", "acme.shop.v1=Shop", "-I", "Protos",
    "Protos/acme/catalog/v1/catalog.proto", "Protos/acme/shop/v1/order.proto",
]
PASTE = "    // (paste generate-grpc-wire's targets here)\n"
BEGIN, END = "// generate-grpc-wire: targets", "// generate-grpc-wire: end"
RPCS = ("PlaceOrder", "ListOrders", "UploadOrders", "TrackOrders")
# swift-protobuf first: the protobuf-c package does not depend on swift-protobuf, and SwiftPM
# removes the checkout of a dependency the package it builds has not, so after it the
# swift-protobuf package would be checked out and compiled again (4 min here).
MESSAGES = ("swift-protobuf", "protobuf-c")
BUILD_TIMEOUT = 1800  # seconds: a clean debug build of GRPCWire and its dependencies
START_TIMEOUT = 120  # seconds until a server prints LISTENING (grpcio-tools runs first)
CALLS_TIMEOUT = 120  # seconds for one side's four calls
# The peers' calls go to 127.0.0.1: a developer's proxy variables (which SwiftPM may need to
# fetch dependencies) must not send them through a proxy.
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "grpc_proxy", "no_proxy"}
PEER_ENVIRONMENT = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARIABLES}


class Failure(Exception):
    pass


def log(line: str) -> None:
    print(f"fresh-package: {line}", flush=True)


def run(args: list[str], cwd: Path, timeout: float, what: str, env=None) -> str:
    """Runs `args`, returns its stdout; its stderr passes through. Fails on a non-zero exit."""
    try:
        done = subprocess.run(
            args, cwd=cwd, stdout=subprocess.PIPE, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired as error:
        raise Failure(f"{what}: no end after {timeout:.0f} s") from error
    if done.returncode != 0:
        raise Failure(f"{what} failed (exit {done.returncode}):\n{done.stdout}")
    return done.stdout


def printed_targets(output: str) -> str:
    """The lines from BEGIN to END of the command's stdout, as printed."""
    lines = output.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\n") == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise Failure(f"generate-grpc-wire printed no single {BEGIN!r} ... {END!r} block:\n{output}")
    block = "".join(lines[starts[0] : ends[0] + 1])
    return block if block.endswith("\n") else block + "\n"


def check_headers(shop: Path, messages: str) -> None:
    """Every file generate-grpc-wire wrote names, in its header, the command as the user ran
    it (not this repository's CodeGen/generate)."""
    plugin_arguments = COMMAND[4:] + ["--messages", messages]
    command = " ".join(COMMAND[:4] + plugin_arguments)
    swift = [
        "// DO NOT EDIT. Generated by swift package generate-grpc-wire",
        f"// Regenerate with `{command}`.",
    ]
    generated = shop / "Sources" / "ShopProtos" / "Generated"
    files = {path: swift for path in generated.glob("*.grpc.swift")}
    if messages == "protobuf-c":
        files |= {path: swift for path in generated.glob("*.pb.swift")}
        files |= {path: [f"/* Regenerate with {command}. */"]
                  for path in (shop / "Sources" / "ShopProtosC").rglob("*.pb-c.[ch]")}
    if not files:
        raise Failure(f"{messages}: generate-grpc-wire wrote no file to check the header of")
    for path, expected in sorted(files.items()):
        head = path.read_text().splitlines()[: len(expected)]
        if [line[: len(want)] for line, want in zip(head, expected)] != expected or len(head) < len(expected):
            raise Failure(f"{messages}: {path.relative_to(shop)} begins {head}, not {expected}")
    log(f"PASSED {messages}: the {len(files)} generated files' headers name {command!r}")


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder`: its bytes and modification time."""
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def wait_listening(process: subprocess.Popen, what: str) -> int:
    """The port of `process`'s `LISTENING <port>` line, read within START_TIMEOUT."""
    import selectors

    deadline = time.monotonic() + START_TIMEOUT
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    while (left := deadline - time.monotonic()) > 0:
        if not selector.select(timeout=left):
            break
        line = process.stdout.readline()
        if not line:
            raise Failure(f"{what} ended before listening (exit {process.wait(timeout=10)})")
        match = re.fullmatch(r"LISTENING (\d+)\n", line)
        if match:
            return int(match.group(1))
    raise Failure(f"{what} printed no LISTENING line within {START_TIMEOUT} s")


def stop(process: subprocess.Popen) -> None:
    """Ends a server we started, by its PID: its stdin closed, then SIGTERM, then SIGKILL."""
    if process.stdin:
        process.stdin.close()
    for signal_it in (lambda: None, process.terminate, process.kill):
        signal_it()
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def check_calls(client: list[str], server: list[str], cwd: Path, what: str) -> None:
    """Starts `server`, runs `client <port>` against it, and wants a PASSED line per RPC."""
    process = subprocess.Popen(
        server, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=PEER_ENVIRONMENT,
    )
    try:
        port = wait_listening(process, f"{what}: server")
        output = run(client + [str(port)], cwd, CALLS_TIMEOUT, f"{what}: client", PEER_ENVIRONMENT)
    finally:
        stop(process)
    passed = [line for line in output.splitlines() if line.startswith("PASSED ")]
    if passed != [f"PASSED {rpc}" for rpc in RPCS]:
        raise Failure(f"{what}: not every RPC passed:\n{output}")
    for rpc in RPCS:
        log(f"PASSED {what}: {rpc}")


def manifest_of(messages: str) -> str:
    """Package.swift.in for `messages`: with swift-protobuf, the package and ShopApp also
    depend on swift-protobuf, as a user of protoc-gen-swift's messages writes."""
    manifest = (FIXTURE / "Package.swift.in").read_text()
    manifest = manifest.replace('"FLEETCONSUMER_PATH"', json.dumps(str(ROOT)))
    if manifest.count(PASTE) != 1:
        raise Failure(f"Package.swift.in has no single line {PASTE.strip()!r}")
    if messages == "swift-protobuf":
        for old, new in (
            ('path: ' + json.dumps(str(ROOT)) + '),\n',
             'path: ' + json.dumps(str(ROOT)) + '),\n'
             '    .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),\n'),
            ('dependencies: ["ShopProtos", .product(name: "GRPCWire", package: "FleetConsumer")]',
             'dependencies: [\n        "ShopProtos", .product(name: "GRPCWire", package: "FleetConsumer"),\n'
             '        .product(name: "SwiftProtobuf", package: "swift-protobuf"),\n      ]'),
        ):
            if manifest.count(old) != 1:
                raise Failure(f"Package.swift.in has no single {old!r}")
            manifest = manifest.replace(old, new)
    return manifest


def variant(messages: str, shop: Path, scratch: list[str], python: str, timings: list[str]) -> None:
    """The whole user's path for `--messages messages`, in the new package folder `shop`."""
    # `swift build --show-bin-path` would plan the whole build again (25 s here).
    bin_path = Path(scratch[1]) / "debug"
    shutil.copytree(FIXTURE / "Protos", shop / "Protos")
    shutil.copytree(FIXTURE / "Sources", shop / "Sources")
    shutil.copy(FIXTURE / "Samples" / messages / "Samples.swift", shop / "Sources/ShopApp")
    # The versions this package resolved, so the fresh one builds what its tests built.
    if (ROOT / "Package.resolved").is_file():
        shutil.copy(ROOT / "Package.resolved", shop / "Package.resolved")
    manifest = manifest_of(messages)
    # Before generating, the user's manifest has the dependencies and no targets yet.
    head, _, _ = manifest.partition("  targets: [\n")
    (shop / "Package.swift").write_text(head + "  targets: []\n)\n")
    command = COMMAND[:2] + scratch + COMMAND[2:] + ["--messages", messages]

    started = time.monotonic()
    output = run(command, shop, BUILD_TIMEOUT, f"{messages}: generate-grpc-wire")
    if messages == "swift-protobuf":
        # The messages, as such a user writes them: protoc-gen-swift (built from their
        # swift-protobuf dependency) beside the stubs.
        run(["swift", "build", *scratch, "--product", "protoc-gen-swift"], shop, BUILD_TIMEOUT,
            "swift build --product protoc-gen-swift")
        run(["protoc", "-I", "Protos",
             f"--plugin=protoc-gen-swift={bin_path / 'protoc-gen-swift'}",
             "--swift_out=Visibility=Public,FileNaming=PathToUnderscores:Sources/ShopProtos/Generated",
             *COMMAND[-2:]], shop, 120, "protoc --swift_out")
    timings.append(f"{messages}: generate {time.monotonic() - started:.0f} s")
    block = printed_targets(output)
    (shop / "Package.swift").write_text(manifest.replace(PASTE, block))
    log(f"{messages}: generate-grpc-wire wrote Sources/ShopProtos"
        + ("C and Sources/ShopProtos/Generated" if messages == "protobuf-c" else "/Generated"))
    check_headers(shop, messages)

    before = snapshot(shop / "Sources")
    again = run(command, shop, BUILD_TIMEOUT, f"{messages}: generate-grpc-wire again")
    after = snapshot(shop / "Sources")
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    if changed or printed_targets(again) != block:
        raise Failure(f"{messages}: running generate-grpc-wire again changed {changed or 'the printed targets'}")
    log(f"PASSED {messages}: running generate-grpc-wire again changes nothing")

    started = time.monotonic()
    run(["swift", "build", *scratch, "--product", "ShopApp"], shop, BUILD_TIMEOUT, "swift build")
    timings.append(f"{messages}: build {time.monotonic() - started:.0f} s")
    app = str(bin_path / "ShopApp")
    log(f"{messages}: built ShopApp with the pasted targets")

    started = time.monotonic()
    check_calls([app, "client"], [python, str(PEER), "server"], shop,
                f"{messages}: generated client -> grpcio server")
    check_calls([python, str(PEER), "client"], [app, "server"], shop,
                f"{messages}: grpcio client -> generated server")
    timings.append(f"{messages}: calls {time.monotonic() - started:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scratch-path",
        default=str(ROOT / ".build"),
        help="SwiftPM's build folder for the fresh package (default: this package's .build)",
    )
    parser.add_argument(
        "--messages", choices=MESSAGES, action="append",
        help="only this kind of messages (repeatable; default: both)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args()
    python = os.environ.get("FLEET_PYTHON", sys.executable)
    scratch = ["--scratch-path", str(Path(options.scratch_path).resolve())]
    folder = Path(tempfile.mkdtemp(prefix="fresh-package."))
    timings: list[str] = []
    ok = False
    try:
        for messages in options.messages or MESSAGES:
            variant(messages, folder / messages / "Shop", scratch, python, timings)
        ok = True
    except Failure as failure:
        log(f"FAILED {failure}")
    finally:
        log(", ".join(timings) if timings else "no step finished")
        if options.keep or not ok:
            log(f"kept {folder}")
        else:
            shutil.rmtree(folder)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
