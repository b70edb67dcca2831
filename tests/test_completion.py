"""Shell completion (typer's, through click's completion protocol): ``--install-completion`` and
``--show-completion`` for bash, zsh and fish, and what the completion function answers, driven as each shell's
script drives it (``_KAFKATOOL_COMPLETE`` with ``COMP_WORDS``/``COMP_CWORD`` or ``_TYPER_COMPLETE_ARGS``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.cli import COMMANDS, GROUPS

SCRIPT = Path(sys.executable).parent / "kafkatool"
pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason="the kafkatool console script is not installed")


def _run(env: dict[str, str], *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("_KAFKATOOL", "_TYPER", "COMP_"))}
    full.update(env)
    if home is not None:
        full["HOME"] = str(home)
    return subprocess.run([str(SCRIPT), *args], env=full, capture_output=True, text=True, timeout=60, check=False)


def bash_words(line: str) -> list[str]:
    """What the completion function answers bash for ``line`` (the cursor on its last word)."""
    words = line.split(" ")
    done = _run({"_KAFKATOOL_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completes_subcommands() -> None:
    assert set(bash_words("kafkatool ")) >= {*COMMANDS, *GROUPS}
    assert bash_words("kafkatool dump") == ["dump-segment"]
    assert bash_words("kafkatool sim") == ["simulate-restart", "simulate-replication"]


def test_bash_completes_options_and_their_values() -> None:
    options = bash_words("kafkatool dump-segment --")
    assert {"--print-data", "--format", "--format-string", "--wide", "--offsets"} <= set(options)
    assert "--fail-on" not in options  # another subcommand's
    assert bash_words("kafkatool dump-segment --print") == ["--print-data"]
    assert bash_words("kafkatool dump-segment -f ") == ["table", "json", "jsonl", "kafka"]
    assert bash_words("kafkatool check --fail-on w") == ["warning"]
    assert "--install-completion" in bash_words("kafkatool --")


def test_zsh_completes_options_with_their_help() -> None:
    done = _run({"_KAFKATOOL_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "kafkatool dump-segment --for"})
    assert done.returncode == 0, done.stderr
    assert '"--format":' in done.stdout and '"--format-string":' in done.stdout
    assert '"--print-data":' not in done.stdout


def test_fish_completes_subcommands_with_their_summaries() -> None:
    done = _run({"_KAFKATOOL_COMPLETE": "complete_fish", "_TYPER_COMPLETE_ARGS": "kafkatool ch",
                 "_TYPER_COMPLETE_FISH_ACTION": "get-args"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("check\tCross-check every file")


@pytest.mark.parametrize(("shell", "marks"), [
    ("bash", ["_KAFKATOOL_COMPLETE=complete_bash", "complete -o default -F _kafkatool_completion kafkatool"]),
    ("zsh", ["#compdef kafkatool", "_KAFKATOOL_COMPLETE=complete_zsh"]),
    ("fish", ["complete --command kafkatool", "_KAFKATOOL_COMPLETE=complete_fish"]),
])
def test_show_completion_prints_the_shells_script(shell: str, marks: list[str]) -> None:
    done = _run({"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}, "--show-completion", shell)
    assert done.returncode == 0, done.stderr
    for mark in marks:
        assert mark in done.stdout


def test_the_bash_script_completes_in_bash(tmp_path: Path) -> None:
    """The printed script sourced into a real bash: its function fills COMPREPLY with the subcommand's options."""
    if not shutil.which("bash"):
        pytest.skip("no bash")
    script = _run({"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}, "--show-completion", "bash").stdout
    (tmp_path / "kafkatool.sh").write_text(script)
    probe = (f"PATH={str(SCRIPT.parent)!r}:$PATH; source {str(tmp_path / 'kafkatool.sh')!r}; "
             "COMP_WORDS=(kafkatool dump-segment --key); COMP_CWORD=2; _kafkatool_completion kafkatool; "
             'printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["--key-decoder"]


@pytest.mark.parametrize(("shell", "written"), [
    ("bash", ".bash_completions/kafkatool.sh"), ("zsh", ".zfunc/_kafkatool"),
    ("fish", ".config/fish/completions/kafkatool.fish"),
])
def test_install_completion_writes_the_script(tmp_path: Path, shell: str, written: str) -> None:
    done = _run({"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}, "--install-completion", shell, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{shell} completion installed in" in done.stdout
    assert "_KAFKATOOL_COMPLETE" in (tmp_path / written).read_text()
    if shell == "bash":
        assert f"source '{tmp_path / written}'" in (tmp_path / ".bashrc").read_text()


def test_show_completion_detects_the_calling_shell() -> None:
    """Without typer's test switch the shell is the one kafkatool runs from (shellingham), as a user has it."""
    if not shutil.which("bash"):
        pytest.skip("no bash")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_KAFKATOOL", "_TYPER", "COMP_"))}
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", f"{str(SCRIPT)!r} --show-completion; exit $?"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "complete -o default -F _kafkatool_completion kafkatool" in done.stdout
