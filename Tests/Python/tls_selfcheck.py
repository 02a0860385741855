#!/usr/bin/env python3
"""Proves the TLS peers and certificates with grpcio, Python's ssl and `openssl s_client`.

So a failing Swift TLS test is our client's fault, not the fixtures'. It generates the
certificates of tls_fixtures.py into a temporary directory, then checks:

* interop cases over TLS: every case of interop_selfcheck.py (the 18 standard ones and the
  extras: hooks, EVENT lines, compression flags seen by the relay) with grpcio's client
  (`grpc.ssl_channel_credentials(ca.pem)`, `grpc.ssl_target_name_override`
  foo.test.google.fr) against `interop_server.py --tls-cert server.pem --tls-key
  server.key` (the relay terminates TLS); the relay reports ALPN h2; a channel to
  `localhost` without override works (SAN DNS:localhost); the standard cases that need no
  relay EVENT lines against the same server in `--direct` mode (grpcio's own TLS).
* mutual TLS (`--tls-client-ca ca.pem`, relay and direct): with client.pem the call works
  and the relay names the client; without a client certificate grpcio gets UNAVAILABLE and
  the relay reports the handshake failure.
* each negative of the Swift suite, against the same server the Swift test uses: grpcio's
  client gets UNAVAILABLE; Python's ssl (OpenSSL, as our client) fails the handshake with
  the expected X509 verify code, and `openssl s_client -verify_return_error` prints the
  expected OpenSSL verify text, which is what our client's message must contain:
    untrusted.pem (other CA, leaf only)   20 "unable to get local issuer certificate"
    wrong-name.pem, name foo.test.google.fr   62 "hostname mismatch"
    expired.pem                           10 "certificate has expired"
  and for the servers that are not certificate problems: tls_raw_server.py no-alpn and
  alpn-http11 (handshake completes, no ALPN: s_client "No ALPN negotiated"), tls11 and
  close-after-hello (handshake fails), and the plaintext interop server (handshake fails).

Usage:  .venv/bin/python Tests/Python/tls_selfcheck.py [--case NAME ...] [--keep DIR]
Prints `PASS <check>` or `FAIL <check>: <why>` per check.
Exit status: 0 all passed, 1 some failed, 2 a server or the fixtures could not be made.
"""

from __future__ import annotations

import argparse
import array
import fcntl
import os
import re
import select
import socket
import ssl
import subprocess
import sys
import tempfile
import termios
import threading
from pathlib import Path

# grpcio logs every failed handshake at INFO; the negatives fail handshakes on purpose.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
import grpc  # noqa: E402

import grpc_testing_stubs as stubs  # noqa: E402
import interop_selfcheck as isc
import tls_fixtures

HERE = Path(__file__).resolve().parent
SERVICE = isc.SERVICE
NAME = tls_fixtures.SERVER_NAME
m = stubs.messages()

# What the relayed interop cases need and --direct cannot give (EVENT lines of the relay).
NEEDS_RELAY = {"client_compressed_unary", "client_compressed_streaming",
               "server_compressed_unary", "server_compressed_streaming", "cancel_after_begin"}


class Peer(isc.Server):
    """Any server script of Tests/Python as a child process, with its lines collected.

    Unlike interop_selfcheck.Server, `mark()` is exact: its reader thread reads the pipe only
    while holding the lock, so once `mark()` holds the lock and the pipe is empty, every
    line the server has printed so far is counted (a case's EVENT lines that were still in
    the pipe would otherwise be taken for the next case's).
    """

    def __init__(self, script: str, *args: str):  # noqa: super().__init__ runs interop only
        self.process = subprocess.Popen([sys.executable, str(HERE / script), *args],
                                        stdout=subprocess.PIPE, bufsize=0)
        self.fd = self.process.stdout.fileno()
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.pending = b""
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        with self.cond:
            while not self.lines and not self.closed:
                self.cond.wait(30)
            first = self.lines.pop(0).split() if self.lines else []
        if len(first) != 2 or first[0] != "LISTENING":
            self.process.kill()
            raise SystemExit(f"{script} did not start: {first}")
        self.port = int(first[1])

    def _read(self) -> None:
        while True:
            select.select([self.fd], [], [])
            with self.cond:
                data = os.read(self.fd, 1 << 16)
                if not data:
                    self.closed = True
                    self.cond.notify_all()
                    return
                *complete, self.pending = (self.pending + data).split(b"\n")
                self.lines.extend(line.decode("utf-8", "replace") for line in complete)
                self.cond.notify_all()

    def unread(self) -> int:
        count = array.array("i", [0])
        fcntl.ioctl(self.fd, termios.FIONREAD, count)
        return count[0]

    def mark(self) -> int:
        with self.cond:
            while self.unread() and not self.closed:
                self.cond.wait(1)
            return len(self.lines)

    def events(self, start: int, kind: str) -> list[dict[str, str]]:
        self.mark()  # every line printed so far, not only those the reader has reached
        return super().events(start, kind)


