"""Fuzzing every entry point of ``kafkatool._native`` (the Rust core) through its Python binding.

:data:`NATIVE` is the one list of entry points: each names a function of ``kafkatool._native``, how to call it
on arbitrary bytes, and (where there is one) the Python reference it must agree with, field by field: the same
result, or the native core handing the input back (``None``, "the Python path decides") where the contract
allows it. Whatever the bytes, the native call must return (a panic is a ``PanicException`` or the guard's
error, both findings), within :data:`HANG_S`. A test (``tests/test_fuzz_native.py``) fails when the module has
a function this list does not name, so a new entry point is added here and nowhere else.

Run: ``python -m tests.fuzz.native [--target NAME|all] [--runs N] [--engine atheris|random|cargo] [--json F]``.
``atheris`` is libFuzzer through the Python binding (``pip install -e '.[fuzz]'``), coverage-guided by the
Python side (the references), one process per target; ``random`` is the seeded mutator of
:mod:`tests.fuzz.targets`, through the binding too; ``cargo`` runs the entry point's cargo-fuzz target in
``kafkatool/_core/fuzz`` (``cargo install cargo-fuzz``; ``RUSTC_BOOTSTRAP=1`` on a stable toolchain), coverage-
guided by the Rust code itself, no Python reference. Executions and rates come from libFuzzer's final stats.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy

from tests.fuzz.targets import FUZZ_MAX_OUTPUT, Finding, mutate, seeds

HANG_S = 2.0  # one input taking longer than this is a finding (a hang)
_ADDRESS = re.compile(r" object at 0x[0-9a-f]+")  # in a repr: the state is compared apart
Normal = Any


@contextlib.contextmanager
def python_path() -> Iterator[None]:
    """``KAFKATOOL_NATIVE=0`` for the block: the public functions take the Python path (the reference)."""
    old = os.environ.get("KAFKATOOL_NATIVE")
    os.environ["KAFKATOOL_NATIVE"] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["KAFKATOOL_NATIVE"]
        else:
            os.environ["KAFKATOOL_NATIVE"] = old


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    """A call's result, or the error it raised as ``(type name, message)`` (the Python path's defects)."""
    try:
        return "ok", fn()
    except Exception as err:
        return "error", (type(err).__name__, str(err))


# --- walk: the segment walk's fast chain (kafkatool/_core/src/walk.rs; reference batch_columns.scan_chain) ---


def _walk_args(data: bytes) -> tuple[bytes, int, int, int, bool]:
    """The first 4 bytes choose start, limit cut, stop cut and CRC check; the rest is the segment."""
    head, seg = data[:4].ljust(4, b"\0"), data[4:]
    n = len(seg)
    pos = head[0] % 8 if head[0] < 200 else 0
    limit = n - (head[1] % 32 if head[1] >= 128 else 0)
    stop = limit if head[2] < 128 else (head[2] * max(n, 1)) // 256
    return seg, pos, max(limit, 0), stop, head[3] % 2 == 0


def _chain_reference(seg: bytes, pos: int, limit: int, stop: int, verify: bool) -> Normal:
    from kafkatool.schema import batch_columns as bc

    positions: list[int] = []
    bad: list[int] = []
    reached = bc.scan_chain(seg, pos, limit, stop, verify, positions, bad)
    return positions, _native_headers(seg, positions), bad if verify else [], reached


def _native_headers(seg: bytes, positions: list[int]) -> bytes:
    """The headers of the batches at ``positions`` in the native walk's layout: every field in the machine's byte
    order (``batch_columns.native_header_dtype``)."""
    from kafkatool.schema import batch_columns as bc

    gathered = bc.gather_headers(seg, numpy.asarray(positions, dtype=numpy.int64))
    return gathered.astype(bc.native_header_dtype()).tobytes()


def _chain_native(out: Any, verify: bool) -> Normal:
    positions, headers, bad, reached = out
    return positions.tolist(), bytes(headers.tobytes()), bad.tolist() if verify else [], int(reached)


def _walk_bytes(core: ModuleType, data: bytes) -> Normal:
    seg, pos, limit, stop, verify = _walk_args(data)
    return _chain_native(core.walk_bytes(seg, pos, limit, stop, verify), verify)


_SHM = Path("/dev/shm")  # a memory file system: a file per input costs microseconds, not a disk write
_SCRATCH = (_SHM if _SHM.is_dir() else Path(tempfile.gettempdir())) / f"kafkatool-fuzz-walk-{os.getpid()}.log"


def _walk_path(core: ModuleType, data: bytes) -> Normal:
    seg, pos, limit, stop, verify = _walk_args(data)
    _SCRATCH.write_bytes(seg)
    return _chain_native(core.walk_path(str(_SCRATCH), pos, limit, stop, verify), verify)


def _walk_reference(data: bytes) -> Normal:
    return _chain_reference(*_walk_args(data))


# --- walk_entries: the walk with legacy framing (walk.rs scan_entries; reference log_segment.walk_log) ---


def _entries_reference(seg: bytes, pos: int, limit: int, stop: int, verify: bool) -> Normal:
    """What the native walk must give: the Python walker's entries from ``pos`` over ``seg[:limit]`` up to the first
    defect other than a CRC mismatch, or the first entry at or past ``stop`` (legacy entries as columns)."""
    from kafkatool.model import Defect, RecordBatch
    from kafkatool.reading.columns import LegacyColumns
    from kafkatool.schema.log_segment import walk_log

    buf = seg[:limit]
    positions: list[int] = []
    bad: list[int] = []
    walked = []
    at = pos
    for item in walk_log(buf, "f", verify_crc=verify, start=pos, max_output=FUZZ_MAX_OUTPUT) if pos >= 0 else ():
        if at >= stop or (isinstance(item, Defect) and item.code != "crc-mismatch"):
            break
        if isinstance(item, Defect):
            continue
        if isinstance(item, RecordBatch):
            positions.append(item.position)
            if item.crc_valid is False:
                bad.append(item.position)
        else:
            walked.append(item)
        at = item.position + item.size_in_bytes
    return positions, _native_headers(seg, positions), bad, LegacyColumns.from_entries(walked).rows(), at


def _entries_native(out: Any, seg: bytes) -> Normal:
    from kafkatool.reading.columns import LegacyColumns

    positions, headers, bad, legacy, reached = out
    columns = LegacyColumns.from_arrays(legacy)
    with python_path():  # the spans the native walk hands back, as scan_buffer completes them
        columns.resolve_spans(seg, FUZZ_MAX_OUTPUT)
    return positions.tolist(), bytes(headers.tobytes()), bad.tolist(), columns.rows(), int(reached)


def _walk_entries_bytes(core: ModuleType, data: bytes) -> Normal:
    seg, pos, limit, stop, verify = _walk_args(data)
    return _entries_native(core.walk_entries_bytes(seg, pos, limit, stop, verify, FUZZ_MAX_OUTPUT), seg)


def _walk_entries_path(core: ModuleType, data: bytes) -> Normal:
    seg, pos, limit, stop, verify = _walk_args(data)
    _SCRATCH.write_bytes(seg)
    return _entries_native(core.walk_entries_path(str(_SCRATCH), pos, limit, stop, verify, FUZZ_MAX_OUTPUT), seg)


def _walk_entries_reference(data: bytes) -> Normal:
    return _entries_reference(*_walk_args(data))


def _same(native: Normal, reference: Normal) -> str | None:
    return None if native == reference else f"native {native!r:.300} != Python {reference!r:.300}"


# --- codecs: decompression under the cap (kafkatool/_core/src/codecs.rs; reference schema.codecs) ---


def _codec_args(data: bytes) -> tuple[int, bytes, int]:
    """First byte: the codec (1 gzip, 2 snappy, 3 lz4, 4 zstd); second: magic 0, 1 or 2; the rest, the payload."""
    head = data[:2].ljust(2, b"\0")
    return 1 + head[0] % 4, data[2:], head[1] % 3


def _decompress(core: ModuleType, data: bytes) -> Normal:
    codec, payload, magic = _codec_args(data)
    out = core.decompress(codec, payload, magic, FUZZ_MAX_OUTPUT)
    if out is not None and len(out) > FUZZ_MAX_OUTPUT:
        raise Finding(f"decompress returned {len(out)} bytes above the {FUZZ_MAX_OUTPUT} cap")
    return None if out is None else bytes(out)


def _decompress_reference(data: bytes) -> Normal:
    from kafkatool.model import Compression
    from kafkatool.schema import codecs

    codec, payload, magic = _codec_args(data)
    with python_path():
        return _outcome(lambda: codecs.decompress(Compression(codec), payload, magic=magic,
                                                  max_output=FUZZ_MAX_OUTPUT))


def _decompress_agree(native: Normal, reference: Normal) -> str | None:
    """Native bytes must be exactly the Python path's; ``None`` (handed back) is always allowed."""
    if native is None:
        return None
    kind, value = reference
    if kind != "ok":
        return f"native decoded {len(native)} bytes where the Python path raised {value}"
    return None if bytes(value) == native else f"native {len(native)} bytes != Python {len(value)} bytes"


