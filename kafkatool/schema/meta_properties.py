"""``meta.properties`` (Kafka's ``MetaProperties``, read and written by ``PropertiesUtils`` through
``java.util.Properties``).

Kafka writes it with ``Properties.store(writer, "")``: a ``#`` line for the empty comment, a ``#<date>``
line, then ``key=value`` lines (escaped), ``\\n`` line ends. It reads it back with
``Properties.load(InputStream)``, i.e. as ISO-8859-1 with ``\\uXXXX`` escapes; this module does the
same, so keys and values are what Kafka sees and a file re-encodes byte for byte.

The properties syntax follows ``Properties.load``: leading white space (space, tab, form feed) is
skipped, ``#`` and ``!`` start comment lines, a line ending in an odd number of backslashes continues on
the next, the key ends at the first unescaped ``=``, ``:`` or white space, and escapes are undone.

The known fields follow ``MetaProperties.Builder(Properties)``: ``version`` defaults to 0 and must be
0 or 1; version 0 takes the node id from ``broker.id`` (optional), version 1 from ``node.id``
(required, as is ``cluster.id``); ``directory.id`` must be a Kafka ``Uuid``. Where Kafka refuses the
file, :func:`parse_meta_properties` raises :class:`DecodeError` at the offending line.
"""

from __future__ import annotations

from kafkatool.errors import DecodeError
from kafkatool.model import MetaProperties
from kafkatool.schema.checkpoint import parse_java_int
from kafkatool.schema.partition_metadata import decode_kafka_uuid

VERSION_PROP = "version"
CLUSTER_ID_PROP = "cluster.id"
BROKER_ID_PROP = "broker.id"
NODE_ID_PROP = "node.id"
DIRECTORY_ID_PROP = "directory.id"
KNOWN_VERSIONS = (0, 1)
DEFAULT_VERSION = "0"
ENCODING = "latin-1"
"""``Properties.load(InputStream)`` reads ISO-8859-1."""
LINE_END = "\n"
COMMENT_STARTS = "#!"
WHITESPACE = " \t\f"
"""White space for ``Properties.load``: line ends are not part of it."""
SEPARATORS = "=:"
_UNESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "=": "\\=", ":": "\\:", "#": "\\#",
            "!": "\\!"}


