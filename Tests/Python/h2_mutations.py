"""Damage for a client's HTTP/2 bytes: the mutations of scripts/fuzz-server, as a module.

An exchange is a list of chunks: the preface magic, then one serialised frame each.
`mutate(rng, chunks, streams, donor)` applies zero to eight faults to it and returns the
bytes to send: structural ones on the frames (dropped, doubled, swapped, repeated, spliced
from `donor()`, lengths, types, flags and stream IDs rewritten, stray control frames, HPACK
garbage in header blocks), then byte-level ones (bit flips, interesting bytes and words,
truncation, ranges doubled, deleted or inserted). `mutate_headers` breaks a request's
header list before it is HPACK-encoded. Everything draws from the `random.Random` it is
given, so the same seed gives the same bytes.
"""

from __future__ import annotations

# HTTP/2 (RFC 9113 sections 3.4, 4.1 and 6).
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY = range(8)
WINDOW_UPDATE, CONTINUATION = 8, 9
END_STREAM = ACK = 0x1
END_HEADERS, PADDED, PRIORITY_FLAG = 0x4, 0x8, 0x20
MAX_FRAME = 16384  # SETTINGS_MAX_FRAME_SIZE until the server says otherwise


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (len(payload).to_bytes(3, "big") + bytes([kind & 0xFF, flags & 0xFF])
            + (stream & 0xFFFFFFFF).to_bytes(4, "big") + payload)


def split(first: int, then: int, last_flag: int, stream: int, body: bytes) -> list[bytes]:
    """`body` in frames of at most MAX_FRAME bytes: `first`, then `then`s, the last flagged
    (HEADERS then CONTINUATION with END_HEADERS; DATA with END_STREAM)."""
    pieces = [body[at:at + MAX_FRAME] for at in range(0, len(body), MAX_FRAME)] or [b""]
    return [frame(then if n else first, last_flag if n == len(pieces) - 1 else 0, stream, piece)
            for n, piece in enumerate(pieces)]


def settings(pairs) -> bytes:
    return b"".join(key.to_bytes(2, "big") + value.to_bytes(4, "big") for key, value in pairs)


WEIRD_VALUES = ["", "\x00", "GET", "*", "/", "/x.Y/", "/x.Y/Nope", "application/json", "gzip",
                "-1S", "0n", "99999999H", "1x", "a\r\nb: c", "\xff\xfe", "x" * 9000]
WEIRD_HEADERS = [("connection", "keep-alive"), ("te", "gzip"), ("grpc-encoding", "br"),
                 ("grpc-encoding", "gzip"), (":protocol", "websocket"), ("content-length", "1"),
                 ("host", "elsewhere"), ("transfer-encoding", "chunked"), (":status", "200"),
                 ("x-big", "a" * 40000)]  # 40,000 bytes: HEADERS and a CONTINUATION


def mutate_headers(rng, headers: list[tuple[str, str]]) -> None:
    """One semantic fault in a request's header list (pseudo-headers first), which still
    HPACK-encodes."""
    at, kind = rng.randrange(len(headers)), rng.randrange(7)
    name, value = headers[at]
    if kind == 0:
        del headers[at]
    elif kind == 1:
        headers.insert(rng.randrange(len(headers) + 1), (name, value))
    elif kind == 2:
        headers[at] = (name, rng.choice(WEIRD_VALUES))
    elif kind == 3:  # a pseudo-header after the regular ones
        headers.append(headers.pop(rng.randrange(min(4, len(headers)))))
    elif kind == 4:
        headers[at] = (name.upper(), value)
    elif kind == 5:
        headers.insert(rng.randrange(len(headers) + 1), rng.choice(WEIRD_HEADERS))
    else:
        headers[at] = (rng.choice([":path", ":method", "te", "", ":x", "Bad Name"]), value)


HPACK_GARBAGE = [
    b"\xff\xff\xff\xff\xff\x0f",      # an indexed field far beyond both tables
    b"\x80",                          # indexed field 0: a decoding error
    b"\x3f\xe1\xff\xff\x0f",          # a dynamic table size update above the limit
    b"\x40\x7f\xff\xff\xff\xff\x0f",  # a literal whose name length overflows
    b"\x40\x81\xff\x81\xff",          # Huffman strings of EOS and bad padding
    b"\x00\x00\x00",                  # a literal with an empty name
    b"\x20",                          # a table size update after a field
    b"\x7f" + b"\xff" * 12,           # an integer that never ends
]
SETTING_IDS = [1, 2, 3, 4, 5, 6, 0x10, 0xFFFF]
SETTING_VALUES = [0, 1, 2, 16383, 1 << 24, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]


def control_frame(rng, stream: int) -> bytes:
    """A stray or malformed frame a client might send in the middle of an exchange."""
    return rng.choice([
        lambda: frame(PING, 0, 0, rng.randbytes(rng.choice([8, 7, 9]))),
        lambda: frame(WINDOW_UPDATE, 0, rng.choice([0, stream]),
                      rng.choice([0, 1, 0x7FFFFFFF]).to_bytes(4, "big")),
        lambda: frame(RST_STREAM, 0, stream, rng.randrange(16).to_bytes(4, "big")),
        lambda: frame(PRIORITY, 0, stream, stream.to_bytes(4, "big") + b"\x10"),  # on itself
        lambda: frame(SETTINGS, 0, 0,
                      settings([(rng.choice(SETTING_IDS), rng.choice(SETTING_VALUES))])),
        lambda: frame(SETTINGS, ACK, 0, rng.choice([b"", bytes(6)])),
        lambda: frame(GOAWAY, 0, 0, rng.randrange(1 << 31).to_bytes(4, "big") + bytes(4)),
        lambda: frame(PUSH_PROMISE, END_HEADERS, stream,
                      (stream + 1).to_bytes(4, "big") + b"\x82"),
        lambda: frame(CONTINUATION, END_HEADERS, stream, b"\x82"),
        lambda: frame(DATA, PADDED | END_STREAM, stream, b"\xff" + bytes(3)),  # padding > frame
        lambda: frame(HEADERS, END_HEADERS | END_STREAM, stream, rng.choice(HPACK_GARBAGE)),
        lambda: frame(rng.randrange(10, 256), rng.randrange(256), stream,  # unknown: ignored
                      rng.randbytes(rng.randrange(16))),
    ])()


