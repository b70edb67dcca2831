"""Kafka's generated-message binary format, declared field by field: the one reader for every message spec.

Models what Kafka's message generator emits for a ``*.json`` message spec (``MessageDataGenerator``'s
``read`` and ``JsonConverterGenerator``'s ``write``): fields present in a version are read in order. In
flexible versions strings, bytes and arrays carry an unsigned-varint length plus one (0 meaning null) and
every struct ends with a tagged-field section (count, then tag, size and bytes for each); a tagged field
absent from the bytes keeps its default. In older versions a string has an int16 length, bytes and arrays an
int32 one, ``-1`` meaning null, and there are no tagged fields. A nullable struct starts with an int8 marker
(negative = null), or an unsigned-varint one (0 = null) inside a tagged field. Strings decode as Java's
``new String(bytes, UTF_8)`` does (malformed bytes replaced). The JSON form follows Kafka's converter:
camelCase names, a tagged field only when it differs from its default (``FieldSpec.generateNonDefaultValueCheck``:
a struct's default is ``new T()``, the empty struct, unless the spec says ``"null"``; so an absent tagged struct
is left out while one written as null shows as ``null``), a ``Uuid`` as unpadded base64url, bytes as padded
base64.

Users: KRaft metadata records and raft control messages (:mod:`metadata_records`, :mod:`control`), the
group, transaction and share coordinators' records (:mod:`group_coordinator`, :mod:`transaction_log`,
:mod:`share_group_state`), tiered storage's (:mod:`remote_log_metadata`); :mod:`messages` lists every declaration
by Kafka's name. The
primitive layouts are construct declarations; the message walk is a small interpreter over :class:`Field`
tuples so one declaration per message serves both parsing and the JSON form.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from construct import Flag, Float64b, Int8sb, Int16sb, Int16ub, Int32sb, Int32ub, Int64sb

from kafkatool.errors import DecodeError
from kafkatool.schema.varint import read_unsigned_varint

NEVER = "none"
"""Kafka's ``flexibleVersions: "none"``: a message with no flexible version."""
FIXED = {"int8": Int8sb, "int16": Int16sb, "uint16": Int16ub, "int32": Int32sb, "uint32": Int32ub,
         "int64": Int64sb, "float64": Float64b, "bool": Flag}
_UNPACK = {name: struct.Struct(layout.fmtstr) for name, layout in FIXED.items() if name != "bool"}
"""The same layouts as ``struct`` unpackers (from each construct field's own format string), for the hot loop."""
_LENGTH16 = struct.Struct(Int16sb.fmtstr)
_LENGTH32 = struct.Struct(Int32sb.fmtstr)
"""Non-flexible lengths: int16 before a string, int32 before bytes and arrays (``-1`` = null)."""
MAX_STRING = 0x7FFF
"""The longest string Kafka's generated ``read`` accepts (``string field ... had invalid length``)."""
VERSION_PREFIX = Int16sb.sizeof()
"""A coordinator record's key and value start with an int16 version (record type for group keys)."""
UUID_SIZE = 16
ZERO_UUID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"


@cache
def versions(spec: str) -> tuple[int, int]:
    """Kafka's version range text (``"0+"``, ``"1-3"``, ``"2"``, ``"none"``) as an inclusive ``(low, high)``
    pair (``none`` is an empty range)."""
    if spec == NEVER:
        return 1, 0
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
    struct types, the nested ``fields``. A ``tag`` without ``tagged`` is tagged in all its versions."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str | None = None
    tag: int | None = None
    tagged: str | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()
    highest: int | None = None
    """For a struct field: the highest version its generated class reads, when a release knows fewer versions of
    the message than kafkatool (:mod:`kafkatool.schema.releases`): above it the nested class's ``read`` throws
    ``Can't read version V of <Struct>``."""

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
        if self.tag is None:
            return False
        low, high = versions(self.tagged or self.versions)
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
    """A message spec: its name, valid versions, fields, flexible versions (``flexibleVersions``) and, for
    metadata records, its ``api_key``."""

    name: str
    valid: str
    fields: tuple[Field, ...]
    api_key: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    flexible: str = "0+"

    def supports(self, version: int) -> bool:
        """Whether ``version`` is one Kafka's generated class can read."""
        low, high = versions(self.valid)
        return low <= version <= high

    def is_flexible(self, version: int) -> bool:
        """Whether ``version`` uses compact lengths and tagged fields."""
        low, high = versions(self.flexible)
        return low <= version <= high