def _unescape(text: str, position: int) -> str:
    """``Properties.loadConvert``: ``\\uXXXX``, ``\\t \\r \\n \\f``, and ``\\x`` -> ``x``."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c != "\\" or i >= len(text):
            out.append(c)
            continue
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise DecodeError("properties", f"malformed \\uxxxx encoding in {text!r}", position)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_UNESCAPES.get(c, c))
    return "".join(out)


def _odd_backslashes(text: str) -> bool:
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def _natural_lines(text: str) -> list[tuple[int, str]]:
    """``(position, text)`` of each line; ``\\n``, ``\\r`` and ``\\r\\n`` end lines."""
    out = []
    pos = 0
    n = len(text)
    while pos < n:
        end = pos
        while end < n and text[end] not in "\r\n":
            end += 1
        out.append((pos, text[pos:end]))
        if end < n and text[end] == "\r" and end + 1 < n and text[end + 1] == "\n":
            end += 1
        pos = end + 1
    return out


def _split_key_value(line: str) -> tuple[str, str]:
    """``Properties.load0``: the raw (still escaped) key and value of a logical line."""
    key_end = len(line)
    value_start = len(line)
    has_sep = False
    backslash = False
    for i, c in enumerate(line):
        if not backslash and c in SEPARATORS:
            key_end, value_start, has_sep = i, i + 1, True
            break
        if not backslash and c in WHITESPACE:
            key_end, value_start = i, i + 1
            break
        backslash = not backslash if c == "\\" else False
    while value_start < len(line):
        c = line[value_start]
        if c not in WHITESPACE:
            if has_sep or c not in SEPARATORS:
                break
            has_sep = True
        value_start += 1
    return line[:key_end], line[value_start:]


def parse_properties(data: bytes) -> tuple[dict[str, str], tuple[str, ...], dict[str, int]]:
    """``Properties.load``: the properties in file order (a repeated key keeps its last value), the comment
    lines verbatim, and the byte position of the line each key was last set on."""
    text = data.decode(ENCODING)
    lines = _natural_lines(text)
    props: dict[str, str] = {}
    where: dict[str, int] = {}
    comments: list[str] = []
    i = 0
    while i < len(lines):
        pos, raw = lines[i]
        i += 1
        logical = raw.lstrip(WHITESPACE)
        if not logical:
            continue
        if logical[0] in COMMENT_STARTS:
            comments.append(raw)
            continue
        while _odd_backslashes(logical):
            logical = logical[:-1]
            if i >= len(lines):
                break
            logical += lines[i][1].lstrip(WHITESPACE)
            i += 1
        raw_key, raw_value = _split_key_value(logical)
        key = _unescape(raw_key, pos)
        props[key] = _unescape(raw_value, pos)
        where[key] = pos
    return props, tuple(comments), where


def _java_trim(text: str) -> str:
    """``String.trim``: strips every character up to U+0020."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def parse_meta_properties(data: bytes) -> MetaProperties:
    """Decode the properties and Kafka's known fields; raises :class:`DecodeError` where ``MetaProperties``
    refuses the file (bad or unknown version, missing or non-numeric id, missing cluster id for
    version 1, a ``directory.id`` that is not a ``Uuid``)."""
    props, comments, where = parse_properties(data)

    def fail(name: str, reason: str) -> DecodeError:
        return DecodeError(name, reason, where.get(name, 0))

    version = parse_java_int(_java_trim(props.get(VERSION_PROP, DEFAULT_VERSION)))
    if version is None:
        raise fail(VERSION_PROP, f"invalid meta.properties version string {props[VERSION_PROP]!r}")
    if version not in KNOWN_VERSIONS:
        raise fail(VERSION_PROP, f"unknown meta.properties version number {version}")
    raw_broker = props.get(BROKER_ID_PROP)
    broker_id = None if raw_broker is None else parse_java_int(raw_broker)
    if version == 0:
        if raw_broker is not None and broker_id is None:
            raise fail(BROKER_ID_PROP, f"unable to read {BROKER_ID_PROP} {raw_broker!r} as a base-10 number")
        node_id = broker_id
    else:
        raw_node = props.get(NODE_ID_PROP)
        if raw_node is None:
            raise fail(NODE_ID_PROP, f"{NODE_ID_PROP} was not found (required by version {version})")
        node_id = parse_java_int(raw_node)
        if node_id is None:
            raise fail(NODE_ID_PROP, f"unable to read {NODE_ID_PROP} {raw_node!r} as a base-10 number")
    directory_id = props.get(DIRECTORY_ID_PROP)
    if directory_id is not None:
        try:
            decode_kafka_uuid(directory_id)
        except ValueError as err:
            raise fail(DIRECTORY_ID_PROP, f"unable to read {DIRECTORY_ID_PROP} as a Uuid: {err}") from None
    cluster_id = props.get(CLUSTER_ID_PROP)
    if version != 0 and cluster_id is None:
        raise fail(CLUSTER_ID_PROP, f"{CLUSTER_ID_PROP} was not found (required by version {version})")
    return MetaProperties(version, cluster_id, node_id, directory_id, broker_id, props, comments)


def _escape(text: str, is_key: bool) -> str:
    """``Properties.saveConvert``: backslash escapes; spaces escaped in keys and at a value's start."""
    out = []
    for i, c in enumerate(text):
        if c == " ":
            out.append("\\ " if is_key or i == 0 else " ")
        elif c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif ord(c) > 0xFF:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def build_meta_properties(props: dict[str, str], comments: tuple[str, ...] = ()) -> bytes:
    """Properties bytes in the ``Properties.store`` layout: the comment lines as given, then one escaped
    ``key=value`` line per property in the order given.

    Characters beyond ISO-8859-1 are written as ``\\uXXXX`` so the file reads back the same. A file Kafka
    wrote rebuilds byte for byte from its parsed ``properties`` and ``comments``; blank lines, comments
    between properties, continuations and ``\\r\\n`` line ends of a hand-edited file are not kept.
    """
    lines = [*comments, *(f"{_escape(k, True)}={_escape(v, False)}" for k, v in props.items())]
    return "".join(f"{line}{LINE_END}" for line in lines).encode(ENCODING)
