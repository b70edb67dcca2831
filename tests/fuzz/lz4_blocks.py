"""lz4 blocks made by hand for the differential tests and the fuzz seeds: random sequence layouts (valid or not for
liblz4), and the edge cases of liblz4's ``LZ4_decompress_safe`` around its switch from the fast loop to the safe loop
(the native decoder, kafkatool/_core/src/codecs.rs ``lz4_block``, models both; tests/kafka/test_lz4.py checks them
against lz4-java)."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator

from kafkatool.schema import codecs

BD = {64 << 10: 0x40, 256 << 10: 0x50, 1 << 20: 0x60, 4 << 20: 0x70}  # maximum block size -> BD byte


def ext(n: int) -> bytes:
    """An lz4 length extension for ``n`` (the part past 15): 255s, then the rest."""
    return b"\xff" * (n // 255) + bytes([n % 255])


def random_block(rng: random.Random, target: int) -> bytes:
    """A block of random sequences (valid or not for liblz4: short final literals, matches near the capacity,
    offsets past the output), ending near ``target`` output bytes."""
    out = bytearray()
    op = 0
    while True:
        final = op >= target or rng.random() < 0.05
        lit = rng.randrange(0, 9) if final else rng.choice([0, 1, 3, 14, 15, 16, 40, 300])
        if final:
            lit = min(lit, max(0, target + rng.randrange(-20, 20) - op))
        ml = rng.choice([0, 1, 10, 15, 16, 100, 1000, 5000])
        out.append((min(lit, 15) << 4) | (0 if final else min(ml, 15)))
        if lit >= 15:
            out += ext(lit - 15)
        out += rng.randbytes(lit)
        op += lit
        if final:
            return bytes(out)
        offset = rng.randrange(1, op + 1) if op and rng.random() < 0.97 else rng.randrange(0, 70000)
        out += struct.pack("<H", offset & 0xFFFF)
        if ml >= 15:
            out += ext(ml - 15)
        op += ml + 4


def sequence(lit: bytes, offset: int, match: int) -> bytes:
    """One lz4 sequence: the literals, then a match of ``match`` bytes (>= 4) at ``offset``."""
    ml = match - 4
    out = bytearray([(min(len(lit), 15) << 4) | min(ml, 15)])
    if len(lit) >= 15:
        out += ext(len(lit) - 15)
    out += lit + struct.pack("<H", offset)
    if ml >= 15:
        out += ext(ml - 15)
    return bytes(out)


def last(lit: bytes) -> bytes:
    """The last sequence: literals only."""
    return bytes([min(len(lit), 15) << 4]) + (ext(len(lit) - 15) if len(lit) >= 15 else b"") + lit


def edge_blocks(rng: random.Random) -> Iterator[tuple[bytes, int]]:
    """Blocks whose output reaches the capacity's last 100 bytes (where liblz4 leaves its fast loop) through
    every kind of tail: short and long literals, matches ending at the capacity, 4 bytes before it, or past it,
    inputs ending right after a short literal run."""
    for capacity in (64 << 10, 256 << 10):
        for gap in range(0, 100):
            for _ in range(6):
                head = sequence(rng.randbytes(rng.choice([1, 8, 14, 15, 40])), 1, capacity - gap - 60)
                out = capacity - gap - 60 + (head[0] >> 4 if head[0] >> 4 < 15 else 0)
                body = bytearray(head)
                target = capacity - rng.choice([0, 0, 1, 4, 5, 6, 12, 13, 20]) + rng.choice([0, 0, 0, 1, 8])
                while True:
                    left = target - out
                    if left <= 18 or rng.random() < 0.2:
                        body += last(rng.randbytes(max(0, min(left, rng.choice([0, 1, 5, 8, left])))))
                        break
                    lit = rng.randrange(0, min(15, left))
                    match = rng.randrange(4, min(19, max(5, left - lit)) + 1)
                    body += sequence(rng.randbytes(lit), rng.choice([1, 2, 7, 8, 9, 16]), match)
                    out += lit + match
                yield bytes(body), capacity


def hand_blocks() -> Iterator[tuple[bytes, int]]:
    """The cases of codecs.rs's unit tests and the loops' thresholds one byte either side."""
    ten = sequence(b"abcdefghij", 1, 4) + last(b"wxyz")
    end = bytes([0xEE]) + b"abcdefghijklmn" + bytes([8, 0, 0x00])
    for capacity in (64 << 10,):
        yield ten, capacity
        yield end, capacity
        yield b"\x00", capacity
        yield bytes([0x50]) + b"abcde", capacity
        for n in range(0, 40):  # a short first literal run with the input ending n bytes after it
            yield sequence(b"0123456789abcd"[: n % 15], 1, 4) + last(bytes(n)), capacity


def frame(block: bytes, capacity: int) -> bytes:
    """``block`` as the one block of a magic 2 frame whose maximum block size is ``capacity``."""
    head = struct.pack("<I", codecs.LZ4_MAGIC) + bytes((codecs.LZ4_KAFKA_FLG, BD[capacity]))
    return (head + bytes((codecs.lz4_header_checksum(head[4:]),)) + struct.pack("<I", len(block)) + block
            + struct.pack("<I", 0))
