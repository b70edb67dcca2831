"""Characters that must never reach a person raw, and command lines safe to paste: the one rule, written once.

Topic, group and transactional ids, file and directory names are chosen by whoever writes them. A directory
``d$(touch PWNED)x-0`` pasted raw into a shell runs ``touch``; an ESC, a C1 control (U+009B is a CSI on many
terminals), a bidi override or a line separator drives a terminal or makes a line appear to say something else.
:data:`UNSAFE` is that set of characters; ``render.safe`` shows them escaped on a terminal and in reports, and
escapes them in JSON (:func:`json_safe`, here so that every layer that writes JSON, render and writing alike, escapes
with the one rule). :func:`command` builds every command line kafkatool prints for someone to paste, with
every argument quoted by :func:`quote`. Pure (standard library only): the engines build commands too.
"""

from __future__ import annotations

import re
import shlex

#: C0 controls (tab and newline included), DEL, C1 controls, the Arabic letter mark, the left-to-right and
#: right-to-left marks, the line and paragraph separators, the bidi embeddings/overrides and the bidi isolates.
UNSAFE_CLASS = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
UNSAFE = re.compile(UNSAFE_CLASS)

# What POSIX shells take as a word with no quoting at all (shlex.quote's own set).
_PLAIN = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


def _ansi_c(text: str) -> str:
    r"""``text`` as a bash/zsh/ksh ``$'...'`` word: every :data:`UNSAFE` character as the ``\xHH`` escapes of its
    UTF-8 bytes (the same bytes in any locale), ``\`` and ``'`` escaped, everything else as it is."""
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif UNSAFE.match(ch):
            out.append("".join(f"\\x{b:02x}" for b in ch.encode()))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def quote(arg: object) -> str:
    """One argument of a command line, quoted so a shell hands it over exactly and runs nothing in it.

    Plain words stay as they are, others are single-quoted (``shlex.quote``); an argument holding a character of
    :data:`UNSAFE` is written ``$'...'`` with that character escaped, so the printed line itself carries no
    control or bidi character (and still pastes into bash, zsh or ksh as the exact argument)."""
    text = str(arg)
    if _PLAIN.fullmatch(text):
        return text
    if UNSAFE.search(text):
        return _ansi_c(text)
    return shlex.quote(text)


def command(*args: object) -> str:
    """A command line to print for a person to paste: every argument passed through :func:`quote`."""
    return " ".join(quote(a) for a in args)


# The UTF-8 of every character of UNSAFE that JSON does not escape itself (all but C0): DEL, C1 (C2 80-9F),
# U+061C (D8 9C), U+200E/F and U+2028-202E (E2 80 ..), U+2066-2069 (E2 81 A6-A9). In valid UTF-8 the lead
# bytes C2, D8 and E2 only ever start a character, so a match is always a whole character.
_JSON_UNSAFE = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
_JSON_UNSAFE_TEXT = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _json_escape(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode())


def _json_escape_text(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_safe(data: bytes) -> bytes:
    r"""JSON text (UTF-8, as orjson writes it) with DEL, C1 controls, bidi marks, overrides and isolates and the
    line and paragraph separators written ``\u0085``, ``\u202e``: no such character raw on a terminal or in a
    file, the same data when parsed (orjson escapes C0 itself). Only scans when one of their lead bytes occurs
    (the common text has none). ``render.safe.json_bytes`` and ``writing``'s JSON lines both go through it."""
    # int membership is a memchr; ASCII text (the usual row) costs two scans of the bytes.
    if 0x7F in data or (not data.isascii() and (0xE2 in data or 0xC2 in data or 0xD8 in data)):
        return _JSON_UNSAFE.sub(_json_escape, data)
    return data


def json_safe_text(text: str) -> str:
    """JSON ``text`` written by another serialiser (``json.dump`` with ``ensure_ascii=False``) made as
    :func:`json_safe`: the same characters escaped the same way."""
    return _JSON_UNSAFE_TEXT.sub(_json_escape_text, text) if _JSON_UNSAFE_TEXT.search(text) else text


__all__ = ["UNSAFE", "UNSAFE_CLASS", "command", "json_safe", "json_safe_text", "quote"]
