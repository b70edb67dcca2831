"""Reading a previous scan's tables back (``scan --since``): Parquet through :mod:`pyarrow.dataset`, locally or
from an object store, a record batch at a time (memory bounded by a batch, not by the table)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kafkatool.errors import UnreadableInputError
from kafkatool.reading.objects import ObjectPath, filesystem, input_path, is_remote


def _dataset(out: str, table: str) -> Any:
    import pyarrow.dataset as ds

    target = input_path(out)
    try:
        if is_remote(target):
            assert isinstance(target, ObjectPath)
            fs, key = filesystem(target)
            return ds.dataset(f"{key}/{table}", filesystem=fs, format="parquet")
        return ds.dataset(str(target / table), format="parquet")
    except (OSError, ValueError) as err:
        text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UnreadableInputError(f"{out}/{table}", f"not a readable scan table ({text[:200]})") from None


def table_batches(out: str, table: str, columns: list[str] | None = None) -> Iterator[Any]:
    """The record batches of ``table`` in the scan output ``out`` (``columns``: only those)."""
    dataset = _dataset(out, table)
    try:
        yield from dataset.to_batches(columns=columns)
    except (OSError, ValueError) as err:
        raise UnreadableInputError(f"{out}/{table}", f"unreadable Parquet ({str(err)[:200]})") from None
