"""``kafkatool --help`` starts fast (issue 23: < 0.15 s whole process): it imports Typer and ``kafkatool.cli``
only, never the schema, the model or a subcommand, and the default it shows is the decoders' own bound."""

from __future__ import annotations

import json
import subprocess
import sys

from kafkatool import cli
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT


def test_help_default_is_the_codecs_bound() -> None:
    assert cli.DEFAULT_MAX_OUTPUT == DEFAULT_MAX_OUTPUT


def test_help_imports_only_the_command_line() -> None:
    code = ("import json, sys\nsys.argv = ['kafkatool', '--help']\nfrom kafkatool.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "mine = sorted(m for m in sys.modules if m.startswith('kafkatool'))\n"
            "print('IMPORTED', json.dumps(mine), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = json.loads(proc.stderr.rsplit("IMPORTED", 1)[1])
    assert set(loaded) <= {"kafkatool", "kafkatool.cli", "kafkatool.commands", "kafkatool.commands.help_style"}, \
        loaded
