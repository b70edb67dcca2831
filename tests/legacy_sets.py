"""Generated legacy (magic 0/1) message sets, mixed with magic 2 batches: what old clients and down-converted
topics leave in a log (Kafka's ``LegacyRecord`` messages and ``AbstractLegacyRecordBatch`` wrappers), with the
odd cases the walkers must agree on: every codec (and an unknown one), null keys and values, a null wrapper value,
a compressed inner message, magic 1 wrapper offsets of 0 or below the last inner offset, bad CRCs.

Used by the differential tests (``tests/test_native_legacy.py``) and as seeds of the native fuzzer
(``tests/fuzz/native.py``).
"""

from __future__ import annotations

import random

from kafkatool.model import Compression, Record
from kafkatool.schema import legacy
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import compress

CODECS = tuple(Compression)


def _blob(rnd: random.Random, most: int) -> bytes | None:
    """A key or value: null now and then, else a few repeated bytes (compressible) or random ones."""
    pick = rnd.random()
    if pick < 0.15:
        return None
    n = rnd.randrange(most + 1)
    return bytes([rnd.randrange(256)]) * n if pick < 0.6 else rnd.randbytes(n)


def _wrapper(rnd: random.Random, magic: int, offset: int) -> tuple[bytes, int]:
    """A compressed wrapper of 1-6 inner messages at ``offset`` on (or one of the odd cases); the next offset."""
    n = rnd.randrange(1, 7)
    inner_magic = magic if rnd.random() < 0.9 else 1 - magic
    messages = [legacy.build_message(magic=inner_magic, attributes=0, key=_blob(rnd, 8), value=_blob(rnd, 60),
                                     timestamp=rnd.randrange(-1, 1 << 40)) for _ in range(n)]
    codec = rnd.choice(CODECS[1:])
    last = offset + n - 1
    odd = rnd.random()
    if odd < 0.05:  # an inner message compressed: the deep read refuses it
        messages[0] = legacy.build_message(magic=inner_magic, attributes=Compression.GZIP.value, key=None,
                                           value=compress(Compression.GZIP, b"x" * 30))
    offsets = list(range(n)) if magic == 1 else list(range(offset, offset + n))
    stored = last
    if magic == 1 and odd > 0.95:
        stored = 0  # librdkafka's wrapper offset 0: relative offsets taken as they are
    elif magic == 1 and 0.9 < odd <= 0.95:
        stored = rnd.randrange(0, n)  # below the last relative offset (an error when not 0)
    data = legacy.build_wrapper(magic=magic, codec=codec, offsets=offsets, messages=messages, last_offset=stored,
                                timestamp=rnd.randrange(-1, 1 << 40), log_append_time=rnd.random() < 0.3,
                                key=_blob(rnd, 4))
    return data, last + 1


def _v2(rnd: random.Random, offset: int) -> tuple[bytes, int]:
    n = rnd.randrange(1, 4)
    records = [Record(offset=k, timestamp=0, key=None, value=_blob(rnd, 30), offset_delta=k, timestamp_delta=k)
               for k in range(n)]
    return rb.build_records_batch(records, base_offset=offset, base_timestamp=1000), offset + n


def legacy_segment(rnd: random.Random, entries: int, *, v2: bool = True) -> bytes:
    """``entries`` entries: plain magic 0/1 messages, wrappers of every codec, odd cases, magic 2 batches (when
    ``v2``), now and then a bad CRC."""
    out = bytearray()
    offset = rnd.randrange(0, 1 << 20)
    for _ in range(entries):
        kind = rnd.random()
        magic = rnd.randrange(2)
        if kind < 0.45:
            attributes = rnd.choice((0, 0, 0, 8, 5, 6, 7))  # LogAppendTime; unknown codec ids
            value = _blob(rnd, 80)
            if attributes in (5, 6, 7) and rnd.random() < 0.5:
                value = None
            entry = legacy.build_legacy_entry(offset, magic=magic, attributes=attributes, key=_blob(rnd, 10),
                                              value=value, timestamp=rnd.randrange(-1, 1 << 40))
            offset += 1
        elif kind < 0.85:
            entry, offset = _wrapper(rnd, magic, offset)
        elif kind < 0.9:  # a null wrapper value
            entry = legacy.build_legacy_entry(offset, magic=magic, attributes=rnd.randrange(1, 5), key=None,
                                              value=None, timestamp=0)
            offset += 1
        elif v2:
            entry, offset = _v2(rnd, offset)
        else:
            continue
        if rnd.random() < 0.05:  # a bad CRC (the stored CRC of either magic)
            buf = bytearray(entry)
            buf[rb.LOG_OVERHEAD if buf[rb.MAGIC_OFFSET] != 2 else rb.CRC_OFFSET] ^= 0x40
            entry = bytes(buf)
        out += entry
    return bytes(out)
