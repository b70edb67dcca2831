r"""``dump-segment --format-string``: one line per record from a kcat-style format string.

kcat's tokens, with kcat's meaning: ``%t`` topic, ``%p`` partition, ``%o`` offset, ``%k`` key, ``%K`` key size
(-1 for a null key), ``%s`` value, ``%S`` value size (-1 for a null value), ``%R`` the value size as a 4-byte
big-endian signed integer, ``%T`` timestamp (epoch milliseconds; -1 when the record has none; a LogAppendTime
batch's time for each of its records, as a consumer sees it), ``%h`` headers (``name=value`` joined by commas, a
null value as ``NULL``), ``%%`` a percent sign. kafkatool's own: ``%P`` producer id, ``%E`` producer epoch, ``%Q``
the record's sequence (-1 for each when the batch has none). Escapes in the literal text, as kcat reads them:
``\n``, ``\r``, ``\t``, ``\xHH`` (hex digits, the first a decimal digit), ``\NNN`` (a number as C's ``strtoul``
reads it with base 0: ``0x`` hex, a leading 0 octal, else decimal), any other ``\c`` is ``c``. Keys, values and
headers are written as their raw bytes; on a terminal every control character is shown escaped instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kafkatool.model import LegacyBatch, Record, RecordBatch, TimestampType

#: The tokens, each with what it writes.
TOKENS: dict[str, str] = {
    "t": "topic", "p": "partition", "o": "offset", "k": "key", "K": "key size (-1: null)",
    "s": "value", "S": "value size (-1: null)", "R": "value size, 4-byte big-endian int32",
    "T": "timestamp (epoch ms, -1: none)", "h": "headers (name=value,...)", "P": "producer id (kafkatool)",
    "E": "producer epoch (kafkatool)", "Q": "sequence (kafkatool)",
}


class FormatStringError(ValueError):
    """A format string kcat would refuse (an unknown token, a lone ``%`` at the end)."""


@dataclass(frozen=True, slots=True)
class Where:
    """The partition a segment belongs to (from its directory's name; ``""`` and -1 when it tells none)."""

    topic: bytes
    partition: int


_NUMBER = re.compile(rb"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
_HEX = re.compile(rb"[0-9][0-9a-fA-F]*")


def unescape(text: bytes) -> bytes:
    r"""A literal part with kcat's ``\`` sequences turned into the bytes they name."""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c != 0x5C or i + 1 >= len(text):  # not a backslash, or one at the very end (kept)
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        simple = {0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09}.get(nxt)
        if simple is not None:
            out.append(simple)
            i += 2
            continue
        if nxt == 0x78:  # \x: hex digits (kcat's strtoul, base 16, only when a decimal digit follows)
            found = _HEX.match(text, i + 2)
            if found:
                out.append(int(found.group(), 16) & 0xFF)
                i = found.end()
            else:
                i += 2  # kcat copies the character after the x on the next round
            continue
        found = _NUMBER.match(text, i + 1)
        if found:
            digits = found.group()
            value = int(digits, 16) if digits[:2].lower() == b"0x" else int(digits, 8) if digits[:1] == b"0" \
                else int(digits)
            out.append(value & 0xFF)
            i = found.end()
            continue
        out.append(nxt)
        i += 2
    return bytes(out)


Part = bytes | str


def parse(fmt: str) -> list[Part]:
    """The format string as literal byte strings and token letters (``FormatStringError`` when kcat refuses)."""
    raw = fmt.encode("utf-8", "surrogateescape")
    parts: list[Part] = []
    i = 0
    while i < len(raw):
        j = raw.find(b"%", i)
        if j < 0:
            parts.append(unescape(raw[i:]))
            break
        if j > i:
            parts.append(unescape(raw[i:j]))
        if j + 1 >= len(raw):
            raise FormatStringError("--format-string ends with a lone %: empty formatter (write %% for a percent "
                                    "sign)")
        token = chr(raw[j + 1])
        if token == "%":
            parts.append(b"%")
        elif token in TOKENS:
            parts.append(token)
        else:
            raise FormatStringError(f"--format-string: unsupported formatter %{token} (tokens: "
                                    + ", ".join(f"%{t} {what}" for t, what in TOKENS.items()) + ")")
        i = j + 2
    return [p for p in parts if p != b""]


def _size(data: bytes | None) -> bytes:
    return b"-1" if data is None else str(len(data)).encode()


def _headers(record: Record) -> bytes:
    return b",".join(h.key + b"=" + (b"NULL" if h.value is None else h.value) for h in record.headers)


def _timestamp(batch: RecordBatch | LegacyBatch, record: Record) -> int:
    if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return batch.max_timestamp  # what a consumer is handed for every record of such a batch
    if isinstance(batch, LegacyBatch) and batch.magic == 0:
        return -1
    return record.timestamp


Field = Callable[[RecordBatch | LegacyBatch, Record, Where], bytes]
FIELDS: dict[str, Field] = {
    "t": lambda b, r, w: w.topic,
    "p": lambda b, r, w: str(w.partition).encode(),
    "o": lambda b, r, w: str(r.offset).encode(),
    "k": lambda b, r, w: r.key or b"",
    "K": lambda b, r, w: _size(r.key),
    "s": lambda b, r, w: r.value or b"",
    "S": lambda b, r, w: _size(r.value),
    "R": lambda b, r, w: (-1 if r.value is None else len(r.value)).to_bytes(4, "big", signed=True),
    "T": lambda b, r, w: str(_timestamp(b, r)).encode(),
    "h": lambda b, r, w: _headers(r),
    "P": lambda b, r, w: str(b.producer_id if isinstance(b, RecordBatch) else -1).encode(),
    "E": lambda b, r, w: str(b.producer_epoch if isinstance(b, RecordBatch) else -1).encode(),
    "Q": lambda b, r, w: str(r.sequence if isinstance(b, RecordBatch) else -1).encode(),
}


def compile_format(fmt: str) -> Callable[[RecordBatch | LegacyBatch, Record, Where], bytes]:
    """A function writing one record's bytes for ``fmt`` (``FormatStringError`` when kcat would refuse it)."""
    parts = parse(fmt)
    steps: list[Callable[[RecordBatch | LegacyBatch, Record, Where], bytes]] = [
        FIELDS[p] if isinstance(p, str) else (lambda b, r, w, lit=p: lit) for p in parts]

    def render(batch: RecordBatch | LegacyBatch, record: Record, where: Where) -> bytes:
        return b"".join([step(batch, record, where) for step in steps])

    return render