# --- whole paths: the public function that reaches the entry point, native on against KAFKATOOL_NATIVE=0 ------
# Each takes the input's first byte as a mode and the rest as a segment; the native run must produce exactly what
# the Python path produces (same records, same text byte for byte, same defects and errors).


def _scratch_segment(seg: bytes) -> Path:
    """``seg`` as ``t-0/00000000000000000000.log`` in a log dir of this process on the memory file system."""
    part = _SCRATCH.with_suffix("") / "logdir" / "t-0"
    part.mkdir(parents=True, exist_ok=True)
    path = part / "00000000000000000000.log"
    path.write_bytes(seg)
    return path


def _records_public(data: bytes) -> Normal:
    """``record_batch.decode_records`` under the header the first 61 bytes give (decompressing if they say so)."""
    from kafkatool.schema import record_batch as rb

    header = rb.parse_batch_header(data, 0)
    return rb.decode_records(header, data[rb.HEADER_SIZE:], max_output=FUZZ_MAX_OUTPUT)


def _decode_records(core: ModuleType, data: bytes) -> Normal:
    count = int.from_bytes(data[:2].ljust(2, b"\0"), "big") - 8  # the raw call, any count (a few negative)
    core.decode_records(data[2:], count)
    return _outcome(lambda: _records_public(data))


