"""Fuzz targets: one per decoder, each a function of arbitrary bytes, plus their seeds and the mutator.

The contract every target checks (issue 9): whatever the bytes, a decoder ends in a result or in a typed
:class:`~kafkatool.errors.DecodeError` that carries a byte position; any other exception, or a decode error
without a position, is a finding. Decompression is capped at ``FUZZ_MAX_OUTPUT`` so a zip bomb among the
inputs must end in a ``CodecError`` too. Shared by the bounded hypothesis tests (``tests/test_fuzz_decoders.py``)
and the long-run driver (``python -m tests.fuzz``).

Seeds come from the committed ``fixtures/`` (always present) and, when available, the Kafka-made corpus in the
shared reference directory (read in place, never copied).
"""

from __future__ import annotations

import os
import random
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kafkatool.errors import DecodeError
from kafkatool.model import Compression, Defect, LegacyBatch, RecordBatch
from kafkatool.schema import (
    checkpoint,
    clean_shutdown,
    codecs,
    legacy,
    meta_properties,
    offset_index,
    partition_metadata,
    producer_snapshot,
    time_index,
    topic_records,
    txn_index,
)
from kafkatool.schema import record_batch as rb
from kafkatool.schema.filenames import FileKind, classify
from kafkatool.schema.log_segment import walk_log
from kafkatool.storage.producer_state import ProducerStateEntry

REPO = Path(__file__).resolve().parents[2]
FUZZ_MAX_OUTPUT = 1 << 20  # decompression cap inside the fuzzers: a bomb must be refused, not inflated
MAX_SEED = 64 << 10  # seeds larger than this are cut into their first entries
INT32_EDGES = (0, 1, -1, 13, 14, 61, -(1 << 31), (1 << 31) - 1, 1 << 30, 0x7FFFFFF0)


class Finding(AssertionError):
    """A decoder broke its contract on some input."""


@dataclass(frozen=True)
class Target:
    """A decoder under fuzz: ``run`` decodes the bytes; ``kinds`` say which files seed it."""

    name: str
    run: Callable[[bytes], object]
    kinds: tuple[FileKind, ...]
    text: bool = False  # text formats: a position may be a line start, still required


def _drain(items: Iterator[object]) -> int:
    count = 0
    for item in items:
        if isinstance(item, Defect) and item.position is not None and item.position < 0:
            raise Finding(f"defect with a negative position: {item}")
        count += 1
    return count


def _log(data: bytes) -> object:
    """The segment walker, shallow then deep: it must never raise at all (defects are yielded)."""
    _drain(walk_log(data, "fuzz"))
    _drain(walk_log(data, "fuzz", deep=True, max_output=FUZZ_MAX_OUTPUT))
    return _drain(walk_log(memoryview(data), "fuzz", deep=True, verify_crc=False, max_output=FUZZ_MAX_OUTPUT))


def _batch(data: bytes) -> object:
    return rb.parse_batch(data, 0, deep=True, max_output=FUZZ_MAX_OUTPUT)


def _records(data: bytes) -> object:
    """The record loop over arbitrary payloads, under whatever header the first 61 bytes give."""
    header = rb.parse_batch_header(data, 0)
    return rb.decode_records(header, data[rb.HEADER_SIZE:], max_output=FUZZ_MAX_OUTPUT)


def _legacy(data: bytes) -> object:
    entry = legacy.parse_legacy_entry(data, 0)
    return legacy.inner_records(entry, max_output=FUZZ_MAX_OUTPUT)


def _legacy_bare(data: bytes) -> object:
    return legacy.parse_bare_message(data)


def _codec(codec: Compression) -> Callable[[bytes], object]:
    def run(data: bytes) -> object:
        out = codecs.decompress(codec, data, magic=2, max_output=FUZZ_MAX_OUTPUT)
        if len(out) > FUZZ_MAX_OUTPUT:
            raise Finding(f"{codec.label}: {len(out)} bytes returned above the {FUZZ_MAX_OUTPUT} cap")
        return out
    return run


