"""The native core's layout constants are the construct schema's (issue 23): the generated Rust file is exactly
what the declarations give today, and the built extension carries the same fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool.schema import native, record_batch
from kafkatool.schema.native_layout import RUST_PATH, fingerprint, rust_source

REPO = Path(__file__).resolve().parents[1]


def test_the_generated_file_matches_the_schema() -> None:
    assert (REPO / RUST_PATH).read_text() == rust_source(), (
        "kafkatool/_core/src/layout.rs is stale: run python -m kafkatool.writing.native_layout")


def test_the_constants_are_the_declared_ones() -> None:
    text = rust_source()
    assert f"pub const V2_HEADER_SIZE: usize = {record_batch.HEADER_SIZE};" in text
    assert f"pub const V2_BASE_SEQUENCE_OFFSET: usize = {record_batch.FIELD_OFFSETS['base_sequence']};" in text
    assert f"pub const V2_CONTROL_FLAG: i16 = {record_batch.CONTROL_FLAG};" in text


def test_the_built_extension_was_built_from_this_layout() -> None:
    core = native.core()
    if core is None:
        pytest.skip(native.why_not())
    assert core.build_info()[1] == fingerprint(), "the extension is stale: pip install -e . rebuilds it"


def test_every_entry_point_is_known() -> None:
    """The extension's functions are exactly those kafkatool calls (a new one is added to ENTRY_POINTS, where the
    stale-build check and the fuzzer's list look)."""
    core = native.core()
    if core is None:
        pytest.skip(native.why_not())
    exported = {name for name in dir(core) if not name.startswith("_") and callable(getattr(core, name))}
    assert exported == set(native.ENTRY_POINTS)