class TLSSockets:
    """Stands in for the `socket` module inside interop_selfcheck.raw_call, whose connections
    then are TLS (ALPN h2, our CA, foo.test.google.fr) like grpcio's channel here."""

    def __init__(self, context: ssl.SSLContext):
        self.context = context

    def create_connection(self, address, timeout=None):
        sock = socket.create_connection(address, timeout=timeout)
        return self.context.wrap_socket(sock, server_hostname=NAME)


class TLSCases(isc.Cases):
    """interop_selfcheck's cases on a TLS channel."""

    def __init__(self, server: isc.Server, credentials, target: str | None = None,
                 override: str | None = NAME):
        self.server = server
        options = [("grpc.max_receive_message_length", 32 * 1024 * 1024)]
        if override is not None:
            options.append(("grpc.ssl_target_name_override", override))
        self.channel = grpc.secure_channel(target or f"127.0.0.1:{server.port}", credentials,
                                           options=options)
        self.stub = {name: stubs.client_method(self.channel, SERVICE, name)
                     for name in stubs.services()[SERVICE]}


    def hook_drop_connection(self):
        """interop_selfcheck's check, but the channel gets a second call to show it has
        reconnected: grpcio may still send the first call after the drop on the reset
        connection (UNAVAILABLE "Broken pipe"; seen without TLS as well, about 1 run in 15)."""
        isc.fails_with(grpc.StatusCode.UNAVAILABLE, lambda: self.stub["UnaryCall"](
            m.SimpleRequest(), metadata=(("x-fleet-test-drop-connection", "1"),), timeout=5))
        try:
            self.stub["EmptyCall"](m.Empty(), timeout=5)
        except grpc.RpcError as error:
            isc.expect_code(error, grpc.StatusCode.UNAVAILABLE)
            self.stub["EmptyCall"](m.Empty(), timeout=5)


def read(path: str) -> bytes:
    return Path(path).read_bytes()


def client_context(ca: str, alpn=("h2",)) -> ssl.SSLContext:
    """How our client sets up OpenSSL: TLS 1.2+, the given CA only, host name checked."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_verify_locations(cafile=ca)
    if alpn:
        context.set_alpn_protocols(list(alpn))
    return context


def handshake(port: int, ca: str, name: str = NAME):
    """A TLS handshake with Python's ssl: (selected ALPN or None, None) or (None, error)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with client_context(ca).wrap_socket(raw, server_hostname=name) as tls:
                return tls.selected_alpn_protocol(), None
    except (ssl.SSLError, OSError) as error:
        return None, error


def s_client(port: int, ca: str, name: str = NAME) -> str:
    """`openssl s_client` with verification that fails the handshake; its whole output."""
    result = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-CAfile", ca,
         "-verify_return_error", "-servername", name, "-verify_hostname", name,
         "-alpn", "h2", "-min_protocol", "TLSv1.2"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    return result.stdout + result.stderr


def expect_unavailable(channel_target: str, credentials, override: str = NAME) -> str:
    channel = grpc.secure_channel(channel_target, credentials,
                                  options=[("grpc.ssl_target_name_override", override)])
    try:
        call = stubs.client_method(channel, SERVICE, "EmptyCall")
        error = isc.fails_with(grpc.StatusCode.UNAVAILABLE, lambda: call(m.Empty(), timeout=5))
        return error.details()
    finally:
        channel.close()