def _lz4_magic0(data: bytes) -> object:
    return codecs.decompress(Compression.LZ4, data, magic=0, max_output=FUZZ_MAX_OUTPUT)


def _offset_index(data: bytes) -> object:
    index = offset_index.parse_offset_index(data, 100)
    offset_index.sanity_check(data, 100)
    return index


def _time_index(data: bytes) -> object:
    index = time_index.parse_time_index(data, 100)
    time_index.sanity_check(data, 100)
    return index


def _txn_index(data: bytes) -> object:
    entries = txn_index.parse_txn_index(data)
    txn_index.check_versions(entries)
    txn_index.sanity_check(entries, 0)
    return entries


def _snapshot(data: bytes) -> object:
    snap = producer_snapshot.parse_producer_snapshot(data)
    return [ProducerStateEntry.from_snapshot(e) for e in snap.entries]


def _offset_checkpoint(data: bytes) -> object:
    return checkpoint.parse_offset_checkpoint(data)


def _epoch_checkpoint(data: bytes) -> object:
    return checkpoint.parse_leader_epoch_checkpoint(data)


def _clean_shutdown(data: bytes) -> object:
    clean_shutdown.kafka_broker_epoch(data)  # Kafka's own read: never raises
    return clean_shutdown.parse_clean_shutdown(data)


def _topic_records(data: bytes) -> object:
    """Every registered internal-topic decoder on a key/value split of the bytes: it must never raise."""
    cut = data[0] % (len(data) + 1) if data else 0
    key, value = data[1:cut + 1] or None, data[cut + 1:]
    return [d.decode(key, value) for d in topic_records.decoders().values()]


_CHECKPOINTS = (FileKind.RECOVERY_POINT_CHECKPOINT, FileKind.REPLICATION_OFFSET_CHECKPOINT,
                FileKind.LOG_START_OFFSET_CHECKPOINT, FileKind.CLEANER_OFFSET_CHECKPOINT)
_LOGS = (FileKind.LOG,)

TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("log", _log, _LOGS),
    Target("batch", _batch, _LOGS),
    Target("records", _records, _LOGS),
    Target("legacy", _legacy, _LOGS),
    Target("legacy-message", _legacy_bare, _LOGS),
    Target("gzip", _codec(Compression.GZIP), ()),
    Target("snappy", _codec(Compression.SNAPPY), ()),
    Target("lz4", _codec(Compression.LZ4), ()),
    Target("lz4-magic0", _lz4_magic0, ()),
    Target("zstd", _codec(Compression.ZSTD), ()),
    Target("offset-index", _offset_index, (FileKind.OFFSET_INDEX,)),
    Target("time-index", _time_index, (FileKind.TIME_INDEX,)),
    Target("txn-index", _txn_index, (FileKind.TXN_INDEX,)),
    Target("producer-snapshot", _snapshot, (FileKind.PRODUCER_SNAPSHOT,)),
    Target("offset-checkpoint", _offset_checkpoint, _CHECKPOINTS, text=True),
    Target("leader-epoch-checkpoint", _epoch_checkpoint, (FileKind.LEADER_EPOCH_CHECKPOINT,), text=True),
    Target("partition-metadata", partition_metadata.parse_partition_metadata, (FileKind.PARTITION_METADATA,),
           text=True),
    Target("meta-properties", meta_properties.parse_meta_properties, (FileKind.META_PROPERTIES,), text=True),
    Target("clean-shutdown", _clean_shutdown, (FileKind.CLEAN_SHUTDOWN,), text=True),
    Target("topic-records", _topic_records, _LOGS),
)}
NEVER_RAISES = frozenset({"log", "topic-records"})


