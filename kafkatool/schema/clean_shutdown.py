"""``.kafka_cleanshutdown``: the clean-shutdown marker (Kafka's ``CleanShutdownFileHandler``).

Its presence is what tells ``LogManager`` the broker shut down cleanly (it is deleted at start-up).
Brokers before KIP-966 left it empty; since then it holds ``{"version":0,"brokerEpoch":N}`` with no
line end, written by Jackson from the handler's ``Content`` class.

Kafka reads the epoch with a default Jackson ``ObjectMapper`` (``Json.parseStringAs``) and ignores
unknown properties; any failure is swallowed and yields no epoch, but the marker still counts. The
rules modeled here: the text is UTF-8 (malformed bytes replaced); leading JSON white space is skipped
and anything after the first JSON value is ignored; the value must be an object; ``brokerEpoch`` must be
present and non-null, and coerce to a long (an integer, a float truncated toward zero, or a numeric
string); ``version`` is an int with the same coercions, 0 when absent or null, and is never checked.

:func:`parse_clean_shutdown` accepts the empty file (old format) and whatever Kafka reads an epoch
from, noting in ``problem`` what Kafka would not have written; anything else is a :class:`DecodeError`.
:func:`kafka_broker_epoch` is Kafka's own never-failing ``read()``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.model import CleanShutdown
from kafkatool.schema.checkpoint import parse_java_int

CURRENT_VERSION = 0
VERSION_FIELD = "version"
BROKER_EPOCH_FIELD = "brokerEpoch"
FORMAT_EMPTY = "empty"
FORMAT_JSON = "json"
JSON_WHITESPACE = " \t\n\r"
_INT32 = 32
_INT64 = 64


class _NonNumericNumber(ValueError):
    """``NaN`` or ``Infinity``: Python's JSON reader takes them, Jackson's default does not."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not a JSON number")
        self.name = name


def _reject_constant(name: str) -> Any:
    raise _NonNumericNumber(name)


def _coerce(value: Any, bits: int, field: str, null_default: int | None) -> tuple[int, str | None]:
    """Jackson's scalar coercion to int (32) or long (64): the value and a note when it was not an integer."""
    limit = 1 << (bits - 1)
    note = None
    if isinstance(value, str):
        text = value.strip("".join(chr(c) for c in range(0x21)))
        note = f"{field} is a JSON string"
        value = None if text in ("", "null") else parse_java_int(text, bits)
        if value is None and text not in ("", "null"):
            raise DecodeError(field, f"{field} string {text!r} is not a number", 0)
    if value is None:
        if null_default is None:
            raise DecodeError(field, f"{field} is missing or null: Kafka reads no broker epoch", 0)
        return null_default, note
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DecodeError(field, f"{field} is a JSON {type(value).__name__}, not a number", 0)
    if isinstance(value, float):
        if not math.isfinite(value) or not -limit <= math.trunc(value) < limit:
            raise DecodeError(field, f"{field} {value} is out of range", 0)
        return math.trunc(value), note or f"{field} is a JSON float, truncated to an integer"
    if not -limit <= value < limit:
        raise DecodeError(field, f"{field} {value} is out of range of a {bits}-bit integer", 0)
    return value, note


def parse_clean_shutdown(data: bytes) -> CleanShutdown:
    """Decode the marker; raises :class:`DecodeError` for content Kafka reads no broker epoch from (other
    than the empty, old-format marker)."""
    if not data:
        return CleanShutdown(FORMAT_EMPTY, None, None)
    text = data.decode("utf-8", errors="surrogateescape")
    start = len(text) - len(text.lstrip(JSON_WHITESPACE))
    if start == len(text):
        raise DecodeError("content", "only white space: no JSON content, Kafka reads no broker epoch", 0)
    try:
        doc, end = json.JSONDecoder(parse_constant=_reject_constant).raw_decode(text, start)
    except _NonNumericNumber as err:  # the scanner gives no position: the constant's first occurrence
        pos = max(text.find(err.name, start), start)
        raise DecodeError("content", f"not JSON ({err}): Kafka reads no broker epoch",
                          len(text[:pos].encode("utf-8", errors="surrogateescape"))) from None
    except ValueError as err:
        pos = getattr(err, "pos", start)
        where = len(text[:pos].encode("utf-8", errors="surrogateescape"))
        raise DecodeError("content", f"not JSON ({getattr(err, 'msg', err)}): Kafka reads no broker epoch",
                          where) from None
    if not isinstance(doc, dict):
        kind = "null" if doc is None else type(doc).__name__
        raise DecodeError("content", f"a JSON {kind}, not an object: Kafka reads no broker epoch", start)
    epoch, epoch_note = _coerce(doc.get(BROKER_EPOCH_FIELD), _INT64, BROKER_EPOCH_FIELD, None)
    version, version_note = _coerce(doc.get(VERSION_FIELD), _INT32, VERSION_FIELD, 0)
    notes = [n for n in (epoch_note, version_note) if n]
    if version != CURRENT_VERSION:
        notes.append(f"version {version} (Kafka writes {CURRENT_VERSION} and does not check it)")
    extra = sorted(set(doc) - {VERSION_FIELD, BROKER_EPOCH_FIELD})
    if extra:
        notes.append(f"unknown fields ignored by Kafka: {', '.join(extra)}")
    tail = text[end:]
    if tail.strip(JSON_WHITESPACE):
        notes.append(f"{len(tail.encode('utf-8', errors='surrogateescape'))} bytes after the JSON object, "
                     "ignored by Kafka")
    if not notes and data != build_clean_shutdown(epoch):
        notes.append("laid out differently from what Kafka writes")
    return CleanShutdown(FORMAT_JSON, version, epoch, "; ".join(notes) or None)


def kafka_broker_epoch(data: bytes) -> int | None:
    """``CleanShutdownFileHandler.read()``: the broker epoch, or ``None`` whenever Kafka's read fails
    (the empty marker included)."""
    try:
        return parse_clean_shutdown(data).broker_epoch
    except DecodeError:
        return None


def build_clean_shutdown(broker_epoch: int | None, version: int = CURRENT_VERSION) -> bytes:
    """Marker bytes: Jackson's compact JSON with no line end, or the empty old-format marker (``None``)."""
    if broker_epoch is None:
        return b""
    return json.dumps({VERSION_FIELD: version, BROKER_EPOCH_FIELD: broker_epoch}, separators=(",", ":")).encode()
