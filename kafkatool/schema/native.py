"""The native core (``kafkatool._native``, the Rust crate in ``kafkatool/_core``) when it is usable.

The hot paths call :func:`core` and take the Python path (the construct schema, the declared reference) when it
returns ``None``: the extension was not built, was built from another layout than this schema's, or the user
switched it off with ``KAFKATOOL_NATIVE=0`` (the differential tests run both paths this way).
"""

from __future__ import annotations

import os
from types import ModuleType

from kafkatool.model import Compression
from kafkatool.schema.native_layout import fingerprint

_state: dict[str, ModuleType | str | None] = {}

# Every entry point the Python side calls: an extension built from older sources lacks some and is not used.
ENTRY_POINTS = ("build_info", "walk_bytes", "walk_path", "walk_entries_bytes", "walk_entries_path", "decompress",
                "decode_records", "dls_batch_lines_bytes", "dls_batch_lines_path", "dump_deep", "dump_deep_inflated",
                "replay_producers", "recover_segment_scan", "jsonl_rows", "jsonl_rows_inflated", "table_widths",
                "table_lines")

#: Codec ids whose payloads the native codecs may hand back (zstd without a content checksum; lz4 blocks with a
#: match offset of 0, see ``kafkatool/_core/src/codecs.rs``): the writers' ``*_inflated`` entry points take them
#: decompressed by Python.
INFLATED_BY_PYTHON = (Compression.ZSTD.value, Compression.LZ4.value)


def core() -> ModuleType | None:
    """The extension module, or ``None`` when it must not or cannot be used (see :func:`why_not`)."""
    if os.environ.get("KAFKATOOL_NATIVE", "1") in ("0", "off", "no", "false"):
        return None
    if "core" not in _state:
        _state["core"], _state["why"] = _load()
    found = _state["core"]
    return found if isinstance(found, ModuleType) else None


def why_not() -> str:
    """Why :func:`core` returns ``None`` (empty when it does not)."""
    if os.environ.get("KAFKATOOL_NATIVE", "1") in ("0", "off", "no", "false"):
        return "switched off by KAFKATOOL_NATIVE"
    core()
    why = _state.get("why")
    return why if isinstance(why, str) else ""


def _load() -> tuple[ModuleType | None, str]:
    try:
        from kafkatool import _native  # type: ignore[attr-defined]
    except ImportError as exc:
        return None, f"the native core is not built ({exc}): pip install -e . builds it"
    if _native.build_info()[1] != fingerprint():
        return None, "the native core was built from another layout: pip install -e . rebuilds it"
    missing = [name for name in ENTRY_POINTS if not hasattr(_native, name)]
    if missing:
        return None, (f"the native core is older than this checkout (no {', '.join(missing)}): "
                      "pip install -e . rebuilds it")
    return _native, ""
