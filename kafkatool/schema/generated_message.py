"""Kafka's generated-message wire format, declared with construct: the building blocks for coordinator records.

Kafka's message generator (``generator/.../MessageDataGenerator``) turns a JSON schema into a class whose
``read(readable, version)`` reads each field present in that version, in order: int8/16/32/64 big-endian, uuid
as 16 bytes, strings/bytes/arrays with an int16/int32 length (``-1`` = null) in non-flexible versions and an
unsigned-varint length + 1 (``0`` = null) in flexible ones, and, in flexible versions, a tagged-field section
(count, then tag, size, bytes per field) after each struct's regular fields. A schema is declared here as a
tuple of :class:`Field`; :func:`message_struct` builds the construct ``Struct`` for one version and
:func:`to_json` turns the parsed container into what Kafka's generated ``*JsonConverter.write`` prints
(camelCase names, fields absent from the version left out, bytes as base64, uuids as Kafka's base64url form).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cache
from typing import Any

from construct import (
    Construct,
    ConstructError,
    Container,
    Int8sb,
    Int16sb,
    Int32sb,
    Int64sb,
    ListContainer,
    Struct,
    VarInt,
    stream_read,
)

from kafkatool.errors import DecodeError


@dataclass(frozen=True, slots=True)
class Field:
    """One schema field: ``kind`` is int8/int16/int32/int64/string/bytes/uuid, ``[]int32``-style arrays of a
    primitive, ``struct`` or ``[]struct`` (then ``fields`` declares the struct). ``versions`` and
    ``nullable`` are ``(low, high)`` ranges (``high`` None = open); ``tag`` marks a tagged field."""

    name: str
    kind: str
    versions: tuple[int, int | None] = (0, None)
    nullable: tuple[int, int | None] | None = None
    tag: int | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()

    def present(self, version: int) -> bool:
        """Whether the field exists in ``version``."""
        return _in(self.versions, version)

    def is_nullable(self, version: int) -> bool:
        """Whether the field may be null in ``version``."""
        return self.nullable is not None and _in(self.nullable, version)

    @property
    def json_name(self) -> str:
        """The JSON converter's name: the schema name with its first letter lower-cased."""
        return self.name[:1].lower() + self.name[1:]


@dataclass(frozen=True, slots=True)
class Message:
    """A generated message: its name, valid and flexible versions, fields."""

    name: str
    valid: tuple[int, int]
    flexible_from: int | None
    fields: tuple[Field, ...]

    def flexible(self, version: int) -> bool:
        """Flexible versions use compact lengths and tagged fields."""
        return self.flexible_from is not None and version >= self.flexible_from


def _in(span: tuple[int, int | None], version: int) -> bool:
    lo, hi = span
    return version >= lo and (hi is None or version <= hi)


class _Length(Construct):
    """A length or count: int16/int32 (``-1`` null) or, when compact, unsigned varint minus one."""

    def __init__(self, compact: bool, wide: bool) -> None:
        super().__init__()
        self.compact, self.wide = compact, wide

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        if self.compact:
            return int(VarInt._parsereport(stream, context, path)) - 1
        sub = Int32sb if self.wide else Int16sb
        return int(sub._parsereport(stream, context, path))


class KafkaString(Construct):
    """A (nullable, compact) string, UTF-8."""

    def __init__(self, compact: bool, nullable: bool) -> None:
        super().__init__()
        self.length = _Length(compact, wide=False)
        self.nullable = nullable

    def _parse(self, stream: Any, context: Any, path: str) -> str | None:
        n = self.length._parsereport(stream, context, path)
        if n < 0:
            if not self.nullable:
                raise ConstructError(f"non-nullable field {path} was serialized as null", path=path)
            return None
        return bytes(stream_read(stream, n, path)).decode("utf-8", errors="replace")


class KafkaBytes(Construct):
    """A (nullable, compact) byte string, shown as base64 like the JSON converter does."""

    def __init__(self, compact: bool, nullable: bool) -> None:
        super().__init__()
        self.length = _Length(compact, wide=True)
        self.nullable = nullable

    def _parse(self, stream: Any, context: Any, path: str) -> str | None:
        n = self.length._parsereport(stream, context, path)
        if n < 0:
            if not self.nullable:
                raise ConstructError(f"non-nullable field {path} was serialized as null", path=path)
            return None
        return base64.b64encode(bytes(stream_read(stream, n, path))).decode("ascii")


class KafkaUuid(Construct):
    """A uuid (16 bytes), shown as Kafka's ``Uuid.toString``: URL-safe base64 without padding."""

    def _parse(self, stream: Any, context: Any, path: str) -> str:
        raw = bytes(stream_read(stream, 16, path))
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


