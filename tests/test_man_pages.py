"""Man pages: clean for groff (``-ww`` warns about every questionable request) and shipped in the wheel under
``share/man/man1`` (section 1, the commands) and ``share/man/man7`` (kafkatool(7): architecture, native core,
hostile input; issue 35), so ``man kafkatool-dump-segment`` and ``man 7 kafkatool`` work after ``pip install``
(issue 20)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted(p.name for p in (REPO / "man").glob("*.[17]"))


@pytest.mark.parametrize("page", PAGES)
def test_groff_prints_no_warning(page: str) -> None:
    if not shutil.which("groff"):
        pytest.skip("groff not installed")
    proc = subprocess.run(["groff", "-ww", "-z", "-man", str(REPO / "man" / page)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_the_wheel_installs_every_man_page(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("kafkatool-*.whl")
    with zipfile.ZipFile(wheel) as z:
        shipped = {n.split("/data/share/man/", 1)[1] for n in z.namelist() if "/data/share/man/" in n}
    assert shipped == {f"man{page[-1]}/{page}" for page in PAGES}


def test_salvage_page_documents_every_option_of_its_help() -> None:
    import re

    from typer.testing import CliRunner

    from kafkatool.cli import app

    helptext = CliRunner().invoke(app, ["salvage", "--help"]).stdout
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", helptext)) - {"--help"}
    page = (REPO / "man" / "kafkatool-salvage.1").read_text().replace("\\-", "-")
    assert options and not {o for o in options if o not in page}, sorted(o for o in options if o not in page)
