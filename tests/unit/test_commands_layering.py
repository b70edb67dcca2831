"""Commands are thin and independent (issue 21): no module under ``kafkatool/commands/`` imports another command
module. What several commands share is a composition of engines and lives in ``kafkatool/analysis/``; the only
shared command modules are ``commands.common`` (errors to exit codes, output-format options) and
``commands.help_style`` (the man-page help layout)."""

from __future__ import annotations

import ast
from pathlib import Path

COMMANDS_DIR = Path(__file__).resolve().parents[2] / "kafkatool" / "commands"

#: Command modules every command may import: helpers, not commands.
SHARED = {"common", "help_style"}


def command_imports(source: str, name: str) -> list[tuple[int, str]]:
    """``(line, module)`` of each ``kafkatool.commands.X`` module that ``source`` imports, at any depth (an
    import inside a function counts too), in either spelling (``from kafkatool.commands import X`` or
    ``from kafkatool.commands.X import ...``)."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[2]) for a in node.names
                      if a.name.startswith("kafkatool.commands.")]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "kafkatool.commands":
                found += [(node.lineno, a.name) for a in node.names]
            elif node.module.startswith("kafkatool.commands."):
                found.append((node.lineno, node.module.split(".")[2]))
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.append((node.lineno, f"relative import {'.' * node.level}{node.module or ''}"))
    return found


def violations(source: str, name: str) -> list[str]:
    return [f"{name}:{line}: imports commands.{target}" for line, target in command_imports(source, name)
            if target != name and target not in SHARED]


def test_no_command_imports_another_command() -> None:
    found = []
    for path in sorted(COMMANDS_DIR.glob("*.py")):
        found += violations(path.read_text(), path.stem)
    assert not found, ("a command imports another command; move what they share to kafkatool.analysis:\n"
                       + "\n".join(found))


def test_the_scan_catches_each_spelling() -> None:
    caught = {
        "from kafkatool.commands.check import finding_row\n": "commands.check",
        "from kafkatool.commands import simulate_restart as restart_cmd\n": "commands.simulate_restart",
        "import kafkatool.commands.groups\n": "commands.groups",
        "def f() -> None:\n    from kafkatool.commands.replay_producers import build_document\n":
            "commands.replay_producers",
    }
    for source, what in caught.items():
        assert [v for v in violations(source, "report") if what in v], source
    allowed = "from kafkatool.commands.common import run_guarded\nfrom kafkatool.commands import help_style\n" \
              "from kafkatool.analysis.report import build_report\n"
    assert violations(allowed, "report") == []
