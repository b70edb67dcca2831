"""Deriving ``struct`` formats from construct declarations, so the declaration stays the only truth.

construct's interpreted ``parse`` costs ~20 us per call; hot loops unpack with a ``struct.Struct``
built here from the same declaration instead (tests check both agree).
"""

from __future__ import annotations

import struct
from typing import Any

from construct import Construct, FormatField, Renamed, Struct, stream_read, stream_write


def field_offsets(decl: Struct) -> dict[str, int]:
    """Byte offset of every field of a flat, fixed-size declaration."""
    offsets: dict[str, int] = {}
    pos = 0
    for sc in decl.subcons:
        offsets[sc.name] = pos
        pos += sc.sizeof()
    return offsets


def derive_struct(decl: Struct) -> struct.Struct:
    """A ``struct.Struct`` equivalent to a flat construct Struct of big-endian fixed-size integers."""
    codes = []
    for sc in decl.subcons:
        inner = sc.subcon if isinstance(sc, Renamed) else sc
        if not isinstance(inner, FormatField) or inner.fmtstr[0] not in "><":
            raise TypeError(f"field {sc.name} is not a fixed-size integer field")
        if codes and inner.fmtstr[0] != decl.subcons[0].subcon.fmtstr[0]:
            raise TypeError("mixed byte orders")
        codes.append(inner.fmtstr[1:])
    order = decl.subcons[0].subcon.fmtstr[0]
    return struct.Struct(order + "".join(codes))


class NullableBytes(Construct):
    """A length (any integer construct) then that many bytes; a negative length means null.

    Kafka uses it with a zigzag varint length in magic 2 records and an int32 length in legacy messages.
    """

    def __init__(self, length: Construct) -> None:
        super().__init__()
        self.length = length

    def _parse(self, stream: Any, context: Any, path: str) -> bytes | None:
        size = self.length._parse(stream, context, path)
        return None if size < 0 else stream_read(stream, size, path)

    def _build(self, obj: bytes | None, stream: Any, context: Any, path: str) -> bytes | None:
        if obj is None:
            self.length._build(-1, stream, context, path)
        else:
            self.length._build(len(obj), stream, context, path)
            stream_write(stream, obj, len(obj), path)
        return obj
