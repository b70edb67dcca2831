"""The build backend (build_backend/kafkatool_build.py): without cargo an install stops with one line saying why."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BACKEND = ROOT / "build_backend" / "kafkatool_build.py"


def _load():
    spec = importlib.util.spec_from_file_location("kafkatool_build_under_test", BACKEND)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bare_env(tmp_path: Path, path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CARGO", "CARGO_HOME", "RUSTUP_HOME")}
    env.update(HOME=str(tmp_path / "home"), PATH=path)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def test_pyproject_names_the_wrapper() -> None:
    import tomllib

    system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    assert system["build-backend"] == "kafkatool_build"
    assert (ROOT / system["backend-path"][0] / "kafkatool_build.py").is_file()


@pytest.mark.parametrize("hook", ["build_wheel", "build_editable", "prepare_metadata_for_build_wheel",
                                  "get_requires_for_build_wheel", "get_requires_for_build_editable"])
def test_no_cargo_is_one_line(tmp_path: Path, hook: str) -> None:
    # A child process: the hook runs as pip runs it, with no cargo anywhere it or maturin would look.
    args = "(r'" + str(tmp_path) + "',)" if hook in ("build_wheel", "build_editable",
                                                    "prepare_metadata_for_build_wheel") else "()"
    code = (f"import sys; sys.path.insert(0, {str(BACKEND.parent)!r}); import kafkatool_build as b; "
            f"b.{hook}(*{args})")
    done = subprocess.run([sys.executable, "-c", code], env=_bare_env(tmp_path, "/usr/bin:/bin"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines == [_load().MISSING_CARGO]
    assert "Rust's cargo" in lines[0] and "wheel" in lines[0]
    assert "Traceback" not in done.stderr


def test_cargo_found_where_maturin_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _load()
    monkeypatch.delenv("CARGO", raising=False)
    monkeypatch.delenv("CARGO_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert backend.find_cargo() is None
    home_cargo = tmp_path / ".cargo" / "bin" / "cargo"
    home_cargo.parent.mkdir(parents=True)
    home_cargo.write_text("#!/bin/sh\n")
    home_cargo.chmod(0o755)
    assert backend.find_cargo() == str(home_cargo)
    on_path = tmp_path / "bin" / "cargo"
    on_path.parent.mkdir()
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert backend.find_cargo() == str(on_path)


def test_sdist_carries_the_backend() -> None:
    import tomllib

    maturin = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]
    assert {"path": "build_backend/**/*.py", "format": "sdist"} in maturin["include"]