def _decode_records_reference(data: bytes) -> Normal:
    with python_path():
        return _outcome(lambda: _records_public(data))


def _dump(data: bytes, source: str) -> Normal:
    """``dump-segment -f kafka`` of the segment (first byte: 0 shallow, 1 ``--deep``, 2 ``--print-data``): from the
    mapped file (``run_kafka_format``, the CLI's path) or, ``source="bytes"``, from ``bytes`` (``dump_log``)."""
    import io

    from kafkatool.engine import dls
    from kafkatool.render import kafka_text
    from kafkatool.schema.codecs import ReadLimits

    mode = data[0] % 3 if data else 0
    path = _scratch_segment(data[1:])
    if source == "bytes":
        seg, out = data[1:], io.StringIO()
        session = dls.DlsSession()
        dump = dls.dump_log(session, str(path), seg, deep=mode > 0, print_data=mode == 2, emit=out.write,
                            max_output=FUZZ_MAX_OUTPUT, fast_lines=kafka_text._fast_lines(str(path), seg))
        return out.getvalue(), dump
    out, err = io.StringIO(), io.StringIO()
    code = kafka_text.run_kafka_format([str(path)], deep=mode > 0, print_data=mode == 2, verify_index_only=False,
                                       index_sanity_check=False, max_message_size=5 << 20, max_bytes=None,
                                       skip_record_metadata=False, out=out, err=err,
                                       limits=ReadLimits(FUZZ_MAX_OUTPUT))
    return code, out.getvalue(), err.getvalue()


def _deep_inflated(data: bytes) -> Normal:
    """The raw call on the input cut in two (a batch, and a payload said to be its inflated records), then the
    deep dump of the segment (zstd batches without a content checksum reach ``dump_deep_inflated``)."""
    from kafkatool.schema import native

    core = native.core()
    if core is not None:
        cut = int.from_bytes(data[:2].ljust(2, b"\0"), "big") % (len(data) + 1)
        core.dump_deep_inflated(data[2:cut], 0, data[cut:], -1, True, False, FUZZ_MAX_OUTPUT)
    return _dump(bytes([1 + (data[0] % 2 if data else 0)]) + data[1:], "path")


