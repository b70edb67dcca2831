"""The dependency direction of DEVELOPERS' layers, enforced on every import in the package.

errors/model -> schema -> reading/writing -> engine -> render -> commands -> cli; the fleet pipeline
(Spark and local engines) depends only on reading and model, plus the pure engines whose output its
``producers`` and ``findings`` tables are (a second implementation of check or replay would be worse than
the import), and writing for its Parquet output. Commands may import fleet; nothing else does.
Only render imports rich; only reading/writing open files.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kafkatool"

RANK = {"errors": 0, "model": 0, "schema": 1, "reading": 2, "writing": 2, "engine": 3, "render": 4,
        "commands": 5, "cli": 6, "__main__": 7, "__init__": 0, "fleet": 4}
# Layers a module may import besides those of lower rank.
EXTRA: dict[str, set[str]] = {"fleet": {"reading", "model", "errors", "schema", "writing", "engine"}}
# Layers that may never be imported by the given layer, whatever the rank.
FORBIDDEN: dict[str, set[str]] = {"engine": {"reading", "writing"}}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                continue
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if node.module == "kafkatool"]
    return found


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        out.append((".".join(rel.parts), path))
    return out


def test_every_module_has_a_known_layer() -> None:
    for name, _ in modules():
        layer = layer_of(name)
        assert layer in RANK or layer in EXTRA, f"{name}: unknown layer {layer!r}"


def test_imports_follow_the_layer_direction() -> None:
    problems = []
    for name, path in modules():
        mine = layer_of(name)
        for line, target in imports(path):
            if not target.startswith("kafkatool"):
                continue
            theirs = layer_of(target)
            if theirs not in RANK and theirs not in EXTRA:
                theirs = "__init__"  # a name defined in kafkatool/__init__.py
            if theirs == mine or target == "kafkatool":
                continue
            if mine in EXTRA:
                ok = theirs in EXTRA[mine]
            else:
                ok = RANK.get(theirs, 99) < RANK[mine] and theirs not in FORBIDDEN.get(mine, set())
            if not ok:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {mine} imports {target}")
    assert not problems, "\n".join(problems)


def test_only_render_imports_rich() -> None:
    bad = []
    for name, path in modules():
        if layer_of(name) == "render":
            continue
        for line, target in imports(path):
            if target == "rich" or target.startswith("rich."):
                bad.append(f"{name}:{line}")
    assert not bad, bad


def test_only_reading_and_writing_open_files() -> None:
    bad = []
    for name, path in modules():
        if layer_of(name) in ("reading", "writing"):
            continue
        tree = ast.parse(path.read_text())
        # Functions imported from the reading/writing layers are the sanctioned way to touch files.
        sanctioned = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                      and (node.module or "").startswith(("kafkatool.reading", "kafkatool.writing"))
                      for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                if isinstance(fn, ast.Name) and called in sanctioned:
                    continue
                if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id in sanctioned:
                    continue
                if called in ("open", "read_bytes", "read_text", "write_bytes", "write_text", "mmap"):
                    bad.append(f"{name}:{node.lineno}: {called}()")
    assert not bad, bad
