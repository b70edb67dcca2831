"""Write the native core's generated layout constants (``kafkatool/_core/src/layout.rs``) from the schema.

Run ``python -m kafkatool.writing.native_layout`` after changing a declaration the crate reads; the drift test
(``tests/test_native_layout.py``) fails until it is run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kafkatool.schema.native_layout import RUST_PATH, rust_source

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    """Write the file when it differs; say what was done on stderr."""
    target = REPO / RUST_PATH
    text = rust_source()
    if target.exists() and target.read_text() == text:
        print(f"{RUST_PATH}: up to date", file=sys.stderr)
        return 0
    tmp = target.with_suffix(".rs.tmp")
    tmp.write_text(text)
    tmp.replace(target)
    print(f"{RUST_PATH}: written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