class _Reader:
    """A cursor over one message's bytes; positions in errors are relative to the value's start."""

    def __init__(self, data: bytes | memoryview, pos: int = 0, end: int | None = None,
                 defaults: bool = False) -> None:
        self.buf = data if isinstance(data, bytes) else bytes(data)
        self.pos = pos
        self.end = len(self.buf) if end is None else end
        self.defaults = defaults
        self.unknown = 0
        """Unknown tagged fields met so far: they make a struct differ from its default (Kafka's generated
        ``equals`` compares ``_unknownTaggedFields``) though the converter never shows them."""

    def take(self, count: int, what: str) -> bytes:
        if count < 0 or self.pos + count > self.end:
            raise DecodeError(what, f"needs {count} bytes at value byte {self.pos}, only {self.end - self.pos} left",
                              self.pos)
        out = self.buf[self.pos:self.pos + count]
        self.pos += count
        return out

    def uvarint(self, what: str) -> int:
        """``ByteUtils.readUnsignedVarint``: at most 5 bytes, an int (values past Int32 max come back negative)."""
        buf, pos, end = self.buf, self.pos, self.end
        if pos < end and buf[pos] < 0x80:  # the usual one-byte case
            self.pos = pos + 1
            return buf[pos]
        if pos >= end:
            raise DecodeError(what, f"value ends before the unsigned varint at byte {pos}", pos)
        value, nxt = read_unsigned_varint(buf, pos)
        if nxt > end:
            raise DecodeError(what, f"unsigned varint at byte {pos} runs past the value's end", pos)
        self.pos = nxt
        return value


@cache
def _element(f: Field) -> Field:
    """The element spec of array field ``f``."""
    return Field(f.name, f.type[2:], f.versions, fields=f.fields, highest=f.highest)


def _length(r: _Reader, kind: str, flexible: bool, path: str) -> int:
    """A string/bytes/array length or count: unsigned varint minus one when flexible, else int16 (strings) or
    int32; negative means null."""
    if flexible:
        return r.uvarint(path) - 1
    unpack = _LENGTH16 if kind == "string" else _LENGTH32
    return unpack.unpack(r.take(unpack.size, path))[0]


def _null(r: _Reader, f: Field, version: int, path: str) -> None:
    """A null where the spec allows one; Kafka's ``non-nullable field ... was serialized as null`` otherwise."""
    if not f.is_nullable(version):
        raise DecodeError(path, f"non-nullable field {f.name} was serialized as null", r.pos)


