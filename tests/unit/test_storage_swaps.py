"""storage.swaps: what Kafka's log loader does with ``.deleted``, ``.cleaned`` and ``.swap`` files."""

from __future__ import annotations

from kafkatool.schema.filenames import segment_file_name
from kafkatool.storage.swaps import (
    in_swap_range,
    is_cleaned_file,
    is_deleted_file,
    is_incomplete_split,
    is_swap_file,
    min_cleaned_offset,
    sort_temp_files,
    swap_range,
)


def name(offset: int, suffix: str) -> str:
    return segment_file_name(offset, suffix)


def test_suffixes() -> None:
    assert is_deleted_file(name(0, ".log.deleted"))
    assert not is_deleted_file("00000000000000000010-0000000001.checkpoint.deleted")  # the metadata log's own
    assert is_cleaned_file(name(0, ".log.cleaned")) and not is_cleaned_file(name(0, ".log"))
    assert is_swap_file(name(0, ".index.swap")) and not is_swap_file(name(0, ".log.cleaned"))


def test_a_swap_at_or_above_the_lowest_cleaned_offset_is_an_incomplete_split() -> None:
    assert not is_incomplete_split(5, None)
    assert not is_incomplete_split(4, 5)
    assert is_incomplete_split(5, 5) and is_incomplete_split(9, 5)


def test_sort_temp_files_keeps_the_order_and_sorts_each_kind() -> None:
    names = [name(30, ".log.swap"), name(0, ".log.deleted"), name(20, ".log.cleaned"), name(10, ".log.swap"),
             name(10, ".index.swap"), name(25, ".log.cleaned"), name(0, ".index.deleted")]
    temp = sort_temp_files(names)
    assert temp.min_cleaned == 20
    assert temp.deleted == (name(0, ".log.deleted"), name(0, ".index.deleted"))
    assert temp.cleaned == (name(20, ".log.cleaned"), name(25, ".log.cleaned"))
    assert temp.incomplete_swaps == (name(30, ".log.swap"),)
    assert temp.swaps == (name(10, ".log.swap"), name(10, ".index.swap"))
    assert temp.swap_log_offsets() == [10]


def test_without_cleaned_files_every_swap_is_kept() -> None:
    temp = sort_temp_files([name(40, ".log.swap"), name(0, ".log.swap"), name(0, ".timeindex.swap")])
    assert temp.min_cleaned is None and temp.incomplete_swaps == ()
    assert temp.swap_log_offsets() == [0, 40]
    assert min_cleaned_offset([name(7, ".log"), name(9, ".log.swap")]) is None


def test_the_swapped_range_runs_from_the_lowest_base_to_the_highest_next_offset() -> None:
    assert swap_range({}) is None
    swapped = swap_range({10: 25, 0: 12})
    assert swapped == (0, 25)
    assert swapped is not None
    assert [o for o in (0, 5, 10, 24, 25, 30) if in_swap_range(o, swapped)] == [0, 5, 10, 24]