class KafkaArray(Construct):
    """A (nullable, compact) array of ``element``."""

    def __init__(self, element: Construct, compact: bool, nullable: bool) -> None:
        super().__init__()
        self.element = element
        self.length = _Length(compact, wide=True)
        self.nullable = nullable

    def _parse(self, stream: Any, context: Any, path: str) -> list[Any] | None:
        n = self.length._parsereport(stream, context, path)
        if n < 0:
            if not self.nullable:
                raise ConstructError(f"non-nullable field {path} was serialized as null", path=path)
            return None
        return ListContainer(self.element._parsereport(stream, context, path) for _ in range(n))


class NullableStruct(Construct):
    """A nullable struct: an int8 marker (``-1`` null) before the struct, or, in a tagged field, an unsigned
    varint marker (``0`` null), as the generator reads them."""

    def __init__(self, sub: Construct, tagged: bool) -> None:
        super().__init__()
        self.sub = sub
        self.marker = VarInt if tagged else Int8sb

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        marker = self.marker._parsereport(stream, context, path)
        return None if marker <= (0 if self.marker is VarInt else -1) else self.sub._parsereport(stream, context, path)


class TaggedFields(Construct):
    """The tagged-field section: a count, then per field its tag, size and bytes. Known tags are parsed with
    their declaration; unknown ones are skipped as Kafka keeps them aside (and never prints them)."""

    def __init__(self, known: dict[int, tuple[str, Construct]]) -> None:
        super().__init__()
        self.known = known

    def _parse(self, stream: Any, context: Any, path: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for _ in range(int(VarInt._parsereport(stream, context, path))):
            tag = int(VarInt._parsereport(stream, context, path))
            size = int(VarInt._parsereport(stream, context, path))
            data = bytes(stream_read(stream, size, path))
            if tag in self.known:
                name, sub = self.known[tag]
                found[name] = sub.parse(data)
        return found


_PRIMITIVES: dict[str, Construct] = {"int8": Int8sb, "int16": Int16sb, "int32": Int32sb, "int64": Int64sb}


def _field_construct(f: Field, version: int, flexible: bool) -> Construct:
    nullable = f.is_nullable(version)
    kind = f.kind
    if kind.startswith("[]"):
        inner = kind[2:]
        element = (_struct(f.fields, version, flexible) if inner == "struct"
                   else _field_construct(Field(f.name, inner), version, flexible))
        return KafkaArray(element, flexible, nullable)
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind == "string":
        return KafkaString(flexible, nullable)
    if kind == "bytes":
        return KafkaBytes(flexible, nullable)
    if kind == "uuid":
        return KafkaUuid()
    if kind == "struct":
        sub = _struct(f.fields, version, flexible)
        return NullableStruct(sub, f.tag is not None) if nullable else sub
    raise ValueError(f"unknown field kind {kind}")


def _struct(fields: tuple[Field, ...], version: int, flexible: bool) -> Struct:
    parts = [f.name / _field_construct(f, version, flexible) for f in fields
             if f.present(version) and f.tag is None]
    if flexible:
        tagged = {f.tag: (f.name, _field_construct(f, version, flexible)) for f in fields
                  if f.tag is not None and f.present(version)}
        parts.append("_tagged" / TaggedFields(tagged))
    return Struct(*parts)


@cache
def message_struct(message: Message, version: int) -> Struct:
    """The construct declaration of ``message`` at ``version``."""
    return _struct(message.fields, version, message.flexible(version))


def _json(fields: tuple[Field, ...], parsed: Container, version: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tagged = parsed.get("_tagged", {})
    for f in fields:
        if not f.present(version):
            continue
        value = tagged.get(f.name, f.default) if f.tag is not None else parsed[f.name]
        out[f.json_name] = _json_value(f, value, version)
    return out


def _json_value(f: Field, value: Any, version: int) -> Any:
    if value is None:
        return None
    if f.kind == "struct":
        return _json(f.fields, value, version)
    if f.kind == "[]struct":
        return [_json(f.fields, v, version) for v in value]
    if f.kind.startswith("[]"):
        return list(value)
    return value


def to_json(message: Message, version: int, parsed: Container) -> dict[str, Any]:
    """The parsed message as Kafka's generated JSON converter writes it for ``version``."""
    return _json(message.fields, parsed, version)


def read_message(message: Message, version: int, data: bytes, part: str) -> dict[str, Any]:
    """Read ``message`` at ``version`` from ``data``; :class:`DecodeError` names ``part`` (key/value) when the
    version is unknown or the bytes are short or malformed."""
    lo, hi = message.valid
    if not lo <= version <= hi:
        raise DecodeError(f"{part}.version", f"{message.name} has no version {version} (Kafka knows {lo}..{hi})", 0)
    try:
        return to_json(message, version, message_struct(message, version).parse(data))
    except ConstructError as err:
        raise DecodeError(part, f"could not read {message.name} version {version}: {err}", 2) from None
