"""``meta.properties`` (Kafka's ``MetaProperties``, written through ``java.util.Properties``).

A Java properties file: ``#``/``!`` comments (Kafka writes a date comment), ``key=value`` lines.
Version 0 (ZooKeeper era) has ``broker.id``; version 1 (KRaft) has ``node.id``; both have ``cluster.id``,
and newer ones ``directory.id``.
"""

from __future__ import annotations

import re

from kafkatool.errors import DecodeError
from kafkatool.model import MetaProperties

_SEP = re.compile(r"(?<!\\)[=:]|(?<!\\)\s")


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(m.group(1), m.group(1)), text)


def parse_meta_properties(data: bytes) -> MetaProperties:
    """Decode the properties; a non-numeric ``version``/``node.id``/``broker.id`` is an error."""
    text = data.decode("latin-1")
    props: dict[str, str] = {}
    comments: list[str] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            if stripped:
                comments.append(stripped)
            pos += len(line)
            continue
        m = _SEP.search(stripped)
        key, value = (stripped[:m.start()], stripped[m.end():].lstrip(" =:\t")) if m else (stripped, "")
        props[_unescape(key)] = _unescape(value)
        pos += len(line)
    ints: dict[str, int | None] = {}
    for name in ("version", "node.id", "broker.id"):
        raw = props.get(name)
        if raw is None:
            ints[name] = None
            continue
        try:
            ints[name] = int(raw)
        except ValueError:
            raise DecodeError(name, f"{raw!r} is not a number", text.find(name)) from None
    node = ints["node.id"] if ints["node.id"] is not None else ints["broker.id"]
    return MetaProperties(ints["version"], props.get("cluster.id"), node, props.get("directory.id"), props,
                          tuple(comments))


def build_meta_properties(props: dict[str, str], comments: tuple[str, ...] = ()) -> bytes:
    """Properties bytes in the given order, comments first."""
    lines = [*comments, *(f"{k}={v}" for k, v in props.items())]
    return "".join(f"{line}\n" for line in lines).encode("latin-1")