def check(target: Target, data: bytes) -> None:
    """Run ``target`` on ``data``; raise :class:`Finding` if the decoder breaks its contract."""
    try:
        target.run(data)
    except DecodeError as err:
        if target.name in NEVER_RAISES:
            raise Finding(f"{target.name}: raised instead of reporting a defect: {err!r}") from err
        if not isinstance(err.position, int) or err.position < 0:
            raise Finding(f"{target.name}: decode error without a byte position: {err!r}") from err
    except RecursionError as err:
        raise Finding(f"{target.name}: unbounded recursion") from err
    except Exception as err:
        raise Finding(f"{target.name}: uncaught {type(err).__name__}: {err}") from err


# --- seeds ----------------------------------------------------------------------------------------


def _seed_roots() -> list[Path]:
    roots = [REPO / "fixtures"]
    shared = os.environ.get("KAFKATOOL_SHARED")
    base = Path(shared) if shared else REPO.parent / "shared"
    if (base / "corpus").is_dir():
        roots.append(base / "corpus")
    return roots


@cache
def _files_by_kind() -> dict[FileKind, list[Path]]:
    found: dict[FileKind, list[Path]] = {}
    for root in _seed_roots():
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found.setdefault(classify(path.name), []).append(path)
    return found


def _entries(data: bytes) -> list[tuple[LegacyBatch | RecordBatch, bytes]]:
    """Each whole entry of a log buffer with its bytes."""
    out = []
    for item in walk_log(data, "seed"):
        if isinstance(item, RecordBatch | LegacyBatch):
            out.append((item, data[item.position:item.position + item.size_in_bytes]))
    return out


def _codec_seeds(codec: Compression) -> list[bytes]:
    samples = [b"", b"\0" * 4096, bytes(range(256)) * 8, b"kafka " * 500, random.Random(9).randbytes(3000)]
    seeds = [codecs.compress(codec, s) for s in samples]
    for data in _log_seeds():
        for entry, raw in _entries(data):
            if isinstance(entry, RecordBatch) and entry.attributes & 0x07 == codec.value:
                seeds.append(raw[rb.HEADER_SIZE:])
    return seeds


@cache
def _log_seeds() -> tuple[bytes, ...]:
    seeds: list[bytes] = []
    for path in _files_by_kind().get(FileKind.LOG, []):
        data = path.read_bytes()
        if not data:
            continue
        if len(data) <= MAX_SEED:
            seeds.append(data)
        entries = _entries(data[:4 << 20])
        seeds += [raw for _, raw in entries[:3] if len(raw) <= MAX_SEED]
        if len(entries) > 1:
            second = entries[1][0]
            seeds.append(data[:min(MAX_SEED, second.position + second.size_in_bytes)])
    return tuple(dict.fromkeys(seeds))


@cache
def seeds(name: str) -> tuple[bytes, ...]:
    """Valid inputs for target ``name`` (deduplicated, in a stable order)."""
    target = TARGETS[name]
    if name == "lz4-magic0":
        return tuple(_codec_seeds(Compression.LZ4))
    for codec in Compression:
        if name == codec.label:
            return tuple(dict.fromkeys(_codec_seeds(codec)))
    if target.kinds == _LOGS:
        logs = _log_seeds()
        if name == "legacy-message":
            return tuple(raw[rb.LOG_OVERHEAD:] for data in logs for e, raw in _entries(data)
                         if isinstance(e, LegacyBatch)) or (b"",)
        if name == "legacy":  # legacy entries first: a magic 2 seed only tests the magic check
            legacy_logs = tuple(d for d in logs if len(d) > rb.MAGIC_OFFSET and d[rb.MAGIC_OFFSET] in (0, 1))
            return legacy_logs or logs or (b"",)
        return logs or (b"",)
    out = [p.read_bytes()[:MAX_SEED] for kind in target.kinds for p in _files_by_kind().get(kind, [])]
    return tuple(dict.fromkeys(out)) or (b"",)


# --- mutation -------------------------------------------------------------------------------------


