#!/usr/bin/env python3
"""Test certificates for the TLS tests, made with the openssl CLI into one directory.

Everything is ECDSA P-256 with SHA-256 signatures, PEM, private keys PKCS#8 unencrypted.
File names never change; the directory is the caller's (Tests/PeerSupport/TLSFixtures.swift
makes one per `swift test` process, tls_selfcheck.py one per run).

  ca.pem, ca.key                 "FleetConsumer Test CA": the CA the tests trust.
  server.pem, server.key         signed by the test CA; CN foo.test.google.fr, SAN
                                 DNS:foo.test.google.fr, DNS:localhost, IP:127.0.0.1 (the
                                 name of gRPC's interop test certificate, and loopback).
  wrong-name.pem, wrong-name.key signed by the test CA; CN and SAN only DNS:wrong.example.
  expired.pem, expired.key       signed by the test CA, the SANs of server.pem, valid
                                 2020-01-01 00:00:00Z ... 2020-01-02 00:00:00Z only.
  other-ca.pem, other-ca.key     "FleetConsumer Untrusted CA": a CA nobody trusts.
  untrusted.pem, untrusted.key   signed by the untrusted CA, the SANs of server.pem. A
                                 server sending only this certificate (no chain) makes
                                 OpenSSL's verify fail with X509_V_ERR_UNABLE_TO_GET_ISSUER_
                                 CERT_LOCALLY, "unable to get local issuer certificate".
  client.pem, client.key         signed by the test CA; CN fleet-test-client, EKU clientAuth
                                 (for mutual TLS).
  manifest.json                  {"directory": ..., "files": {name: path}}; written last, so
                                 its presence means the set is complete.

Leaf certificates have basicConstraints CA:FALSE, keyUsage digitalSignature and an EKU
(serverAuth, or clientAuth for client.pem); valid ones run from a day before generation to
ten years after. The CAs are made by `openssl req -x509`, the leaves by `openssl ca` (which,
unlike OpenSSL 3.0's `openssl x509`, can set any validity, so also one in the past).

Usage:  .venv/bin/python Tests/Python/tls_fixtures.py --out DIR
Creates DIR if needed, generates the set unless DIR/manifest.json is already there, and
prints the manifest as one JSON line. Exit status: 0 done, 1 openssl failed (its stderr is
printed), 2 no openssl on PATH.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SERVER_NAME = "foo.test.google.fr"
SERVER_SAN = f"DNS:{SERVER_NAME},DNS:localhost,IP:127.0.0.1"
WRONG_NAME = "wrong.example"
CLIENT_NAME = "fleet-test-client"
EXPIRED_FROM = "20200101000000Z"
EXPIRED_UNTIL = "20200102000000Z"

FILES = ("ca.pem", "ca.key", "server.pem", "server.key", "wrong-name.pem", "wrong-name.key",
         "expired.pem", "expired.key", "other-ca.pem", "other-ca.key", "untrusted.pem",
         "untrusted.key", "client.pem", "client.key")

# One config for both CAs (`openssl ca -name`); explicit, so the system's openssl.cnf cannot
# add or change extensions.
CONFIG = """\
[ req ]
distinguished_name = req_dn
prompt = no
[ req_dn ]
CN = unused

[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ test_ca ]
dir = {dir}/test-ca.db
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
certificate = {dir}/ca.pem
private_key = {dir}/ca.key
default_md = sha256
policy = any_policy
unique_subject = no
copy_extensions = none
email_in_dn = no

[ other_ca ]
dir = {dir}/other-ca.db
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
certificate = {dir}/other-ca.pem
private_key = {dir}/other-ca.key
default_md = sha256
policy = any_policy
unique_subject = no
copy_extensions = none
email_in_dn = no

[ any_policy ]
commonName = supplied

[ server_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = {server_san}

[ wrong_name_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:{wrong_name}

[ client_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


class OpenSSLFailed(Exception):
    pass


def openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise OpenSSLFailed(f"openssl {' '.join(args)} exited {result.returncode}:\n"
                            f"{result.stderr}{result.stdout}")


def utc(moment: datetime.datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%SZ")


def generate(directory: Path) -> dict:
    """Generates the set into `directory` (unless complete already); returns the manifest."""
    directory = directory.resolve()
    manifest_path = directory / "manifest.json"
    if manifest_path.exists():
        return json.loads(manifest_path.read_text())
    if shutil.which("openssl") is None:
        raise FileNotFoundError("no openssl on PATH (Debian: apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "openssl.cnf"
    config.write_text(CONFIG.format(dir=directory, server_san=SERVER_SAN, wrong_name=WRONG_NAME))
    for db in ("test-ca.db", "other-ca.db"):
        (directory / db).mkdir(exist_ok=True)
        (directory / db / "index.txt").write_text("")
        (directory / db / "serial").write_text("1000\n")

    def key(name: str) -> None:
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", f"{name}.key", cwd=directory)

    def ca(name: str, subject: str) -> None:
        key(name)
        openssl("req", "-config", str(config), "-x509", "-new", "-key", f"{name}.key",
                "-sha256", "-days", "3650", "-subj", f"/CN={subject}", "-extensions", "ca_ext",
                "-out", f"{name}.pem", cwd=directory)

    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (utc(now - datetime.timedelta(days=1)), utc(now + datetime.timedelta(days=3650)))

    def leaf(name: str, subject: str, issuer: str, extensions: str,
             validity: tuple[str, str] = valid) -> None:
        key(name)
        openssl("req", "-config", str(config), "-new", "-key", f"{name}.key",
                "-subj", f"/CN={subject}", "-out", f"{name}.csr", cwd=directory)
        openssl("ca", "-config", str(config), "-name", issuer, "-batch", "-notext",
                "-extensions", extensions, "-startdate", validity[0], "-enddate", validity[1],
                "-in", f"{name}.csr", "-out", f"{name}.pem", cwd=directory)
        (directory / f"{name}.csr").unlink()

    ca("ca", "FleetConsumer Test CA")
    ca("other-ca", "FleetConsumer Untrusted CA")
    leaf("server", SERVER_NAME, "test_ca", "server_ext")
    leaf("wrong-name", WRONG_NAME, "test_ca", "wrong_name_ext")
    leaf("expired", SERVER_NAME, "test_ca", "server_ext", (EXPIRED_FROM, EXPIRED_UNTIL))
    leaf("untrusted", SERVER_NAME, "other_ca", "server_ext")
    leaf("client", CLIENT_NAME, "test_ca", "client_ext")

    manifest = {"directory": str(directory),
                "files": {name: str(directory / name) for name in FILES}}
    # Written whole under another name, then renamed: a reader never sees half a manifest.
    partial = directory / "manifest.json.partial"
    partial.write_text(json.dumps(manifest))
    os.replace(partial, manifest_path)
    return manifest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="the directory to fill")
    args = parser.parse_args()
    try:
        manifest = generate(args.out)
    except FileNotFoundError as error:
        print(f"tls_fixtures: {error}", file=sys.stderr)
        return 2
    except OpenSSLFailed as error:
        print(f"tls_fixtures: {error}", file=sys.stderr)
        return 1
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