#: ``dump-segment -f jsonl`` modes by the input's first byte: (deep, print_data, key decoder, value decoder).
JSONL_MODES = ((False, False, "utf8", "utf8"), (True, False, "utf8", "utf8"), (True, True, "utf8", "utf8"),
               (True, True, "hex", "base64"), (True, True, "none", "utf8"), (True, True, "base64", "none"))


def jsonl_dump(path: Path, deep: bool, print_data: bool, key: str = "utf8", value: str = "utf8",
               max_bytes: int | None = None, text: bool = False, verify: bool = False) -> Normal:
    """``dump-segment -f jsonl`` (``--verify``) of the segment at ``path`` (``commands.dump_segment.dump_log`` into
    a ``JsonlOutput`` over a byte stream, as the command runs it, or over a plain text stream with ``text``), under
    the fuzz decompression cap: the bytes written, the defects or the error, and what the dump saw."""
    import io

    from kafkatool.commands import dump_segment
    from kafkatool.reading.context import reset_limits, set_limits
    from kafkatool.render.output import JsonlOutput
    from kafkatool.schema.codecs import ReadLimits

    raw = io.BytesIO()
    stream = io.StringIO() if text else io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    out = JsonlOutput(stream)
    opts = dump_segment.Options(deep=deep or print_data, print_data=print_data, key_decoder=key,
                                value_decoder=value, offsets=(None, None), max_bytes=max_bytes, verify=verify)
    token = set_limits(ReadLimits(FUZZ_MAX_OUTPUT))
    try:
        defects = _outcome(lambda: dump_segment.dump_log(path, out, opts, verify))
    finally:
        reset_limits(token)
    out.finish({})
    written = stream.getvalue().encode() if isinstance(stream, io.StringIO) else raw.getvalue()
    return written, defects, opts.seen


