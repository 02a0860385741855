"""What the drivers that build a Swift package and call it against grpcio share
(fresh_package.py, route_guide.py): a step run with a timeout, a server started and its
`LISTENING <port>` line read within a timeout, a server stopped by its PID, and the peers'
environment without a developer's proxy variables.
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import time
from pathlib import Path

BUILD_TIMEOUT = 1800  # seconds: a clean debug build of GRPCWire and its dependencies
START_TIMEOUT = 120  # seconds until a server prints LISTENING (grpcio-tools runs first)
CALLS_TIMEOUT = 120  # seconds for one side's calls
STOP_TIMEOUT = 10  # seconds a server has to exit after SIGTERM
# The peers' calls go to 127.0.0.1: a developer's proxy variables (which SwiftPM may need to
# fetch dependencies) must not send them through a proxy.
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "grpc_proxy", "no_proxy"}
PEER_ENVIRONMENT = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARIABLES}
# The lines around the targets generate-grpc-wire prints for Package.swift.
BEGIN, END = "// generate-grpc-wire: targets", "// generate-grpc-wire: end"


class Failure(Exception):
    pass


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


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder`: its bytes and modification time."""
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def start_server(args: list[str], cwd: Path, what: str) -> tuple[subprocess.Popen, int]:
    """Starts `args` (stdin and stdout piped, in PEER_ENVIRONMENT) and returns it with the port
    of its `LISTENING <port>` line; stops it and fails when none comes within START_TIMEOUT."""
    process = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=PEER_ENVIRONMENT,
    )
    try:
        return process, wait_listening(process, what)
    except BaseException:
        stop(process)
        raise


def wait_listening(process: subprocess.Popen, what: str) -> int:
    """The port of `process`'s `LISTENING <port>` line, read within START_TIMEOUT."""
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


def stop(process: subprocess.Popen) -> int | None:
    """Ends a server we started, by its PID: its stdin closed and SIGTERM, then SIGKILL after
    STOP_TIMEOUT. Returns its exit status when SIGTERM ended it, None when SIGKILL had to."""
    if process.stdin:
        process.stdin.close()
    process.terminate()
    try:
        return process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None
