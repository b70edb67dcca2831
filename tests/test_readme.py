"""The README is for users (issue 35): the set-up, then one screen per command; what it moved out lives beside
the code it describes and is linked, so every link must lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "tests/benchmarks/README.md", "tests/fuzz/README.md", "tests/kafka/README.md"]
SCREEN = 60  # lines a command's section may take: one screen


def sections(text: str) -> dict[str, list[str]]:
    """The README's ``## `kafkatool X` `` sections by command, each as its lines (heading included)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            m = re.fullmatch(r"## `kafkatool ([a-z-]+)`", line)
            current = found.setdefault(m.group(1), []) if m else None
        if current is not None:
            current.append(line)
    return found


def test_every_command_has_one_screen_in_the_readme() -> None:
    from kafkatool.cli import app

    commands = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    found = sections((REPO / "README.md").read_text())
    assert set(found) == commands, (sorted(commands - set(found)), sorted(set(found) - commands))
    long = {name: len(lines) for name, lines in found.items() if len(lines) > SCREEN}
    assert not long, f"sections over {SCREEN} lines: {long}"


def test_the_readme_starts_with_the_two_set_up_commands() -> None:
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.+?)\n```", text, flags=re.S)
    assert [lang for lang, _ in blocks[:2]] == ["sh", "sh"]
    assert "kafkatool scan fixtures" in blocks[0][1] and "python -m pytest -q" in blocks[1][1]
    assert text.index(blocks[1][1]) < text.index("## `kafkatool")


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_lead_to_files(doc: str) -> None:
    path = REPO / doc
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text())
    local = [t for t in targets if "://" not in t]
    assert local or doc != "README.md"
    missing = [t for t in local if not (path.parent / t).exists()]
    assert not missing, missing
