"""``kafkatool --help`` starts fast (issue 23: < 0.15 s whole process): it imports Typer and ``kafkatool.cli``
only, never the schema, the model or a subcommand, and the default it shows is the decoders' own bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kafkatool import cli
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT
from kafkatool.writing.fixture_writer import PartitionWriter


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


def test_a_kafka_format_dump_imports_no_engine_numpy_or_pydantic(tmp_path: Path) -> None:
    """``dump-segment -f kafka`` runs on the native core: its start-up (a large share of a whole-process dump,
    issue 23) imports the command's options and the DumpLogSegments writer, not the readers and engines of the
    other formats, not NumPy, and not pydantic (Typer 0.29 builds a pydantic adapter per option: pinned below)."""
    segment = tmp_path / "00000000000000000000.log"
    part = PartitionWriter("t", 0)
    part.append([b"a", b"b"], leader_epoch=0)
    part.close()
    segment.write_bytes(part.files()["00000000000000000000.log"])
    code = ("import json, sys\nsys.argv = ['kafkatool', 'dump-segment', '-f', 'kafka', sys.argv[1]]\n"
            "from kafkatool.cli import main\ntry:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print('IMPORTED', json.dumps([code, sorted(sys.modules)]), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(segment)], capture_output=True, text=True, check=True,
                          timeout=60)
    assert "baseOffset: 0 lastOffset: 1 count: 2" in proc.stdout
    exit_code, loaded = json.loads(proc.stderr.rsplit("IMPORTED", 1)[1])
    assert exit_code == 0
    heavy = [m for m in loaded if m.split(".")[0] in ("numpy", "pydantic", "pyarrow", "crc32c")
             or m.startswith(("kafkatool.engine.verify", "kafkatool.engine.rows", "kafkatool.render.output"))]
    assert heavy == [], heavy


def test_salvage_starts_copying_before_numpy_loads(tmp_path: Path) -> None:
    """``salvage --out`` hands its first segments to the writer before the analysis, NumPy and the renderers are
    imported (a tenth of a second of a whole-process salvage, when the disk could already be writing)."""
    logdir = tmp_path / "logdir"
    part = PartitionWriter("t", 0)
    part.append([b"a", b"b"], leader_epoch=0)
    part.close()
    (logdir / "t-0").mkdir(parents=True)
    for name, data in part.files().items():
        (logdir / "t-0" / name).write_bytes(data)
    code = ("import json, sys\nfrom kafkatool.writing import salvage_writer as w\nseen = []\n"
            "real = w.StagedDir.ahead\n"
            "def ahead(self, files, complete=()):\n"
            "    files = list(files)\n"
            "    if not seen:\n"
            "        seen.append([[n for n, _ in files], sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'rich', 'pyarrow') or m.startswith(('kafkatool.analysis', 'kafkatool.engine')))])\n"
            "    return real(self, files, complete)\n"
            "w.StagedDir.ahead = ahead\n"
            "sys.argv = ['kafkatool', 'salvage', '--out', sys.argv[1], '-f', 'json', sys.argv[2]]\n"
            "from kafkatool.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('SEEN', json.dumps(seen), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out"), str(logdir)], capture_output=True,
                          text=True, timeout=120)
    seen = json.loads(proc.stderr.rsplit("SEEN", 1)[1])
    assert seen == [[["t-0/00000000000000000000.log"], []]], (seen, proc.stderr[-2000:])
    assert (tmp_path / "out" / "t-0" / "00000000000000000000.log").read_bytes() == \
        (logdir / "t-0" / "00000000000000000000.log").read_bytes()
