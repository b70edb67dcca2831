"""Text checkpoint files (Kafka's ``CheckpointFile``, ``OffsetCheckpointFile``, ``LeaderEpochCheckpointFile``).

Layout: a version line (0), an entry-count line, then one entry per line, fields separated by white
space: ``topic partition offset`` for the offset checkpoints (recovery point, high watermark, log start
offset, cleaner), ``epoch startOffset`` for ``leader-epoch-checkpoint``. Like Kafka, an empty file (or one
that stops after the version) holds no entries, and a wrong version, a malformed line or a count that
does not match the lines is an error. Errors name the line's byte position.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kafkatool.errors import DecodeError
from kafkatool.model import LeaderEpochEntry, TopicPartition

CURRENT_VERSION = 0
_WS = re.compile(r"\s+")


def _lines(data: bytes) -> list[tuple[int, str]]:
    """``(byte position, text)`` of each line, as ``BufferedReader.readLine`` splits them."""
    text = data.decode("utf-8", errors="replace")
    if not text:
        return []
    out = []
    pos = 0
    for raw in re.split(r"(\r\n|\r|\n)", text)[::2]:
        out.append((pos, raw))
        pos += len(raw.encode("utf-8")) + 1
    if out and out[-1][1] == "" and (text.endswith("\n") or text.endswith("\r")):
        out.pop()
    return out


def _int(text: str, field: str, pos: int) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise DecodeError(field, f"{text!r} is not a number", pos) from None


def _entries(data: bytes, width: int) -> list[tuple[int, list[str]]]:
    lines = _lines(data)
    if not lines:
        return []
    version = _int(lines[0][1], "version", 0)
    if version != CURRENT_VERSION:
        raise DecodeError("version", f"unrecognised version {version}, expected {CURRENT_VERSION}", 0)
    if len(lines) < 2:
        return []
    count = _int(lines[1][1], "count", lines[1][0])
    out = []
    for pos, line in lines[2:]:
        parts = _WS.split(line.strip()) if line.strip() else []
        if len(parts) != width:
            raise DecodeError("entry", f"malformed line {line!r}: expected {width} fields", pos)
        out.append((pos, parts))
    if len(out) != count:
        raise DecodeError("count", f"expected {count} entries but found {len(out)}", lines[1][0])
    return out


def parse_offset_checkpoint(data: bytes) -> dict[TopicPartition, int]:
    """``topic partition offset`` entries (a partition listed twice keeps its last offset, as Kafka's map)."""
    result: dict[TopicPartition, int] = {}
    for pos, (topic, partition, offset) in _entries(data, 3):
        result[TopicPartition(topic, _int(partition, "partition", pos))] = _int(offset, "offset", pos)
    return result


def parse_leader_epoch_checkpoint(data: bytes) -> list[LeaderEpochEntry]:
    """``epoch startOffset`` entries in file order."""
    return [LeaderEpochEntry(_int(e, "epoch", pos), _int(o, "start_offset", pos)) for pos, (e, o) in _entries(data, 2)]


def _build(lines: list[str]) -> bytes:
    return "".join(f"{x}\n" for x in [str(CURRENT_VERSION), str(len(lines)), *lines]).encode()


def build_offset_checkpoint(entries: Iterable[tuple[TopicPartition, int]]) -> bytes:
    """Checkpoint bytes, entries in the order given."""
    return _build([f"{tp.topic} {tp.partition} {offset}" for tp, offset in entries])


def build_leader_epoch_checkpoint(entries: Iterable[LeaderEpochEntry]) -> bytes:
    """``leader-epoch-checkpoint`` bytes."""
    return _build([f"{e.epoch} {e.start_offset}" for e in entries])