def _jsonl(data: bytes) -> Normal:
    """:func:`jsonl_dump` of the segment, the mode from the first byte (:data:`JSONL_MODES`, and ``--verify`` in
    every other round of them)."""
    pick = data[0] if data else 0
    mode = JSONL_MODES[pick % len(JSONL_MODES)]
    return jsonl_dump(_scratch_segment(data[1:]), *mode, verify=(pick // len(JSONL_MODES)) % 2 == 1)


def _jsonl_inflated(data: bytes) -> Normal:
    """The raw call on the input cut in two (a batch, and a payload said to be its inflated records), then the
    deep jsonl dump of the segment (lz4 batches and zstd ones without a content checksum reach
    ``jsonl_rows_inflated``)."""
    from kafkatool.schema import native

    core = native.core()
    if core is not None:
        cut = int.from_bytes(data[:2].ljust(2, b"\0"), "big") % (len(data) + 1)
        core.jsonl_rows_inflated(data[2:cut], 0, data[cut:], b'"f"', "utf8", "hex", FUZZ_MAX_OUTPUT)
    return _jsonl(bytes([1 + (data[0] % 5 if data else 0)]) + data[1:])


#: ``dump-segment``'s table widths by the input's first byte: a pipe's default, 80 and 40 columns, ``--wide``.
TABLE_WIDTHS = ((200, False), (80, False), (40, False), (200, True))


def table_dump(path: Path, width: int, wide: bool) -> Normal:
    """``dump-segment``'s default table of the segment at ``path`` (``commands.dump_segment.dump_log`` into a
    ``TableOutput`` of ``width`` columns over a byte stream, as the command runs it): the bytes written and the
    defects or the error."""
    import io

    from kafkatool.commands import dump_segment
    from kafkatool.reading.context import reset_limits, set_limits
    from kafkatool.render.output import TableOutput
    from kafkatool.schema.codecs import ReadLimits

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    out = TableOutput(stream, io.StringIO(), color=False, wide=wide)
    out.console.width = out.width = width
    opts = dump_segment.Options(deep=False, print_data=False, key_decoder="utf8", value_decoder="utf8",
                                offsets=(None, None), max_bytes=None, verify=False, wide=wide)
    token = set_limits(ReadLimits(FUZZ_MAX_OUTPUT))
    try:
        defects = _outcome(lambda: dump_segment.dump_log(path, out, opts, False))
    finally:
        reset_limits(token)
    stream.flush()
    return raw.getvalue(), defects


def _table(data: bytes) -> Normal:
    """:func:`table_dump` of the segment, the width from the first byte (:data:`TABLE_WIDTHS`)."""
    width, wide = TABLE_WIDTHS[(data[0] if data else 0) % len(TABLE_WIDTHS)]
    return table_dump(_scratch_segment(data[1:]), width, wide)


def _table_seeds() -> tuple[bytes, ...]:
    return tuple(bytes([mode]) + s for s in seeds("log") + _built_segments() for mode in range(len(TABLE_WIDTHS)))


def _restart(data: bytes) -> Normal:
    """``simulate-restart --assume unclean --recovery-point 0`` and ``replay-producers`` of the segment's log dir."""
    from kafkatool.engine.replay import replay
    from kafkatool.engine.restart import RestartOptions, simulate_restart
    from kafkatool.reading.logdir import partition_with_high_watermark
    from kafkatool.reading.restart_inputs import read_restart_inputs

    path = _scratch_segment(data)
    inputs = read_restart_inputs(path.parent.parent)
    restarted = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(
        now=1_800_000_000_000, assume="unclean", recovery_point=0, plan_output=False))
    part, _hw = partition_with_high_watermark(path.parent)
    replayed = replay(part)
    manager = replayed.manager
    state = (manager.snapshot_entries(), sorted(manager.ongoing.items()), manager.transactions,
             manager.map_end_offset, manager.last_timestamp)
    return _ADDRESS.sub("", repr(restarted)), _ADDRESS.sub("", repr(replayed)), repr(state)


def _built_segments() -> tuple[bytes, ...]:
    """A few batches of every codec written by kafkatool's own writer (the construct declarations)."""
    from kafkatool.model import Compression, Record
    from kafkatool.schema import record_batch as rb

    recs = [Record(offset=i, timestamp=0, key=b"k%d" % i, value=b"value %d " % i * 20, offset_delta=i,
                   timestamp_delta=i) for i in range(5)]
    return tuple(b"".join(rb.build_records_batch(recs, base_offset=5 * k, base_timestamp=1_700_000_000_000,
                                                 compression=codec) for k in range(3)) for codec in Compression)


def _mode_seeds() -> tuple[bytes, ...]:
    return tuple(bytes([mode]) + s for s in seeds("log") + _built_segments() for mode in range(3))


def _jsonl_seeds() -> tuple[bytes, ...]:
    return tuple(bytes([mode]) + s for s in seeds("log") + _built_segments() for mode in range(2 * len(JSONL_MODES)))


def _inflated_seeds() -> tuple[bytes, ...]:
    """``_deep_inflated``'s layout (and the cargo target's): a two-byte cut, a whole batch, its records payload
    as if inflated (the first magic 2 batch of each built segment, uncompressed, so its payload is its records)."""
    from kafkatool.schema import record_batch as rb

    out = []
    for seg in _built_segments():
        if len(seg) < rb.BATCH_OVERHEAD or seg[rb.FIELD_OFFSETS["magic"]] != 2:
            continue
        end = rb.LOG_OVERHEAD + int.from_bytes(seg[8:12], "big")
        batch = seg[:end]
        cut = 2 + len(batch)
        if cut < 1 << 16:
            out.append(cut.to_bytes(2, "big") + batch + batch[rb.BATCH_OVERHEAD:])
    return tuple(out) or _mode_seeds()


def _log_seeds() -> tuple[bytes, ...]:
    return seeds("log")


def _record_seeds() -> tuple[bytes, ...]:
    return seeds("records")


def _codec_seeds() -> tuple[bytes, ...]:
    out = []
    for selector, name in enumerate(("gzip", "snappy", "lz4", "zstd")):
        out += [bytes([selector, 2]) + s for s in seeds(name)]
    out += [bytes([2, 0]) + s for s in seeds("lz4-magic0")]
    return tuple(out) + _lz4_edge_seeds()


def _lz4_edge_seeds() -> tuple[bytes, ...]:
    """lz4 frames whose block ends where liblz4 leaves its fast loop (tests.fuzz.lz4_blocks), for magic 0, 1, 2."""
    from tests.fuzz.lz4_blocks import edge_blocks, frame, hand_blocks

    rnd = random.Random("lz4-edges")
    blocks = [*hand_blocks(), *list(edge_blocks(rnd))[::20]]
    return tuple(bytes([2, i % 3]) + frame(block, capacity) for i, (block, capacity) in enumerate(blocks))


def _walk_seeds() -> tuple[bytes, ...]:
    return tuple(b"\0\0\0\0" + s for s in seeds("log"))


def _legacy_walk_seeds() -> tuple[bytes, ...]:
    """Kafka-made legacy logs and generated legacy message sets (every codec, the odd cases, magic 2 among them)."""
    from tests.legacy_sets import legacy_segment

    made = tuple(b"\0\0\0\0" + legacy_segment(random.Random(k), 2 + k % 12, v2=k % 3 == 0) for k in range(40))
    return tuple(b"\0\0\0\0" + s for s in seeds("legacy")) + made


@dataclass(frozen=True)
class NativeTarget:
    """One entry point of ``kafkatool._native`` under fuzz."""

    function: str
    call: Callable[[ModuleType, bytes], Normal]
    seeds: Callable[[], tuple[bytes, ...]]
    reference: Callable[[bytes], Normal] | None = None
    agree: Callable[[Normal, Normal], str | None] = _same
    rust: str | None = None  # the cargo-fuzz target (kafkatool/_core/fuzz) over the Rust function it wraps


def _whole(name: str, fn: Callable[[bytes], Normal], seed: Callable[[], tuple[bytes, ...]],
           rust: str | None = None) -> NativeTarget:
    """An entry point fuzzed through a whole-path driver ``fn``: its native run against the Python path's."""
    def call(core: ModuleType, data: bytes) -> Normal:
        return _outcome(lambda: fn(data))

    def reference(data: bytes) -> Normal:
        with python_path():
            return _outcome(lambda: fn(data))

    return NativeTarget(name, call, seed, reference, rust=rust)


#: Every entry point of ``kafkatool._native`` (but ``build_info``), in one place.
NATIVE: dict[str, NativeTarget] = {t.function: t for t in (
    NativeTarget("walk_bytes", _walk_bytes, _walk_seeds, _walk_reference, rust="walk"),
    NativeTarget("walk_path", _walk_path, _walk_seeds, _walk_reference, rust="walk_file"),
    NativeTarget("walk_entries_bytes", _walk_entries_bytes, _legacy_walk_seeds, _walk_entries_reference,
                 rust="walk_entries"),
    NativeTarget("walk_entries_path", _walk_entries_path, _legacy_walk_seeds, _walk_entries_reference,
                 rust="walk_entries_file"),
    NativeTarget("decompress", _decompress, _codec_seeds, _decompress_reference, _decompress_agree,
                 rust="decompress"),
    NativeTarget("decode_records", _decode_records, _record_seeds, _decode_records_reference, rust="decode_records"),
    _whole("dls_batch_lines_bytes", lambda d: _dump(d, "bytes"), _mode_seeds, "dls_batch_lines"),
    _whole("dls_batch_lines_path", lambda d: _dump(d, "path"), _mode_seeds, "dls_batch_lines"),
    _whole("dump_deep", lambda d: _dump(bytes([1 + (d[0] % 2 if d else 0)]) + d[1:], "path"), _mode_seeds,
           "dump_deep"),
    _whole("dump_deep_inflated", _deep_inflated, _inflated_seeds, "dump_deep_inflated"),
    _whole("jsonl_rows", _jsonl, _jsonl_seeds, "jsonl_rows"),
    _whole("jsonl_rows_inflated", _jsonl_inflated, _inflated_seeds, "jsonl_rows_inflated"),
    _whole("table_widths", _table, _table_seeds, "table"),
    _whole("table_lines", _table, _table_seeds, "table"),
    _whole("recover_segment_scan", _restart, _log_seeds, "recover_segment_scan"),
    _whole("replay_producers", _restart, _log_seeds, "replay_producers"),
)}
RUST_FUZZ = Path(__file__).resolve().parents[2] / "kafkatool" / "_core" / "fuzz"
NOT_FUZZED = frozenset({"build_info"})  # no input


def entry_points(core: ModuleType) -> list[str]:
    """The module's functions (every public callable but :data:`NOT_FUZZED`)."""
    return sorted(n for n in dir(core) if not n.startswith("_") and callable(getattr(core, n))
                  and n not in NOT_FUZZED and not isinstance(getattr(core, n), type))


def check(core: ModuleType, target: NativeTarget, data: bytes) -> None:
    """One input: the native call returns in time, and agrees with the reference; else :class:`Finding`."""
    began = time.perf_counter()
    try:
        native = target.call(core, data)
    except Finding:
        raise
    except BaseException as err:  # a PanicException is a BaseException
        if isinstance(err, KeyboardInterrupt):
            raise
        raise Finding(f"{target.function}: raised {type(err).__name__}: {err}") from err
    took = time.perf_counter() - began
    if took > HANG_S:
        raise Finding(f"{target.function}: {took:.1f} s on one {len(data)}-byte input (a hang)")
    if target.reference is not None:
        problem = target.agree(native, target.reference(data))
        if problem:
            raise Finding(f"{target.function}: differs from the Python reference: {problem}")


def _core() -> ModuleType:
    from kafkatool.schema import native

    core = native.core()
    if core is None:
        raise SystemExit(f"the native core is not usable: {native.why_not()}")
    return core


def run_random(name: str, runs: int, seed: int, artifacts: Path, seconds: float | None = None) -> dict[str, Any]:
    """``runs`` mutated inputs (the seeded mutator of tests.fuzz.targets) through one entry point, or fewer when
    ``seconds`` run out first."""
    core, target = _core(), NATIVE[name]
    pool = target.seeds() or (b"",)
    rnd = random.Random(f"{seed}:native:{name}")
    started, findings, done = time.monotonic(), 0, 0
    for done in range(1, runs + 1):
        data = mutate(rnd.choice(pool), rnd, pool)
        try:
            check(core, target, data)
        except Finding as err:
            findings += 1
            artifacts.mkdir(parents=True, exist_ok=True)
            path = artifacts / f"native-{name}-{done}.bin"
            path.write_bytes(data)
            print(f"FINDING {err} (input saved to {path})", file=sys.stderr)
        if done % 100000 == 0:
            print(f"  {name}: {done} inputs, {done / (time.monotonic() - started):.0f}/s", file=sys.stderr)
        if seconds is not None and done % 100 == 0 and time.monotonic() - started > seconds:
            break
    took = time.monotonic() - started
    return {"target": name, "engine": "random", "execs": done, "seconds": took, "execs_per_s": done / took,
            "findings": findings}


def run_atheris(name: str, runs: int, artifacts: Path, max_len: int) -> None:
    """Coverage-guided libFuzzer through atheris on one entry point (this process ends when libFuzzer does)."""
    import atheris  # type: ignore[import-not-found]

    core, target = _core(), NATIVE[name]
    corpus = artifacts / f"corpus-{name}"
    corpus.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(target.seeds()):
        (corpus / f"seed-{i}").write_bytes(data[:max_len])

    def one(data: bytes) -> None:
        check(core, target, data)

    argv = [sys.argv[0], f"-runs={runs}", f"-artifact_prefix={artifacts}/{name}-", f"-max_len={max_len}",
            f"-timeout={int(HANG_S * 5)}", "-print_final_stats=1", str(corpus)]
    atheris.instrument_all()  # coverage of the Python side (the references, the adapters)
    atheris.Setup(argv, one)
    atheris.Fuzz()


STAT = re.compile(r"stat::(\w+):\s+(\d+)")
DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def run_atheris_process(name: str, runs: int, artifacts: Path, max_len: int) -> dict[str, Any]:
    """One atheris run in a child process: its executions, seconds, rate and outcome from libFuzzer's stats."""
    started = time.monotonic()
    log = artifacts / f"{name}.log"
    artifacts.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as fh:
        proc = subprocess.run([sys.executable, "-m", "tests.fuzz.native", "--engine", "atheris", "--child",
                               "--target", name, "--runs", str(runs), "--artifacts", str(artifacts),
                               "--max-len", str(max_len)], stdout=fh, stderr=subprocess.STDOUT, check=False)
    took = time.monotonic() - started
    text = log.read_text(errors="replace")
    stats = {k: int(v) for k, v in STAT.findall(text)}
    execs = stats.get("number_of_executed_units") or int((DONE.findall(text) or [("0", "0")])[-1][0])
    return {"target": name, "engine": "atheris", "execs": execs, "seconds": took,
            "execs_per_s": execs / took if took else 0.0, "exit": proc.returncode,
            "findings": 0 if proc.returncode == 0 else 1, "log": str(log),
            "coverage": stats.get("new_units_added"), "peak_rss_mb": stats.get("peak_rss_mb")}


def run_cargo_process(name: str, runs: int, artifacts: Path, max_len: int,
                      seconds: float | None = None) -> dict[str, Any]:
    """The cargo-fuzz target of entry point ``name`` (``RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none``),
    seeded like the Python run: its executions, seconds, rate and outcome from libFuzzer's final stats."""
    target = NATIVE[name]
    assert target.rust is not None
    corpus = (artifacts / f"cargo-corpus-{target.rust}").resolve()
    corpus.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(target.seeds()):
        (corpus / f"seed-{i}").write_bytes(data[:max_len])
    log = artifacts / f"cargo-{target.rust}.log"
    env = {**os.environ, "RUSTC_BOOTSTRAP": "1", "PYO3_PYTHON": sys.executable,
           "TMPDIR": str(_SHM if _SHM.is_dir() else tempfile.gettempdir())}
    started = time.monotonic()
    with open(log, "wb") as fh:
        proc = subprocess.run(["cargo", "fuzz", "run", "--sanitizer", "none", "-O", target.rust, str(corpus), "--",
                               f"-runs={runs}", f"-max_len={max_len}", f"-timeout={int(HANG_S * 5)}",
                               "-print_final_stats=1", f"-artifact_prefix={artifacts.resolve()}/{target.rust}-",
                               *([f"-max_total_time={int(seconds)}"] if seconds else [])],
                              cwd=RUST_FUZZ.parent, env=env, stdout=fh, stderr=subprocess.STDOUT, check=False)
    took = time.monotonic() - started
    text = log.read_text(errors="replace")
    stats = {k: int(v) for k, v in STAT.findall(text)}
    execs = stats.get("number_of_executed_units", 0)
    fuzz_s = max(stats.get("total_time_s", 0), 1) if "total_time_s" in stats else took
    return {"target": name, "engine": "cargo-fuzz", "rust_target": target.rust, "execs": execs, "seconds": took,
            "execs_per_s": execs / fuzz_s, "exit": proc.returncode, "findings": 0 if proc.returncode == 0 else 1,
            "log": str(log), "coverage": stats.get("new_units_added"), "peak_rss_mb": stats.get("peak_rss_mb")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.native", description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="all", help=f"one of: all, {', '.join(NATIVE)}")
    parser.add_argument("--runs", type=int, default=100000, help="inputs per entry point")
    parser.add_argument("--engine", choices=("atheris", "random", "cargo"), default="atheris",
                        help="cargo: the entry point's cargo-fuzz target (no Python reference; fast)")
    parser.add_argument("--seed", type=int, default=0, help="random engine seed")
    parser.add_argument("--max-len", type=int, default=1 << 16, help="longest input (atheris)")
    parser.add_argument("--artifacts", type=Path, default=Path("fuzz-artifacts") / "native")
    parser.add_argument("--json", type=Path, help="write the figures (execs, rate, findings per entry point)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="random and cargo engines: at most this long per target")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    core = _core()
    missing = [n for n in entry_points(core) if n not in NATIVE]
    if missing:
        print(f"entry points of kafkatool._native not in tests.fuzz.native.NATIVE: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    names = [n for n in NATIVE if hasattr(core, n)] if args.target == "all" else args.target.split(",")
    if args.child:
        run_atheris(names[0], args.runs, args.artifacts, args.max_len)
        return 0
    figures = []
    done_rust: set[str] = set()
    for name in names:
        if args.engine == "cargo":
            rust = NATIVE[name].rust
            if rust is None or rust in done_rust:  # one run per cargo-fuzz target (walk covers two entry points)
                continue
            done_rust.add(rust)
            fig = run_cargo_process(name, args.runs, args.artifacts, args.max_len, args.seconds)
        elif args.engine == "atheris":
            fig = run_atheris_process(name, args.runs, args.artifacts, args.max_len)
        else:
            fig = run_random(name, args.runs, args.seed, args.artifacts, args.seconds)
        print(f"{name}: {fig['execs']} inputs in {fig['seconds']:.0f} s ({fig['execs_per_s']:.0f}/s), "
              f"{fig['findings']} finding(s)", flush=True)
        figures.append(fig)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1))
    return 1 if any(f["findings"] for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