def _set_int32(data: bytearray, rnd: random.Random) -> None:
    if len(data) < 4:
        return
    known = [p for p in (8, 12, 17, 23, 27, 57, rb.HEADER_SIZE) if p + 4 <= len(data)]
    pos = rnd.choice(known) if known and rnd.random() < 0.5 else rnd.randrange(len(data) - 3)
    value = rnd.choice(INT32_EDGES) if rnd.random() < 0.8 else rnd.randrange(-(1 << 31), 1 << 31)
    data[pos:pos + 4] = struct.pack(">i", value)


def _set_varint(data: bytearray, rnd: random.Random) -> None:
    """Replace one byte by a zig-zag varint edge value (record lengths, counts, key sizes)."""
    if not data:
        return
    pos = rnd.randrange(len(data))
    value = rnd.choice(INT32_EDGES)
    raw = (value << 1) ^ (value >> 63)
    raw &= (1 << 64) - 1
    enc = bytearray()
    while raw >= 0x80:
        enc.append(raw & 0x7F | 0x80)
        raw >>= 7
    enc.append(raw)
    data[pos:pos + 1] = enc


def mutate(data: bytes, rnd: random.Random, pool: tuple[bytes, ...] = ()) -> bytes:
    """One to four random mutations: bit flips, truncation, splices, int32 and varint edge values, chunks."""
    out = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(9)
        if op == 0 and out:
            for _ in range(rnd.randint(1, 8)):
                i = rnd.randrange(len(out))
                out[i] ^= 1 << rnd.randrange(8)
        elif op == 1 and out:
            del out[rnd.randrange(len(out) + 1):]
        elif op == 2 and pool:
            other = rnd.choice(pool)
            out = out[:rnd.randrange(len(out) + 1)] + other[rnd.randrange(len(other) + 1):]
        elif op == 3:
            _set_int32(out, rnd)
        elif op == 4:
            _set_varint(out, rnd)
        elif op == 5:
            at = rnd.randrange(len(out) + 1)
            out[at:at] = rnd.randbytes(rnd.randint(1, 16))
        elif op == 6 and out:
            a = rnd.randrange(len(out))
            del out[a:a + rnd.randint(1, 64)]
        elif op == 7 and out:
            a = rnd.randrange(len(out))
            b = min(len(out), a + rnd.randint(1, 256))
            at = rnd.randrange(len(out) + 1)
            out[at:at] = out[a:b]
        elif op == 8 and out:
            i = rnd.randrange(len(out))
            out[i] = rnd.choice((0, 0xFF, 0x7F, 0x80, 2, 1))
    return bytes(out)


def fix_crc(data: bytes) -> bytes:
    """Re-stamp a magic 2 CRC (or a legacy message CRC) so a mutation reaches the code behind the check."""
    if len(data) >= rb.HEADER_SIZE and data[rb.MAGIC_OFFSET] == rb.MAGIC:
        buf = bytearray(data)
        (length,) = struct.unpack_from(">i", buf, 8)
        end = min(len(buf), max(rb.ATTRIBUTES_OFFSET, rb.LOG_OVERHEAD + length))
        struct.pack_into(">I", buf, rb.CRC_OFFSET, rb.compute_crc(bytes(buf[:end]), 0, end - rb.LOG_OVERHEAD))
        return bytes(buf)
    if len(data) > rb.MAGIC_OFFSET and data[rb.MAGIC_OFFSET] in (0, 1):
        buf = bytearray(data)
        struct.pack_into(">I", buf, rb.LOG_OVERHEAD, zlib.crc32(bytes(buf[rb.LOG_OVERHEAD + 4:])))
        return bytes(buf)
    return data


def generate(name: str, rnd: random.Random) -> bytes:
    """One input for target ``name``: random bytes (1 in 10), else a mutated seed (CRC re-stamped half the time)."""
    if rnd.random() < 0.1:
        return rnd.randbytes(rnd.choice((0, 1, 8, 61, 100, rnd.randint(0, 4096))))
    pool = seeds(name)
    data = mutate(rnd.choice(pool), rnd, pool)
    if TARGETS[name].kinds == _LOGS and rnd.random() < 0.5:
        data = fix_crc(data)
    return data