def _read_value(r: _Reader, f: Field, version: int, path: str, flexible: bool, tagged: bool = False) -> Any:
    """One field's value in its JSON form."""
    kind = f.type
    unpack = _UNPACK.get(kind)
    if unpack is not None:
        return unpack.unpack(r.take(unpack.size, path))[0]
    if kind == "bool":
        return r.take(1, path)[0] != 0  # Kafka's readByte() != 0
    if kind == "uuid":
        return uuid_text(r.take(UUID_SIZE, path))
    if kind in ("string", "bytes"):
        length = _length(r, kind, flexible, path)
        if length < 0:
            return _null(r, f, version, path)
        if kind == "string" and length > MAX_STRING:
            raise DecodeError(path, f"string field {f.name} had invalid length {length}", r.pos)
        raw = r.take(length, path)
        if kind == "bytes":
            return base64.b64encode(raw).decode("ascii")
        return raw.decode("utf-8", errors="replace")
    if kind.startswith("[]"):
        count = _length(r, kind, flexible, path)
        if count < 0:
            return _null(r, f, version, path)
        if count > r.end - r.pos:
            raise DecodeError(path, f"array of {count} elements cannot fit in the {r.end - r.pos} bytes left", r.pos)
        element = _element(f)
        return [_read_value(r, element, version, path, flexible) for _ in range(count)]
    # A struct, after its null marker when nullable: its fields, then its own tagged fields.
    if f.is_nullable(version):
        marker = r.uvarint(path) if tagged else r.take(1, path)[0]
        if (marker <= 0) if tagged else (marker >= 0x80):  # readUnsignedVarint() <= 0 / readByte() < 0
            return None
    if f.highest is not None and version > f.highest:  # the nested class's own version check
        raise DecodeError(path, f"Can't read version {version} of {kind.removeprefix('[]')}", r.pos)
    return read_struct(r, f.fields, version, path, flexible)


_Plan = tuple[tuple[tuple[str, Field, bool, Any], ...], dict[int, Field]]
_PLANS: dict[tuple[int, int], tuple[tuple[Field, ...], _Plan]] = {}


def _plan(fields: tuple[Field, ...], version: int) -> _Plan:
    """A struct's fields present at ``version``, in order: (JSON name, field, tagged, default); and its tags.

    Cached by the identity of the (module-level, immutable) field tuple: hashing nested specs costs more than
    reading a record."""
    key = (id(fields), version)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is fields:
        return hit[1]
    plan = _make_plan(fields, version)
    _PLANS[key] = (fields, plan)
    return plan


def _make_plan(fields: tuple[Field, ...], version: int) -> _Plan:
    present = []
    tags: dict[int, Field] = {}
    for f in fields:
        if not f.present(version):
            continue
        tagged = f.is_tagged(version)
        if tagged:
            assert f.tag is not None
            tags[f.tag] = f
        present.append((f.json_name, f, tagged, f.default_value()))
    return tuple(present), tags


def read_struct(r: _Reader, fields: tuple[Field, ...], version: int, path: str,
                flexible: bool = True) -> dict[str, Any]:
    """A struct's fields at ``version`` (the message body or a nested struct) as the JSON converter writes them
    (with the reader's ``defaults``, absent tagged fields keep their default, as the message object holds them)."""
    plan, tags = _plan(fields, version)
    values: dict[str, Any] = {}
    unknown_inside: set[str] = set()
    for name, f, tagged, default in plan:
        values[name] = default if tagged else _read_value(r, f, version, f"{path}.{name}" if path else name,
                                                          flexible)
    if not flexible:
        return values
    count = r.uvarint(f"{path}.tagged_fields" if path else "tagged_fields")
    found: set[str] = set()
    for _ in range(count):
        tag = r.uvarint("tag")
        size = r.uvarint("tag_size")
        end = r.pos + size
        if size < 0 or end > r.end:
            raise DecodeError("tag_size", f"tagged field {tag} of {size} bytes runs past the value's end", r.pos)
        known = tags.get(tag)
        if known is None:
            r.pos = end  # an unknown tagged field: Kafka keeps it raw and the JSON converter leaves it out
            r.unknown += 1
            continue
        sub = _Reader(r.buf, r.pos, end, r.defaults)
        values[known.json_name] = _read_value(sub, known, version, known.json_name, True, tagged=True)
        if sub.unknown:
            r.unknown += sub.unknown
            unknown_inside.add(known.json_name)
        found.add(known.json_name)
        r.pos = end
    if not tags:
        return values
    if r.defaults:
        for name, f, tagged, _ in plan:  # an absent tagged struct is the message object's ``new T()``
            if tagged and f.type == "struct" and name not in found:
                values[name] = struct_default(f, version, full=True)
        return values
    # The converter writes a tagged field only when it differs from its default (the generated
    # ``generateNonDefaultValueCheck``), so an absent one is left out.
    out: dict[str, Any] = {}
    for name, f, tagged, default in plan:
        if tagged and (name not in found or (name not in unknown_inside
                                             and _is_default(f, version, values[name], default))):
            continue
        out[name] = values[name]
    return out


