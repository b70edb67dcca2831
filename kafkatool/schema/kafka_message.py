"""Kafka's generated-message binary format (flexible versions), declared field by field.

Models what Kafka's message generator emits for a ``*.json`` message spec (``MessageDataGenerator``'s
``read`` and ``JsonConverterGenerator``'s ``write``): fields present in a version are read in order,
compact strings, bytes and arrays carry an unsigned-varint length plus one (0 meaning null), every struct
ends with a tagged-field section (count, then tag, size and bytes for each), and a tagged field absent from
the bytes keeps its default. The JSON form follows Kafka's converter: camelCase names, a tagged field only
when it differs from its default, a ``Uuid`` as unpadded base64url, bytes as padded base64.

Only flexible versions are declared: every metadata record and raft control message is flexible from
version 0. The primitive layouts are construct declarations; the message walk is a small interpreter over
:class:`Field` tuples so one declaration per message serves both parsing and the JSON form.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from construct import Flag, Float64b, Int8sb, Int16sb, Int16ub, Int32sb, Int64sb

from kafkatool.errors import DecodeError
from kafkatool.schema.varint import read_unsigned_varint

FIXED = {"int8": Int8sb, "int16": Int16sb, "uint16": Int16ub, "int32": Int32sb, "int64": Int64sb,
         "float64": Float64b, "bool": Flag}
UUID_SIZE = 16
ZERO_UUID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"


def versions(spec: str) -> tuple[int, int]:
    """Kafka's version range text (``"0+"``, ``"1-3"``, ``"2"``) as an inclusive ``(low, high)`` pair."""
    if spec.endswith("+"):
        return int(spec[:-1]), 1 << 15
    low, _, high = spec.partition("-")
    return int(low), int(high or low)


def uuid_text(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: the 16 bytes as unpadded base64url."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message spec: Kafka's ``name``, ``type`` (``int32``, ``[]int32``, ``[]Struct``,
    ``Struct``...), ``versions``, ``nullableVersions``, ``taggedVersions`` + ``tag``, ``default`` and, for
    struct types, the nested ``fields``."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str | None = None
    tag: int | None = None
    tagged: str | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()

    @property
    def json_name(self) -> str:
        """The generated converter's key: the name with its first letter lowered."""
        return self.name[:1].lower() + self.name[1:]

    def present(self, version: int) -> bool:
        """Whether the field exists at ``version``."""
        low, high = versions(self.versions)
        return low <= version <= high

    def is_tagged(self, version: int) -> bool:
        """Whether the field is a tagged field at ``version``."""
        if self.tagged is None:
            return False
        low, high = versions(self.tagged)
        return low <= version <= high

    def is_nullable(self, version: int) -> bool:
        """Whether null is allowed at ``version``."""
        if self.nullable is None:
            return False
        low, high = versions(self.nullable)
        return low <= version <= high

    def default_value(self) -> Any:
        """The value the field takes when a tagged field is absent (Kafka's spec defaults)."""
        if self.default is not None:
            return None if self.default == "null" else self.default
        if self.type.startswith("[]"):
            return []
        if self.type in ("string",):
            return ""
        if self.type == "bool":
            return False
        if self.type == "uuid":
            return ZERO_UUID_TEXT
        if self.type == "bytes":
            return ""
        if self.type in FIXED:
            return 0
        return None


@dataclass(frozen=True, slots=True)
class Message:
    """A message spec: its name, valid versions and fields (``api_key`` for metadata records)."""

    name: str
    valid: str
    fields: tuple[Field, ...]
    api_key: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def supports(self, version: int) -> bool:
        """Whether ``version`` is one Kafka's generated class can read."""
        low, high = versions(self.valid)
        return low <= version <= high


