"""Text checkpoint files (Kafka's ``CheckpointFile``, ``OffsetCheckpointFile``, ``LeaderEpochCheckpointFile``).

Layout, written with ``\\n`` line ends: a version line (0), an entry-count line, then one entry per
line. The offset checkpoints (``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
``log-start-offset-checkpoint``, ``cleaner-offset-checkpoint``) hold ``topic partition offset``; the
``leader-epoch-checkpoint`` of each partition holds ``epoch startOffset``.

Reading follows ``CheckpointFile.CheckpointReadBuffer`` exactly: UTF-8 (malformed bytes fail), lines
split as ``BufferedReader.readLine`` does (``\\n``, ``\\r`` or ``\\r\\n``), numbers parsed as
``Integer.parseInt`` / ``Long.parseLong`` (no surrounding spaces), entry lines split on the regex
``\\s+`` with Java's ``split`` rules (so leading white space makes an extra empty field and the line is
malformed, trailing white space is dropped). An empty file, or one that stops after the version line,
holds no entries. A wrong version, a malformed line, an unparsable number or a count that does not
match the entry lines is an error; every :class:`DecodeError` names the field, the line number in its
reason, and the byte offset of the line as its position.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafkatool.errors import DecodeError
from kafkatool.model import LeaderEpochEntry, TopicPartition

CURRENT_VERSION = 0
"""``OffsetCheckpointFile.CURRENT_VERSION`` and ``LeaderEpochCheckpointFile``'s version."""
OFFSET_ENTRY_FIELDS = 3
EPOCH_ENTRY_FIELDS = 2
LINE_END = "\n"
"""``BufferedWriter.newLine`` on the Unix systems Kafka runs on."""
JAVA_WHITESPACE = " \t\n\x0b\f\r"
"""The characters of Java's regex ``\\s`` (ASCII only, unlike Python's)."""
WHITESPACE_PATTERN = re.compile(f"[{re.escape(JAVA_WHITESPACE)}]+")
_JAVA_INTEGER = re.compile(r"[+-]?\d+")  # Integer.parseInt syntax: any Unicode decimal digit, as Character.digit
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
INT32 = 32
INT64 = 64


def java_split(pattern: re.Pattern[str], text: str) -> list[str]:
    """``Pattern.split(text)``: like Python's, but trailing empty strings are removed (and no match at all
    gives ``[text]``)."""
    parts = pattern.split(text)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def parse_java_int(text: str, bits: int = INT32) -> int | None:
    """``Integer.parseInt`` (``bits=32``) or ``Long.parseLong`` (64): the value, or ``None`` where Java
    throws ``NumberFormatException`` (white space, empty, not a number, out of range)."""
    if not _JAVA_INTEGER.fullmatch(text):
        return None
    value = int(text)
    limit = 1 << (bits - 1)
    return value if -limit <= value < limit else None


def decode_utf8(data: bytes, field: str = "encoding") -> str:
    """Strict UTF-8, as ``Files.newBufferedReader(path, UTF_8)`` reads; the error names the bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DecodeError(field, f"malformed UTF-8 ({err.reason})", err.start) from None


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line as ``BufferedReader.readLine`` returns it: 1-based number, byte position and text."""

    number: int
    position: int
    text: str


def split_lines(data: bytes) -> list[TextLine]:
    """The lines of a UTF-8 text file, each with its byte position; a final line end adds no empty line."""
    text = decode_utf8(data)
    lines: list[TextLine] = []
    pos = 0
    start = 0
    for m in _LINE_BREAK.finditer(text):
        chunk = text[start:m.start()]
        lines.append(TextLine(len(lines) + 1, pos, chunk))
        pos += len(chunk.encode("utf-8")) + len(m.group())
        start = m.end()
    if start < len(text):
        lines.append(TextLine(len(lines) + 1, pos, text[start:]))
    return lines


def _number(line: TextLine, text: str, field: str, bits: int = INT32) -> int:
    value = parse_java_int(text, bits)
    if value is None:
        kind = "an int32" if bits == INT32 else "an int64"
        raise DecodeError(field, f"line {line.number}: {text!r} is not {kind} (malformed line {line.text!r})",
                          line.position)
    return value