def struct_default(f: Field, version: int, full: bool = False) -> dict[str, Any] | None:
    """The default of struct field ``f`` at ``version`` as Kafka's ``FieldSpec.fieldDefault`` makes it: ``null``
    when the spec says ``"default": "null"``, else ``new T()`` (every field at its own default), in the converter's
    JSON form (tagged fields left out, as they equal their defaults) or, with ``full``, with every field."""
    if f.default == "null":
        return None
    out: dict[str, Any] = {}
    for name, sub, tagged, default in _plan(f.fields, version)[0]:
        if tagged and not full:
            continue
        out[name] = struct_default(sub, version, full) if sub.type == "struct" else default
    return out


def _is_default(f: Field, version: int, value: Any, default: Any) -> bool:
    """Whether a tagged field's value (JSON form, without unknown tagged fields) equals its spec default."""
    if f.type == "struct":
        return value == struct_default(f, version)
    return bool(value == default)


def read_message(message: Message, data: bytes | memoryview, version: int, start: int = 0,
                 defaults: bool = False) -> tuple[dict[str, Any], int]:
    """Parse ``message`` at ``version`` from ``data[start:]``; return its JSON form and the position after it.

    Raises :class:`DecodeError` (position relative to ``data``) for an unsupported version or a cut field.
    Bytes left after the message are the caller's business (Kafka's serdes differ on them). ``defaults`` keeps
    absent tagged fields at their defaults instead of leaving them out as the JSON converter does.
    """
    if not message.supports(version):
        raise DecodeError("version", f"Can't read version {version} of {message.name}", start)
    r = _Reader(data, start, defaults=defaults)
    values = read_struct(r, message.fields, version, "", message.is_flexible(version))
    return values, r.pos


def read_part_layouts(layouts: tuple[Message, ...], version: int, data: bytes,
                      part: str) -> tuple[Message, dict[str, Any]]:
    """A coordinator record's ``part`` read with the first of ``layouts`` (same message, successive layouts of the
    same version: a preview release's, then the final one's) that reads at ``version`` and consumes ``data``
    exactly; when none does, the first layout's :func:`read_part` result or error (Kafka's readers tolerate bytes
    left over). Returns the layout used and the fields."""
    for layout in layouts:
        if not layout.supports(version):
            continue
        try:
            values, end = read_message(layout, data, version, VERSION_PREFIX, defaults=True)
        except DecodeError:
            continue
        if end == len(data):
            return layout, values
    return layouts[0], read_part(layouts[0], version, data, part)


def version_prefix(data: bytes | None) -> int | None:
    """The int16 version a coordinator record's key or value starts with; ``None`` for a null or shorter one."""
    if data is None or len(data) < VERSION_PREFIX:
        return None
    return int(_LENGTH16.unpack_from(data, 0)[0])


def read_part(message: Message, version: int, data: bytes, part: str) -> dict[str, Any]:
    """A coordinator record's key or value (``part``): ``message`` at ``version`` after the 2-byte version prefix
    of ``data``, with every field of the version (absent tagged fields at their defaults, as the record objects
    the coordinators load hold them). :class:`DecodeError` names the part and the field, with the byte position
    in ``data``."""
    if not message.supports(version):
        low, high = versions(message.valid)
        raise DecodeError(f"{part}.version", f"{message.name} has no version {version} (Kafka knows {low}..{high})", 0)
    try:
        return read_message(message, data, version, VERSION_PREFIX, defaults=True)[0]
    except DecodeError as err:
        raise DecodeError(f"{part}.{err.field}", f"could not read {message.name} version {version}: {err.reason}",
                          err.position) from None
