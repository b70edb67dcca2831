"""The DumpLogSegments formatter decodes nothing itself (issue 21): bytes are read by the schema layer.

``engine/dls.py`` and ``engine/dls_decoders.py`` keep Kafka's text layout, ordering and error wording; batches,
records, headers, control records, legacy messages and index/snapshot entries come decoded from
``kafkatool.schema``. This test parses both modules and fails on the tools of a decoder: ``struct``,
``int.from_bytes``, ``memoryview``, ``unpack``-style calls, varint readers, and indexing or slicing of record
bytes (a record's key/value, a buffer, a payload).
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "kafkatool" / "engine"
FORMATTER = sorted([ENGINE / "dls.py", ENGINE / "dls_decoders.py", *ENGINE.glob("dls_*.py")])

FORBIDDEN_MODULES = {"struct", "array", "ctypes", "binascii", "mmap", "kafkatool.schema.varint"}
FORBIDDEN_CALLS = {"from_bytes", "unpack", "unpack_from", "iter_unpack", "memoryview", "frombuffer", "cast",
                   "read_varint", "read_unsigned_varint", "zigzag_decode"}
# Names that hold raw bytes in the formatter: subscripting them would be decoding.
BYTES_ATTRIBUTES = {"key", "value", "buf", "payload"}
BYTES_NAMES = {"buf", "payload", "data", "key", "value", "view", "raw"}


def _string_key(index: ast.expr) -> bool:
    """``x["field"]``: a decoded tree's field, not a byte position."""
    return isinstance(index, ast.Constant) and isinstance(index.value, str)


def _problems(source: str, name: str) -> list[str]:
    tree = ast.parse(source, name)
    found: list[str] = []

    def where(node: ast.AST) -> str:
        return f"{name}:{getattr(node, 'lineno', '?')}"

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{where(node)}: import {a.name}" for a in node.names if a.name in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.module in FORBIDDEN_MODULES:
                found.append(f"{where(node)}: from {node.module} import ...")
            found += [f"{where(node)}: imports {a.name}" for a in node.names if a.name in FORBIDDEN_CALLS]
        elif isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called in FORBIDDEN_CALLS or "varint" in called.lower() or "varlong" in called.lower():
                found.append(f"{where(node)}: calls {called}()")
        elif isinstance(node, ast.Name) and node.id == "memoryview":
            found.append(f"{where(node)}: uses memoryview")
        elif isinstance(node, ast.Subscript) and not _string_key(node.slice):
            target = node.value
            if isinstance(target, ast.Attribute) and target.attr in BYTES_ATTRIBUTES:
                found.append(f"{where(node)}: indexes .{target.attr}")
            elif isinstance(target, ast.Name) and target.id in BYTES_NAMES:
                found.append(f"{where(node)}: indexes {target.id}")
        elif isinstance(node, ast.FunctionDef) and ("varint" in node.name.lower() or "varlong" in node.name.lower()):
            found.append(f"{where(node)}: defines {node.name}()")
    return found


def test_the_formatter_modules_exist() -> None:
    assert (ENGINE / "dls.py").exists() and (ENGINE / "dls_decoders.py").exists()


def test_the_dls_formatter_decodes_no_bytes_itself() -> None:
    problems = [p for path in FORMATTER for p in _problems(path.read_text(), path.name)]
    assert not problems, "decode these in kafkatool.schema instead:\n" + "\n".join(problems)


def test_the_check_sees_a_decoder() -> None:
    """The checker itself catches the usual ways of reading fields from bytes."""
    text = ("import struct\nfrom kafkatool.schema.varint import read_varint\n"
            "def f(record, buf):\n"
            "    a = int.from_bytes(record.key[:2], 'big')\n"
            "    b = struct.unpack_from('>q', buf, 0)\n"
            "    c = memoryview(buf)[3:]\n"
            "    d, _ = read_varint(buf, 0)\n"
            "    return a, b, c, d\n"
            "def _j_varlong(data, pos):\n"
            "    return data[pos]\n")
    problems = _problems(text, "sample.py")
    for needle in ("import struct", "from kafkatool.schema.varint", "from_bytes", "indexes .key", "unpack_from",
                   "memoryview", "read_varint", "defines _j_varlong", "indexes data"):
        assert any(needle in p for p in problems), (needle, problems)
    assert _problems("def g(value):\n    return value['data'], value.get('x')\n", "ok.py") == []
