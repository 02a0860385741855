#!/usr/bin/env python3
"""A TLS server that misbehaves on purpose, for the TLS negatives of our client's tests.

It never speaks HTTP/2: each mode is one way a TLS endpoint can fail a gRPC client.

Usage (the venv's interpreter; see Tests/PeerSupport/PeerServer.swift):

    .venv/bin/python Tests/Python/tls_raw_server.py --mode MODE
        [--tls-cert FILE --tls-key FILE] [--host 127.0.0.1] [--port 0]

Prints `LISTENING <port>` once, then EVENT lines; SIGTERM/SIGINT end it (status 0); it exits
by itself when its parent goes away. Certificates: tls_fixtures.py (server.pem/server.key,
valid for foo.test.google.fr, localhost and 127.0.0.1); the modes that complete a handshake
need them.

Modes
-----
  no-alpn            completes a TLS 1.2+ handshake without ALPN in its answer, whatever the
                     client offers (a TLS server that knows no HTTP/2); then reads and
                     discards until the client closes. It never closes first, so a client
                     that does not check ALPN waits for a SETTINGS frame that never comes.
  alpn-http11        the same, but its ALPN list is `http/1.1` only (an HTTP/1.1-only TLS
                     front end): a client offering only `h2` gets no ALPN (OpenSSL then
                     answers without the extension; Python's ssl cannot pick a protocol the
                     client did not offer), a client also offering http/1.1 gets http/1.1.
  tls11              accepts TLS 1.0 and 1.1 only (security level 0): a TLS 1.2+ client
                     finds no common version and the handshake fails.
  close-after-hello  reads the ClientHello (its first bytes), then closes the TCP connection
                     (FIN) without answering: the handshake ends with an unexpected EOF.
  silent             accepts TCP and never sends a byte; reads and discards until the client
                     closes (a black hole: a handshake that never completes).

EVENT lines: connection_opened - conn= peer= ; tls - conn= version= cipher= alpn=<or ->
  client_cert=- (handshake done) ; tls_failed - conn= error=<OpenSSL reason> ;
  hello - conn= length= (close-after-hello: bytes read before closing) ;
  connection_closed - conn= .
"""

from __future__ import annotations

import argparse
import socket
import ssl
import sys
import traceback
import warnings

import peer_common as pc

MODES = ("no-alpn", "alpn-http11", "tls11", "close-after-hello", "silent")
NEEDS_CERTIFICATE = ("no-alpn", "alpn-http11", "tls11")
HANDSHAKE_TIMEOUT = 10.0


def context_for(mode: str, cert: str, key: str) -> ssl.SSLContext | None:
    if mode == "no-alpn":
        return pc.tls_server_context(cert, key, alpn=None)
    if mode == "alpn-http11":
        return pc.tls_server_context(cert, key, alpn=("http/1.1",))
    if mode == "tls11":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        # OpenSSL 3 allows TLS < 1.2 only at security level 0.
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():  # deprecated is the point here
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = ssl.TLSVersion.TLSv1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
        context.load_cert_chain(cert, key)
        return context
    return None


def drain(sock) -> None:
    """Reads and discards until the peer closes or the connection breaks."""
    while True:
        try:
            if not sock.recv(65536):
                return
        except ssl.SSLWantReadError:
            continue
        except (OSError, ssl.SSLError):
            return


def serve(mode: str, context: ssl.SSLContext | None, sock: socket.socket, number: int,
          peer) -> None:
    pc.emit("connection_opened", None, conn=number, peer=f"{peer[0]}:{peer[1]}")
    try:
        if mode == "silent":
            drain(sock)
        elif mode == "close-after-hello":
            sock.settimeout(HANDSHAKE_TIMEOUT)
            try:
                hello = sock.recv(65536)
            except OSError:
                hello = b""
            pc.emit("hello", None, conn=number, length=len(hello))
            sock.shutdown(socket.SHUT_RDWR)
        else:
            sock.settimeout(HANDSHAKE_TIMEOUT)
            try:
                sock = context.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError) as error:
                pc.emit("tls_failed", None, conn=number, error=pc.tls_error_text(error))
                return
            pc.emit("tls", None, conn=number, **pc.tls_summary(sock))
            sock.settimeout(None)
            drain(sock)
    except Exception:  # noqa: BLE001 - one broken connection must not stop the server
        pc.log(f"tls_raw_server: connection {number}:\n{traceback.format_exc()}")
    finally:
        try:
            sock.close()
        finally:
            pc.emit("connection_closed", None, conn=number)


def main() -> int:
    pc.unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--tls-cert", metavar="FILE", help="PEM certificate chain")
    parser.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks")
    args = parser.parse_args()
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0...65535, not {args.port}")
    if args.mode in NEEDS_CERTIFICATE and not (args.tls_cert and args.tls_key):
        parser.error(f"--mode {args.mode} needs --tls-cert and --tls-key")
    context = context_for(args.mode, args.tls_cert, args.tls_key)

    pc.serve_threaded(args.host, args.port,
                      lambda sock, number, peer: serve(args.mode, context, sock, number, peer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
