"""What a person reads: nothing from record data reaches the terminal raw, and times read as ISO-8601.

Record keys, values, header keys and values, topic, group and transactional ids, client ids, file names: any
client (or whoever can write a file name) chooses them. Written raw, ``ESC ] 0;title BEL`` retitles the
operator's terminal, ``ESC [2J`` clears it, a carriage return or a bidi override rewrites what a line
appears to say. Every human renderer passes the values it shows through :func:`printable` (or
:func:`printable_tree` over a whole document) and prints on a console from :func:`human_console`. Machine
formats (JSON escapes control characters itself; ``-f kafka`` to a file or pipe) are not touched here.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

# C0 controls (tab and newline included: inside a table cell they break the layout too), DEL, C1 controls,
# the bidi embeddings/overrides/isolates and the Unicode line and paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


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


def human_console(out: TextIO, *, piped_width: int | None = 160, soft_wrap: bool = False,
                  color: bool | None = None) -> Console:
    """The console every human renderer prints on: terminal width on a terminal, ``piped_width`` otherwise (rich is
    imported here: the escaping above serves ``--format kafka`` too, which prints no table)."""
    from rich.console import Console

    return Console(file=out, force_terminal=color, no_color=color is False, highlight=False, soft_wrap=soft_wrap,
                   width=None if out.isatty() else piped_width)


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
