"""kafkatool's build backend: maturin's, with one clear line when Rust's cargo is missing.

maturin compiles the native core (``kafkatool/_core``) with cargo. Without cargo it tries to download a Rust
toolchain and, where that cannot be done, fails with a long traceback that never says what is missing. Every
hook that compiles is checked first here: no cargo, one line saying so and what to do instead. ``build_sdist``
needs no compiler and goes straight to maturin.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

MISSING_CARGO = (
    "kafkatool: building the native core needs Rust's cargo, and none was found (not on PATH, not in "
    "$CARGO_HOME/bin or ~/.cargo/bin): install Rust (rustup, https://rustup.rs) and run the install again, "
    "or install a prebuilt kafkatool wheel (pip install kafkatool-*.whl), which needs no Rust"
)


def find_cargo() -> str | None:
    """The cargo maturin would run: ``$CARGO``, on ``PATH``, or in cargo's home (rustup's default place)."""
    named = os.environ.get("CARGO")
    if named and Path(named).is_file():
        return named
    found = shutil.which("cargo")
    if found:
        return found
    home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
    candidate = home / "bin" / "cargo"
    return str(candidate) if candidate.is_file() else None


def _need_cargo() -> ModuleType:
    """maturin's backend, once cargo is known to be there (imported here: the check needs no maturin)."""
    if find_cargo() is None:
        raise SystemExit(MISSING_CARGO)
    return _maturin()


def _maturin() -> ModuleType:
    import maturin

    return maturin


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """maturin's build requirements (after the cargo check)."""
    return _need_cargo().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    """maturin's editable-build requirements (after the cargo check)."""
    return _need_cargo().get_requires_for_build_editable(config_settings)


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    """maturin's sdist requirements (no compiler needed)."""
    return _maturin().get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """maturin's wheel metadata (after the cargo check: maturin asks cargo for it)."""
    return _need_cargo().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: dict[str, Any] | None = None) -> str:
    """maturin's editable metadata (after the cargo check)."""
    return _need_cargo().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    """maturin's wheel (after the cargo check)."""
    return _need_cargo().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """maturin's editable wheel (after the cargo check)."""
    return _need_cargo().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """maturin's sdist."""
    return _maturin().build_sdist(sdist_directory, config_settings)
