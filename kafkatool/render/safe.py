"""What a person reads: nothing from record data reaches the terminal raw, and times read as ISO-8601.

Record keys, values, header keys and values, topic, group and transactional ids, client ids, file names: any
client (or whoever can write a file name) chooses them. Written raw, ``ESC ] 0;title BEL`` retitles the
operator's terminal, ``ESC [2J`` clears it, a carriage return or a bidi override rewrites what a line
appears to say. Every human renderer passes the values it shows through :func:`printable` (or
:func:`printable_tree` over a whole document) and prints on a console from :func:`human_console`. JSON output
goes through :func:`json_bytes` (or :func:`json_safe`): orjson escapes C0 controls itself, and the rest of the
set (DEL, C1, bidi, line separators) is escaped as ``\\uXXXX`` by ``kafkatool.shell.json_safe``, the one rule
render and writing share (the same data once parsed; the native jsonl writer, ``kafkatool/_core/src/jsonl.rs``,
escapes the same characters byte for byte alike). ``-f kafka`` to a
file or pipe is DumpLogSegments' exact text and not touched here.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TextIO

import orjson

from kafkatool.shell import UNSAFE, json_safe
from kafkatool.shell import json_safe_text as json_safe_text  # re-exported: the JSON rule lives in shell

if TYPE_CHECKING:
    from rich.console import Console

# C0 controls (tab and newline included: inside a table cell they break the layout too), DEL, C1 controls,
# the bidi marks, embeddings/overrides/isolates and the Unicode line and paragraph separators (``kafkatool.shell``).
_UNSAFE = UNSAFE


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    r"""``text`` with every control character shown escaped (``\x1b``, ``\x9b``, ``\u202e``).

    ``keep_newlines`` leaves ``\n`` alone, for messages of kafkatool's own that span lines.
    """
    if not _UNSAFE.search(text):
        return text
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_escape, line) for line in text.split("\n"))
    return _UNSAFE.sub(_escape, text)


def printable_tree(value: Any) -> Any:
    """A copy of a JSON-like document with every string (and dict key) made :func:`printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_tree(v) for v in value]
    return value


def json_bytes(obj: Any, option: int = 0, default: Any = None) -> bytes:
    """``orjson.dumps(obj)`` made :func:`json_safe`: how every JSON output of kafkatool is written."""
    return json_safe(orjson.dumps(obj, default=default, option=option))


def json_text(obj: Any, option: int = 0, default: Any = None) -> str:
    """:func:`json_bytes` as text."""
    return json_bytes(obj, option, default).decode()


class JsonSafeWriter:
    """A text stream for ``json.dump``: each piece written :func:`json_safe_text` (a character is never split
    across pieces of a ``str``)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with the unsafe characters escaped; the length of ``text``."""
        self.stream.write(json_safe_text(text))
        return len(text)


def iso_time(ms: int) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC (``2023-11-14T22:13:20.016Z``); ``None`` for Kafka's -1 (no time)."""
    if ms < 0:
        return None
    second = iso_second(ms // 1000) if ms < TIME_LIMIT_MS else None
    return str(ms) if second is None else f"{second}.{ms % 1000:03d}Z"


#: The first millisecond past year 9999, where ISO-8601 ends.
TIME_LIMIT_MS = 253402300800000


@lru_cache(maxsize=4096)
def iso_second(seconds: int) -> str | None:
    """``YYYY-MM-DDTHH:MM:SS`` of a UTC second (a table shows millions of times, mostly of few seconds);
    ``None`` past year 9999 (a hostile or corrupt timestamp, shown as the number it is)."""
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None).isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):
        return None


def is_time_key(key: str) -> bool:
    """Whether a document key holds epoch milliseconds: ``*timestamp`` fields and the clock ``now``."""
    return key.endswith("timestamp") or key == "now"


def for_people(value: Any) -> Any:
    """A document ready for a human renderer: strings :func:`printable`, times (:func:`is_time_key`) in ISO-8601.

    The machine formats keep raw milliseconds; only tables and text get this view.
    """
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k:
                iso_time(v) if isinstance(k, str) and is_time_key(k) and type(v) is int else for_people(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [for_people(v) for v in value]
    return value


def columns_from_env() -> int | None:
    """``COLUMNS`` when it is a positive number (what a shell exports, or a user sets for a pipe), else ``None``."""
    import os

    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def human_console(out: TextIO, *, piped_width: int | None = 160, soft_wrap: bool = False,
                  color: bool | None = None) -> Console:
    """The console every human renderer prints on: terminal width on a terminal; otherwise ``COLUMNS`` when set
    (``COLUMNS=80 kafkatool ... | less``), else ``piped_width`` (rich is imported here: the escaping above serves
    ``--format kafka`` too, which prints no table)."""
    from rich.console import Console

    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    width = None if tty else columns_from_env() or piped_width
    return Console(file=out, force_terminal=color, no_color=color is False, highlight=False, soft_wrap=soft_wrap,
                   width=width)


class TerminalSafeWriter:
    """A text stream that shows control characters escaped (:func:`printable`, newlines kept): the output of
    ``dump-segment -f kafka`` when it goes to a terminal. Files and pipes get DumpLogSegments' bytes unchanged."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` escaped; the length of ``text`` (as a stream's write returns)."""
        self.stream.write(printable(text, keep_newlines=True))
        return len(text)

    def flush(self) -> None:
        """Flush the underlying stream."""
        self.stream.flush()


def for_terminal(stream: Any) -> Any:
    """``stream`` itself when it is a file or a pipe; wrapped in :class:`TerminalSafeWriter` on a terminal."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return TerminalSafeWriter(stream) if tty else stream