class _Reader:
    """A cursor over one message's bytes; positions in errors are relative to the value's start."""

    def __init__(self, data: bytes | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = bytes(data)
        self.pos = pos
        self.end = len(self.buf) if end is None else end

    def take(self, count: int, what: str) -> bytes:
        if count < 0 or self.pos + count > self.end:
            raise DecodeError(what, f"needs {count} bytes at value byte {self.pos}, only {self.end - self.pos} left",
                              self.pos)
        out = self.buf[self.pos:self.pos + count]
        self.pos += count
        return out

    def uvarint(self, what: str) -> int:
        if self.pos >= self.end:
            raise DecodeError(what, f"value ends before the unsigned varint at byte {self.pos}", self.pos)
        value, nxt = read_unsigned_varint(self.buf[:self.end], self.pos)
        self.pos = nxt
        return value


def _read_value(r: _Reader, f: Field, version: int, path: str) -> Any:
    """One field's value in its JSON form."""
    kind = f.type
    if kind in FIXED:
        layout = FIXED[kind]
        return layout.parse(r.take(layout.sizeof(), path))
    if kind == "uuid":
        return uuid_text(r.take(UUID_SIZE, path))
    if kind in ("string", "bytes"):
        length = r.uvarint(path) - 1
        if length < 0:
            if not f.is_nullable(version):
                raise DecodeError(path, f"non-nullable field {f.name} was serialized as null", r.pos)
            return None
        raw = r.take(length, path)
        if kind == "bytes":
            return base64.b64encode(raw).decode("ascii")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DecodeError(path, f"string is not valid UTF-8: {err.reason}", r.pos - length) from None
    if kind.startswith("[]"):
        count = r.uvarint(path) - 1
        if count < 0:
            if not f.is_nullable(version):
                raise DecodeError(path, f"non-nullable field {f.name} was serialized as null", r.pos)
            return None
        if count > r.end - r.pos:
            raise DecodeError(path, f"array of {count} elements cannot fit in the {r.end - r.pos} bytes left", r.pos)
        inner = kind[2:]
        element = Field(f.name, inner, f.versions, fields=f.fields)
        return [_read_value(r, element, version, f"{path}[{i}]") for i in range(count)]
    # A struct: its fields, then its own tagged fields.
    return read_struct(r, f.fields, version, path)


def read_struct(r: _Reader, fields: tuple[Field, ...], version: int, path: str) -> dict[str, Any]:
    """A struct's fields at ``version`` (the message body or a nested struct) as the JSON converter writes them."""
    values: dict[str, Any] = {}
    tagged: dict[int, Field] = {}
    for f in fields:
        if not f.present(version):
            continue
        if f.is_tagged(version):
            assert f.tag is not None
            tagged[f.tag] = f
            values[f.json_name] = f.default_value()
            continue
        values[f.json_name] = _read_value(r, f, version, f"{path}.{f.json_name}" if path else f.json_name)
    count = r.uvarint(f"{path}.tagged_fields" if path else "tagged_fields")
    for _ in range(count):
        tag = r.uvarint("tag")
        size = r.uvarint("tag_size")
        end = r.pos + size
        if size < 0 or end > r.end:
            raise DecodeError("tag_size", f"tagged field {tag} of {size} bytes runs past the value's end", r.pos)
        known = tagged.get(tag)
        if known is None:
            r.pos = end  # an unknown tagged field: Kafka keeps it raw and the JSON converter leaves it out
            continue
        sub = _Reader(r.buf, r.pos, end)
        values[known.json_name] = _read_value(sub, known, version, known.json_name)
        r.pos = end
    # The converter writes a tagged field only when it differs from its default.
    out: dict[str, Any] = {}
    for f in fields:
        if not f.present(version):
            continue
        value = values[f.json_name]
        if f.is_tagged(version) and value == f.default_value():
            continue
        out[f.json_name] = value
    return out


def read_message(message: Message, data: bytes | memoryview, version: int,
                 start: int = 0) -> tuple[dict[str, Any], int]:
    """Parse ``message`` at ``version`` from ``data[start:]``; return its JSON form and the position after it.

    Raises :class:`DecodeError` (position relative to ``data``) for an unsupported version or a cut field.
    Bytes left after the message are the caller's business (Kafka's serdes differ on them).
    """
    if not message.supports(version):
        raise DecodeError("version", f"Can't read version {version} of {message.name}", start)
    r = _Reader(data, start)
    values = read_struct(r, message.fields, version, "")
    return values, r.pos
