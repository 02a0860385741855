#!/usr/bin/env python3
"""Fleet Engine consumer tokens, checked independently of FleetConsumer.

FleetConsumer's `ServiceAccountTokenProvider` mints JWTs with OpenSSL; this module checks
them with PyPI's `cryptography` (its own RSA code path: RSASSA-PKCS1-v1_5 with SHA-256) and
Python's own base64 and json, so the two sides share nothing but the standard.

Usage (the venv's interpreter):

    consumer_jwt.py generate --out DIR
        Makes a fresh 2048-bit RSA key and writes DIR/key.json (a Google service-account key:
        type, project_id, private_key_id, private_key in PKCS#8 PEM, client_email, client_id,
        token_uri), DIR/public.pem (its public half), DIR/ec-private.pem (a P-256 private
        key, for tests of keys that are not RSA) and DIR/encrypted-private.pem (the RSA key
        encrypted with a passphrase, which a token provider cannot use). Prints one JSON line:
        {"keyFile": ..., "publicKey": ..., "clientEmail": ..., "privateKeyID": ...}.

    consumer_jwt.py verify --public-key PEM --email EMAIL --kid KID TRIP_ID=TOKEN ...
        Checks each token for its trip: the signature with the public key, the header
        exactly `{"alg":"RS256","typ":"JWT","kid":KID}` (bytes and fields), and every claim:
        iss = sub = EMAIL, aud = https://fleetengine.googleapis.com/, iat within 60 s of now,
        now < exp <= iat + 3600, authorization = {"tripid": TRIP_ID}, nothing else. Prints one
        JSON line per token, {"trip": ..., "ok": true, "header": {...}, "claims": {...}} or
        {"trip": ..., "ok": false, "reason": ...}; exits 0 when every token passed, else 1.

`check_token` is what the fake Fleet Engine (`--verify-jwt-public-key`) runs on every call.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import secrets
import sys
import time
from pathlib import Path

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
except ImportError as error:  # pragma: no cover - environment problem
    print(f"consumer_jwt: cannot import cryptography ({error}); run with the venv that "
          "scripts/test creates (.venv/bin/python)", file=sys.stderr)
    sys.exit(2)

AUDIENCE = "https://fleetengine.googleapis.com/"
MAXIMUM_LIFETIME = 3600
# How far `iat` may be from the verifier's clock, either way.
CLOCK_SKEW = 60


class TokenRejected(Exception):
    """Why a token is not a valid consumer token for the trip; the message says."""


def decode_segment(segment: str, what: str) -> bytes:
    """A base64url segment without padding (RFC 7515 section 2), strictly."""
    if not segment or "=" in segment:
        raise TokenRejected(f"the {what} is not base64url without padding")
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    if not set(segment) <= alphabet:
        raise TokenRejected(f"the {what} has characters outside base64url")
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        raise TokenRejected(f"the {what} is not base64url") from None


def decode_json(data: bytes, what: str) -> dict:
    try:
        value = json.loads(data)
    except ValueError:
        raise TokenRejected(f"the {what} is not JSON") from None
    if not isinstance(value, dict):
        raise TokenRejected(f"the {what} is not a JSON object")
    return value


def load_public_key(path: str | Path) -> rsa.RSAPublicKey:
    key = serialization.load_pem_public_key(Path(path).read_bytes())
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError(f"{path} is not an RSA public key")
    return key


def check_token(token: str, public_key: rsa.RSAPublicKey, trip_id: str, *,
                now: float | None = None, email: str | None = None,
                kid: str | None = None) -> tuple[dict, dict]:
    """The header and claims of `token` when it is a valid consumer token for `trip_id`;
    raises TokenRejected saying why not. `email` and `kid`, when given, must be the issuer
    and key ID; without them any non-empty ones pass."""
    now = time.time() if now is None else now
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenRejected(f"not a JWT: {len(parts)} parts, not 3")
    header_bytes = decode_segment(parts[0], "header")
    claims_bytes = decode_segment(parts[1], "payload")
    signature = decode_segment(parts[2], "signature")
    try:
        public_key.verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"),
                          padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        raise TokenRejected("the RS256 signature does not verify with the public key") from None

    header = decode_json(header_bytes, "header")
    header_kid = header.get("kid")
    if not isinstance(header_kid, str) or not header_kid:
        raise TokenRejected("the header has no kid")
    if kid is not None and header_kid != kid:
        raise TokenRejected(f"the header's kid is {header_kid!r}, not {kid!r}")
    expected_header = {"alg": "RS256", "typ": "JWT", "kid": header_kid}
    if header != expected_header:
        raise TokenRejected(f"the header is {header}, not {expected_header}")
    exact = json.dumps(expected_header, separators=(",", ":")).encode()
    if header_bytes != exact:
        raise TokenRejected(f"the header's bytes are {header_bytes!r}, not {exact!r}")

    claims = decode_json(claims_bytes, "payload")
    expected_keys = {"iss", "sub", "aud", "iat", "exp", "authorization"}
    if set(claims) != expected_keys:
        raise TokenRejected(f"the claims are {sorted(claims)}, not {sorted(expected_keys)}")
    issuer = claims["iss"]
    if not isinstance(issuer, str) or not issuer:
        raise TokenRejected("iss is not a non-empty string")
    if email is not None and issuer != email:
        raise TokenRejected(f"iss is {issuer!r}, not {email!r}")
    if claims["sub"] != issuer:
        raise TokenRejected(f"sub is {claims['sub']!r}, not iss {issuer!r}")
    if claims["aud"] != AUDIENCE:
        raise TokenRejected(f"aud is {claims['aud']!r}, not {AUDIENCE!r}")
    iat, exp = claims["iat"], claims["exp"]
    for name, value in (("iat", iat), ("exp", exp)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TokenRejected(f"{name} is {value!r}, not a whole number of seconds")
    if abs(iat - now) > CLOCK_SKEW:
        raise TokenRejected(f"iat {iat} is {iat - now:+.0f} s from now ({now:.0f})")
    if exp <= iat or exp - iat > MAXIMUM_LIFETIME:
        raise TokenRejected(f"exp - iat is {exp - iat} s, not 1 to {MAXIMUM_LIFETIME}")
    if exp <= now:
        raise TokenRejected(f"the token expired {now - exp:.1f} s ago (exp {exp})")
    if claims["authorization"] != {"tripid": trip_id}:
        raise TokenRejected(
            f"authorization is {claims['authorization']}, not {{'tripid': {trip_id!r}}}")
    return header, claims


def generate(out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_id = secrets.token_hex(20)
    email = f"fleet-consumer-test@test-project-{secrets.token_hex(3)}.iam.gserviceaccount.com"
    private_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    # The fields and their order of a key file Google Cloud hands out.
    document = {
        "type": "service_account",
        "project_id": "test-project",
        "private_key_id": key_id,
        "private_key": private_pem,
        "client_email": email,
        "client_id": str(secrets.randbits(60)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    key_file = out / "key.json"
    key_file.write_text(json.dumps(document, indent=2) + "\n")
    key_file.chmod(0o600)
    (out / "public.pem").write_bytes(public_pem)
    (out / "encrypted-private.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"passphrase")))
    ec_key = ec.generate_private_key(ec.SECP256R1())
    (out / "ec-private.pem").write_bytes(ec_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return {"keyFile": str(key_file), "publicKey": str(out / "public.pem"),
            "clientEmail": email, "privateKeyID": key_id}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("generate", help="write a fresh service-account key")
    make.add_argument("--out", type=Path, required=True)
    verify = commands.add_parser("verify", help="check tokens, one per trip")
    verify.add_argument("--public-key", required=True)
    verify.add_argument("--email", required=True)
    verify.add_argument("--kid", required=True)
    verify.add_argument("tokens", nargs="+", metavar="TRIP_ID=TOKEN")
    args = parser.parse_args()

    if args.command == "generate":
        print(json.dumps(generate(args.out)))
        return 0
    public_key = load_public_key(args.public_key)
    passed = True
    for pair in args.tokens:
        trip_id, _, token = pair.partition("=")
        try:
            header, claims = check_token(token, public_key, trip_id, email=args.email,
                                         kid=args.kid)
            print(json.dumps({"trip": trip_id, "ok": True, "header": header, "claims": claims}))
        except TokenRejected as error:
            passed = False
            print(json.dumps({"trip": trip_id, "ok": False, "reason": str(error)}))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
