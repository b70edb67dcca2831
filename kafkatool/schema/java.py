"""What Kafka's Java code makes of bytes, where it differs from a plain decoder: its exceptions as data, its
UTF-8 decoder.

:class:`JavaException` carries the ``getMessage()`` of the exception a Java reader throws on malformed input
(``None`` for Java's null message), so a caller that reproduces a Java tool's output (``DumpLogSegments``) can
print it, while the schema decoders stay pure. :func:`java_utf8` is ``new String(bytes, UTF_8)``
(``sun.nio.cs.UTF_8``'s decoder with ``REPLACE``), which differs from Python's ``errors="replace"``.
"""

from __future__ import annotations

from kafkatool.errors import DecodeError


class JavaException(DecodeError):
    """A decode failure worded as the Java exception Kafka's reader throws; ``message`` is its ``getMessage()``.

    ``None`` is Java's null message (``BufferUnderflowException``, ``NoSuchElementException``...).
    """

    def __init__(self, message: str | None, field: str = "java", position: int | None = None) -> None:
        super().__init__(field, "null" if message is None else message, position)
        self.message = message

    def located(self, file: str | None = None, base: int = 0) -> DecodeError:
        """A copy placed in ``file`` (see :meth:`DecodeError.located`), keeping the Java message."""
        err = super().located(file, base)
        err.message = self.message  # type: ignore[attr-defined]
        return err


def _cont(b: int) -> bool:
    return b & 0xC0 == 0x80


def java_utf8(data: bytes) -> str:
    """``new String(bytes, UTF_8)``: malformed input replaced by U+FFFD exactly as the JDK decoder does.

    Valid UTF-8 decodes as in Python. The JDK differs from Python's ``errors="replace"`` on encoded
    surrogates (one U+FFFD for three bytes) and on some truncated sequences at the end.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    n = len(data)
    sp = 0
    repl = "\ufffd"
    while sp < n:
        b1 = data[sp]
        if b1 < 0x80:
            out.append(chr(b1))
            sp += 1
        elif 0xC2 <= b1 <= 0xDF:
            if sp + 1 < n and _cont(data[sp + 1]):
                out.append(chr(((b1 & 0x1F) << 6) | (data[sp + 1] & 0x3F)))
                sp += 2
            else:
                out.append(repl)
                sp += 1
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 2 < n:
                b2, b3 = data[sp + 1], data[sp + 2]
                if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _cont(b2) or not _cont(b3):
                    out.append(repl)
                    sp += 1 if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _cont(b2) else 2
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(repl if 0xD800 <= c <= 0xDFFF else chr(c))
                    sp += 3
                continue
            if sp + 1 < n and ((b1 == 0xE0 and data[sp + 1] & 0xE0 == 0x80) or not _cont(data[sp + 1])):
                out.append(repl)
                sp += 1
                continue
            out.append(repl)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 3 < n:
                b2, b3, b4 = data[sp + 1], data[sp + 2], data[sp + 3]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not _cont(b2) or not _cont(b3) or not _cont(b4) or not 0x10000 <= uc <= 0x10FFFF:
                    out.append(repl)
                    if (b1 > 0xF4 or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                            or (b1 == 0xF4 and b2 & 0xF0 != 0x80) or not _cont(b2)):
                        sp += 1
                    elif not _cont(b3):
                        sp += 2
                    else:
                        sp += 3
                else:
                    out.append(chr(uc))
                    sp += 4
                continue
            if b1 > 0xF4 or (sp + 1 < n and (
                    (b1 == 0xF0 and not 0x90 <= data[sp + 1] <= 0xBF)
                    or (b1 == 0xF4 and data[sp + 1] & 0xF0 != 0x80) or not _cont(data[sp + 1]))):
                out.append(repl)
                sp += 1
                continue
            if sp + 2 < n and not _cont(data[sp + 2]):
                out.append(repl)
                sp += 2
                continue
            out.append(repl)
            break
        else:
            out.append(repl)
            sp += 1
    return "".join(out)


__all__ = ["JavaException", "java_utf8"]