def read_entry_lines(data: bytes, width: int) -> list[tuple[TextLine, list[str]]]:
    """The entry lines of a checkpoint, split into ``width`` fields, after the version and count checks."""
    lines = split_lines(data)
    if not lines:
        return []
    version = _number(lines[0], lines[0].text, "version")
    if version != CURRENT_VERSION:
        raise DecodeError("version", f"line 1: unrecognised version {version}, expected version {CURRENT_VERSION}",
                          lines[0].position)
    if len(lines) < 2:
        return []
    count_line = lines[1]
    count = _number(count_line, count_line.text, "count")
    if count < 0:
        raise DecodeError("count", f"line 2: negative entry count {count}", count_line.position)
    out = []
    for line in lines[2:]:
        parts = java_split(WHITESPACE_PATTERN, line.text)
        if len(parts) != width:
            raise DecodeError("entry", f"line {line.number}: malformed line {line.text!r}: expected {width} fields "
                              f"separated by white space, found {len(parts)}", line.position)
        out.append((line, parts))
    if len(out) != count:
        raise DecodeError("count", f"line 2: expected [{count}] entries but found only [{len(out)}]",
                          count_line.position)
    return out


def parse_offset_checkpoint_entries(data: bytes) -> list[tuple[TopicPartition, int]]:
    """``topic partition offset`` entries in file order, a partition listed twice kept twice."""
    out = []
    for line, (topic, partition, offset) in read_entry_lines(data, OFFSET_ENTRY_FIELDS):
        tp = TopicPartition(topic, _number(line, partition, "partition"))
        out.append((tp, _number(line, offset, "offset", INT64)))
    return out


def parse_offset_checkpoint(data: bytes) -> dict[TopicPartition, int]:
    """``OffsetCheckpointFile.read``: partition -> offset, in file order (a repeated partition keeps its
    last offset, as Kafka's map does)."""
    return dict(parse_offset_checkpoint_entries(data))


def parse_leader_epoch_checkpoint(data: bytes) -> list[LeaderEpochEntry]:
    """``LeaderEpochCheckpointFile.read``: ``epoch startOffset`` entries in file order."""
    return [LeaderEpochEntry(_number(line, epoch, "epoch"), _number(line, start, "start_offset", INT64))
            for line, (epoch, start) in read_entry_lines(data, EPOCH_ENTRY_FIELDS)]


def build_checkpoint(lines: list[str]) -> bytes:
    """``CheckpointWriteBuffer.write``: version, count, then the formatted entry lines."""
    return "".join(f"{x}{LINE_END}" for x in [str(CURRENT_VERSION), str(len(lines)), *lines]).encode("utf-8")


def _fits(value: int, bits: int) -> bool:
    return -(1 << (bits - 1)) <= value < (1 << (bits - 1))


def build_offset_checkpoint(entries: Mapping[TopicPartition, int] | Iterable[tuple[TopicPartition, int]]) -> bytes:
    """Offset checkpoint bytes, entries in the order given.

    Raises ``ValueError`` for what Kafka could not read back: an empty topic or one holding white space,
    a partition outside int32 or an offset outside int64.
    """
    items = entries.items() if isinstance(entries, Mapping) else entries
    lines = []
    for tp, offset in items:
        if not tp.topic or WHITESPACE_PATTERN.search(tp.topic):
            raise ValueError(f"topic {tp.topic!r} cannot be written to a checkpoint line")
        if not (_fits(tp.partition, INT32) and _fits(offset, INT64)):
            raise ValueError(f"{tp} {offset} does not fit a checkpoint entry")
        lines.append(f"{tp.topic} {tp.partition} {offset}")
    return build_checkpoint(lines)


def build_leader_epoch_checkpoint(entries: Iterable[LeaderEpochEntry]) -> bytes:
    """``leader-epoch-checkpoint`` bytes (``ValueError`` for an epoch outside int32 or offset outside int64)."""
    lines = []
    for e in entries:
        if not (_fits(e.epoch, INT32) and _fits(e.start_offset, INT64)):
            raise ValueError(f"{e} does not fit a leader-epoch-checkpoint entry")
        lines.append(f"{e.epoch} {e.start_offset}")
    return build_checkpoint(lines)