def mutate_chunks(rng, chunks: list[bytes], streams: list[int], donor) -> None:
    """One structural fault: frames moved, added or rewritten (chunk 0, the magic, stays)."""
    at, kind = rng.randrange(1, len(chunks)), rng.randrange(11)
    if kind == 10:  # HPACK garbage, in a header block if one is left
        blocks = [n for n, chunk in enumerate(chunks) if n and chunk[3] in (HEADERS, CONTINUATION)]
        at = rng.choice(blocks or [at])
    head, body = bytearray(chunks[at][:9]), chunks[at][9:]
    if kind == 0:
        chunks.insert(rng.randrange(1, len(chunks) + 1), chunks[at])
    elif kind == 1 and len(chunks) > 2:
        del chunks[at]
    elif kind == 2:
        other = rng.randrange(1, len(chunks))
        chunks[at], chunks[other] = chunks[other], chunks[at]
    elif kind == 3:  # up to 1,000 times, within 64 KiB
        times = min(rng.choice([2, 10, 100, 1000]), max(2, (1 << 16) // len(chunks[at])))
        chunks[at:at + 1] = [chunks[at]] * times
    elif kind == 4:  # frames of another exchange, in between or in place of the rest
        others = donor()[1:]
        start = rng.randrange(len(others))
        chunks[at:at if rng.random() < 0.5 else None] = others[start:start + rng.randint(1, 4)]
    elif kind == 5:
        length = int.from_bytes(head[:3], "big")
        new = rng.choice([0, 1, length - 1, length + 1, 2 * length, MAX_FRAME, MAX_FRAME + 1,
                          0xFFFFFF, rng.randrange(1 << 24)])
        head[:3] = (new % (1 << 24)).to_bytes(3, "big")
    elif kind == 6:
        head[3] = rng.choice([rng.randrange(10), rng.randrange(256)])
    elif kind == 7:
        flag = rng.choice([END_STREAM, END_HEADERS, PADDED, PRIORITY_FLAG])
        head[4] = rng.choice([head[4] ^ flag, rng.randrange(256)])
    elif kind == 8:
        old = int.from_bytes(head[5:9], "big")
        new = rng.choice([0, 1, 2, 3, old + 2, 0x7FFFFFFF, old | 0x80000000])  # | reserved bit
        head[5:9] = new.to_bytes(4, "big")
    elif kind == 9:
        stray = control_frame(rng, rng.choice(streams))
        chunks.insert(rng.randrange(1, len(chunks) + 1), stray)
    elif kind == 10:  # the frame's length follows the block's
        cut = rng.randrange(len(body) + 1)
        body = rng.choice([body[:cut] + rng.choice(HPACK_GARBAGE) + body[cut:], body[:cut],
                           rng.randbytes(rng.randrange(1, 64))])
        head[:3] = len(body).to_bytes(3, "big")
    if kind >= 5:
        chunks[at] = bytes(head) + body


INTERESTING_BYTES = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE, 0x40]
INTERESTING_WORDS = [b"\0\0\0\0", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x80\0\0\0",
                     b"\0\0\x40\0", b"\0\0\x40\x01", b"\0\x01\0\0"]


def mutate_bytes(rng, data: bytearray) -> None:
    """One byte-level fault, mostly past the preface magic (which only opens the door)."""
    start = len(PREFACE) if rng.random() < 0.9 and len(data) > len(PREFACE) else 0
    at, kind = rng.randrange(start, len(data)), rng.randrange(7)
    span = rng.randint(1, min(64, len(data) - at))
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(start, len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:
        data[at] = rng.choice(INTERESTING_BYTES)
    elif kind == 2:
        data[at:at + 4] = rng.choice(INTERESTING_WORDS)
    elif kind == 3:
        del data[at:]
    elif kind == 4:
        data[rng.randrange(start, len(data) + 1):0] = data[at:at + span]
    elif kind == 5:
        del data[at:at + span]
    else:
        data[at:at] = rng.randbytes(span)


def mutate(rng, chunks: list[bytes], streams: list[int], donor) -> bytes:
    """`chunks` with zero to eight faults (about half of them structural), as bytes.

    `streams`: the request streams, for stray frames; `donor()`: the chunks of another valid
    exchange, to splice from. `chunks` is changed in place.
    """
    faults = rng.choice([0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 6, 8])
    byte_faults = sum(rng.random() < 0.5 for _ in range(faults))
    for _ in range(faults - byte_faults):
        mutate_chunks(rng, chunks, streams, donor)
    data = bytearray(b"".join(chunks))
    for _ in range(byte_faults):
        if data:
            mutate_bytes(rng, data)
    return bytes(data)
