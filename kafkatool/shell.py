"""Characters that must never reach a person raw, and command lines safe to paste: the one rule, written once.

Topic, group and transactional ids, file and directory names are chosen by whoever writes them. A directory
``d$(touch PWNED)x-0`` pasted raw into a shell runs ``touch``; an ESC, a C1 control (U+009B is a CSI on many
terminals), a bidi override or a line separator drives a terminal or makes a line appear to say something else.
:data:`UNSAFE` is that set of characters; ``render.safe`` shows them escaped on a terminal and in reports, and
escapes them in JSON. :func:`command` builds every command line kafkatool prints for someone to paste, with
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


__all__ = ["UNSAFE", "UNSAFE_CLASS", "command", "quote"]
