"""The console entry point: ``kafkatool --help`` lists every subcommand without importing one (its start-up is
the interpreter's and Typer's), says exactly what the full app says,
and global options before a subcommand still reach it."""

from __future__ import annotations

import subprocess
import sys

import typer.main
from typer.testing import CliRunner

from kafkatool.cli import COMMANDS, GROUPS, SUMMARIES, app, build_app

runner = CliRunner()


def test_summaries_are_the_subcommands_own_first_paragraphs() -> None:
    full = typer.main.get_command(app)
    ctx = full.make_context("kafkatool", [], resilient_parsing=True)
    assert list(SUMMARIES) == [*COMMANDS, *GROUPS]
    for name in SUMMARIES:
        command = full.get_command(ctx, name)  # type: ignore[attr-defined]
        assert SUMMARIES[name] == (command.help or "").split("\n\n")[0].strip(), name


def test_lazy_help_equals_the_full_apps_help() -> None:
    lazy = runner.invoke(build_app(lazy=True), ["--help"])
    full = runner.invoke(app, ["--help"])
    assert lazy.exit_code == full.exit_code == 0
    assert lazy.stdout == full.stdout


def _entry(*argv: str) -> subprocess.CompletedProcess[str]:
    code = ("import sys; from kafkatool.cli import main\n"
            f"sys.argv = ['kafkatool', *{list(argv)!r}]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('kafkatool.commands.'))\n"
            "print('IMPORTED', loaded, file=sys.stderr)\n"
            "sys.exit(code)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)


def test_help_imports_no_subcommand() -> None:
    proc = _entry("--help")
    assert proc.returncode == 0 and "dump-segment" in proc.stdout
    for module in [*COMMANDS.values(), *GROUPS.values()]:
        assert f"'kafkatool.commands.{module}'" not in proc.stderr


def test_global_option_before_a_subcommand_runs_it() -> None:
    proc = _entry("--max-decompressed-bytes", "1000", "check", "--help")
    assert proc.returncode == 0 and "Usage: kafkatool check" in proc.stdout
    assert "'kafkatool.commands.check'" in proc.stderr
    bad = _entry("no-such-command")
    assert bad.returncode == 2 and "No such command" in bad.stderr


def _leaves() -> list[list[str]]:
    full = typer.main.get_command(app)
    out: list[list[str]] = []
    for name, sub in full.commands.items():  # type: ignore[attr-defined]
        out += [[name, child] for child in sub.commands] if hasattr(sub, "commands") else [[name]]
    return out


def test_help_reads_like_the_man_page() -> None:
    """No Python type labels (``PATH <list[str]>``, ``<str>``, ``<path>``) and no braces in a usage line."""
    for argv in _leaves():
        text = runner.invoke(app, [*argv, "--help"]).stdout
        usage = text.splitlines()[0]
        assert usage.startswith(f"Usage: kafkatool {' '.join(argv)} "), usage
        assert "{" not in usage, usage
        for label in ("<list[", "<str>", "<path>", "<int>", "<Path>"):
            assert label not in text, f"kafkatool {' '.join(argv)} --help shows {label}"