class Checks:
    def __init__(self, files: dict[str, str]):
        self.f = files
        self.ca = grpc.ssl_channel_credentials(read(files["ca.pem"]))

    def server_args(self, cert: str = "server", client_ca: bool = False) -> list[str]:
        args = ["--tls-cert", self.f[f"{cert}.pem"], "--tls-key", self.f[f"{cert}.key"]]
        if client_ca:
            args += ["--tls-client-ca", self.f["ca.pem"]]
        return args

    # -- positives

    def interop_relay(self, report) -> None:
        server = Peer("interop_server.py", *self.server_args())
        try:
            start = server.mark()
            cases = TLSCases(server, self.ca)
            isc.socket = TLSSockets(client_context(self.f["ca.pem"]))  # for raw_call
            for name in isc.STANDARD + isc.EXTRA:
                report(f"relay/{name}", lambda: getattr(cases, name)())
            cases.channel.close()
            report("relay/alpn_h2", lambda: server.wait_for(
                start, lambda l: l.startswith("EVENT tls ") and "alpn=h2" in l))

            def localhost() -> None:
                tls = TLSCases(server, self.ca, target=f"localhost:{server.port}",
                               override=None)
                tls.empty_unary()
                tls.channel.close()
            report("relay/localhost_without_override", localhost)
        finally:
            status = server.stop()
        report("relay/exit_status", lambda: isc.expect(status == 0, f"exit status {status}"))

    def interop_direct(self, report) -> None:
        server = Peer("interop_server.py", "--direct", *self.server_args())
        try:
            cases = TLSCases(server, self.ca)
            isc.socket = TLSSockets(client_context(self.f["ca.pem"]))
            for name in isc.STANDARD:
                if name not in NEEDS_RELAY:
                    report(f"direct/{name}", lambda: getattr(cases, name)())
            cases.channel.close()
        finally:
            server.stop()

    def mutual_tls(self, report) -> None:
        client = grpc.ssl_channel_credentials(read(self.f["ca.pem"]),
                                              private_key=read(self.f["client.key"]),
                                              certificate_chain=read(self.f["client.pem"]))
        for mode in ("relay", "direct"):
            extra = ["--direct"] if mode == "direct" else []
            server = Peer("interop_server.py", *extra, *self.server_args(client_ca=True))
            try:
                start = server.mark()

                def with_certificate() -> None:
                    cases = TLSCases(server, client)
                    cases.empty_unary()
                    cases.channel.close()
                    if mode == "relay":
                        server.wait_for(start, lambda l: l.startswith("EVENT tls ")
                                        and "client_cert=fleet-test-client" in l)
                report(f"mtls/{mode}/with_client_certificate", with_certificate)

                def without_certificate() -> None:
                    mark = server.mark()
                    expect_unavailable(f"127.0.0.1:{server.port}", self.ca)
                    if mode == "relay":
                        server.wait_for(mark, lambda l: l.startswith("EVENT tls_failed")
                                        and "PEER_DID_NOT_RETURN_A_CERTIFICATE" in l)
                report(f"mtls/{mode}/without_client_certificate", without_certificate)
            finally:
                server.stop()

    # -- negatives: each the server the Swift test uses, seen by three clients

    def certificate_negatives(self, report) -> None:
        rows = [("unknown_ca", "untrusted", NAME, 20, "unable to get local issuer certificate"),
                ("wrong_name", "wrong-name", NAME, 62, "hostname mismatch"),
                ("wrong_name_localhost", "wrong-name", "localhost", 62, "hostname mismatch"),
                ("expired", "expired", NAME, 10, "certificate has expired")]
        for check, cert, name, code, text in rows:
            server = Peer("interop_server.py", *self.server_args(cert))
            try:
                def verify(name=name, code=code, text=text) -> None:
                    _, error = handshake(server.port, self.f["ca.pem"], name)
                    isc.expect(isinstance(error, ssl.SSLCertVerificationError),
                               f"handshake: {error!r}")
                    isc.expect(error.verify_code == code,
                               f"verify code {error.verify_code} {error.verify_message!r}")
                    out = s_client(server.port, self.f["ca.pem"], name)
                    isc.expect(f"verify error:num={code}:{text}" in out, out)
                    expect_unavailable(f"127.0.0.1:{server.port}", self.ca, override=name)
                report(f"negative/{check}", verify)
            finally:
                server.stop()

    def protocol_negatives(self, report) -> None:
        cert = self.server_args()
        for mode in ("no-alpn", "alpn-http11"):
            server = Peer("tls_raw_server.py", "--mode", mode, *cert)
            try:
                def no_alpn() -> None:
                    alpn, error = handshake(server.port, self.f["ca.pem"])
                    isc.expect(error is None and alpn is None, f"alpn {alpn!r}, error {error!r}")
                    out = s_client(server.port, self.f["ca.pem"])
                    isc.expect("No ALPN negotiated" in out and "Verify return code: 0" in out,
                               out)
                    details = expect_unavailable(f"127.0.0.1:{server.port}", self.ca)
                    isc.expect("ALPN" in details, f"grpcio says {details!r}")
                report(f"negative/{mode}", no_alpn)
            finally:
                server.stop()
        failing = [("tls11", "tls_raw_server.py", ["--mode", "tls11", *cert],
                    r"UNSUPPORTED_PROTOCOL|TLSV1_ALERT_PROTOCOL_VERSION"),
                   ("close-after-hello", "tls_raw_server.py", ["--mode", "close-after-hello"],
                    r"EOF|UNEXPECTED_EOF"),
                   ("plaintext", "interop_server.py", [], r"WRONG_VERSION_NUMBER|RECORD_LAYER"
                    r"|PACKET_LENGTH_TOO_LONG|EOF")]
        for check, script, args, pattern in failing:
            server = Peer(script, *args)
            try:
                def fails(pattern=pattern) -> None:
                    _, error = handshake(server.port, self.f["ca.pem"])
                    isc.expect(error is not None and re.search(pattern, repr(error)),
                               f"handshake: {error!r}")
                    expect_unavailable(f"127.0.0.1:{server.port}", self.ca)
                report(f"negative/{check}", fails)
            finally:
                server.stop()


GROUPS = ("interop_relay", "interop_direct", "mutual_tls", "certificate_negatives",
          "protocol_negatives")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", action="append", choices=GROUPS, help="only these groups")
    parser.add_argument("--keep", type=Path, help="generate the certificates here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleet-tls-selfcheck-") as scratch:
        try:
            files = tls_fixtures.generate(args.keep or Path(scratch))["files"]
        except (OSError, tls_fixtures.OpenSSLFailed) as error:
            print(f"FAIL fixtures: {error}", flush=True)
            return 2
        failures = 0

        def report(name: str, check) -> None:
            nonlocal failures
            try:
                check()
                print(f"PASS {name}", flush=True)
            except Exception as error:  # noqa: BLE001 - report and go on
                failures += 1
                print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)

        checks = Checks(files)
        for group in args.case or GROUPS:
            getattr(checks, group)(report)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
