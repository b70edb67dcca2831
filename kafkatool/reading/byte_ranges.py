"""Byte ranges of input files, for a writer to copy without the bytes passing through Python, and the first
repaired segment of each partition that a salvage of plain inputs most likely writes, listed before any of the
heavier reading code is even imported (``salvage --out`` starts copying it while the rest loads and the scan
runs; ``writing.salvage_writer.StagedDir.ahead``). Read-only, like all of ``reading``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kafkatool.errors import UnreadableInputError
from kafkatool.reading import files
from kafkatool.reading.files import _reason, survey
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.schema.filenames import (
    CLUSTER_METADATA_TOPIC,
    LOG_SUFFIX,
    DirState,
    offset_from_name,
    parse_partition_dir,
)

COPY_CHUNK = 8 << 20
"""Bytes copied per call by :meth:`ByteRange.copy_into`: the writer starts each chunk's write-back as it lands. 1 GiB
copied and synced took 0.50-0.52 s in 8 MiB chunks, 0.53-0.60 s in 16 MiB, 0.61-0.65 s in 64 MiB, and 0.82-0.86 s
copied whole then synced (2026-11-28, on this project's CI machine, three runs each)."""

@dataclass(frozen=True)
class ByteRange:
    """The bytes ``[start, end)`` of an input file (a segment's piece), for a writer to copy into its output
    without the bytes passing through Python: the kernel copies them (``os.copy_file_range``) where the file
    systems allow, else they are read and written a chunk at a time."""

    path: str
    start: int
    end: int

    def copy_into(self, out: int, at: int, landed: Callable[[int, int], bool | None] | None = None) -> int:
        """Copy the range into the descriptor ``out`` from its byte ``at``, :data:`COPY_CHUNK` bytes at a time,
        calling ``landed(position, length)`` after each chunk (``False`` from it stops the copy there); the bytes
        copied. An input that cannot be opened or read, or that ends before ``end`` (it changed while read), is
        :class:`UnreadableInputError`; a failure to write is the ``OSError`` itself, for the writer to name its
        output (a kernel copy that fails is done again through memory, where the two are told apart)."""
        fd = files.open_regular(self.path)
        try:
            pos, dst, kernel = self.start, at, hasattr(os, "copy_file_range")
            while pos < self.end:
                want = min(COPY_CHUNK, self.end - pos)
                n = -1
                if kernel:
                    try:
                        n = os.copy_file_range(fd, out, want, pos, dst)
                    except OSError:
                        kernel = False
                if n < 0:
                    try:
                        block = os.pread(fd, want, pos)
                    except OSError as err:
                        raise UnreadableInputError(self.path, _reason(err)) from None
                    n = len(block)
                    view = memoryview(block)
                    while view:
                        view = view[os.pwrite(out, view, dst + n - len(view)):]
                if n == 0:
                    raise UnreadableInputError(self.path, f"changed while read: {self.end - self.start} bytes at "
                                               f"byte {self.start} expected, {pos - self.start} read")
                pos += n
                dst += n
                if landed is not None and landed(dst - n, n) is False:
                    break
            return pos - self.start
        finally:
            os.close(fd)

    def after(self, n: int) -> ByteRange:
        """The range without its first ``n`` bytes."""
        return ByteRange(self.path, min(self.start + n, self.end), self.end)


def first_segments(paths: list[Path], segment_bytes: int, only: str | None = None) -> list[tuple[str, list[ByteRange]]]:
    """Each partition's first repaired segment as it most likely comes out, by relative path, for a writer's head
    start: the partition's live segments whole, in offset order, up to ``segment_bytes`` in all, under the first
    one's name (what the plan makes of undamaged segments, and of a damaged one up to its damage). Only partitions
    one input holds (a log dir's partition directories, or a partition directory given alone), and only the
    topic-partition ``only`` when given; the metadata log's partition is copied as it is, never guessed. A guess is
    never trusted: the writer keeps of it what salvage's plan then says byte for byte, and entries that are not
    regular files inside the inputs (``reading.files.survey``) are never part of one."""
    dirs: dict[str, list[tuple[Path, DirState]]] = {}
    for path in paths:
        if parse_partition_dir(path.name) is not None and looks_like_partition_dir(path):
            found = [path]
        else:
            try:
                found = [p for p in survey(path)[0] if p.is_dir()]
            except (OSError, UnreadableInputError):
                continue
        for d in found:
            parsed = parse_partition_dir(d.name)
            if parsed is not None:  # every copy of a partition (-delete, -stray, -future too) is counted
                dirs.setdefault(str(parsed[0]), []).append((d, parsed[1]))
    out: list[tuple[str, list[ByteRange]]] = []
    for name, copies in sorted(dirs.items()):
        if len(copies) != 1 or copies[0][1] is not DirState.LIVE or (only is not None and name != only) \
                or name.startswith(CLUSTER_METADATA_TOPIC + "-"):
            continue
        try:
            entries = survey(copies[0][0])[0]
        except (OSError, UnreadableInputError):
            continue
        logs = sorted((offset_from_name(p.name), p) for p in entries
                      if offset_from_name(p.name) is not None and p.name[20:] == LOG_SUFFIX and p.is_file())
        pieces = leading(_whole_files(p for _, p in logs), segment_bytes)
        if pieces:
            out.append((f"{name}/{Path(pieces[0].path).name}", pieces))
    return out


def _whole_files(paths: Iterable[Path]) -> Iterator[ByteRange]:
    """Each file whole, in order, up to the first that cannot be looked at (the scan names it)."""
    for p in paths:
        try:
            size = os.stat(p).st_size
        except OSError:
            return
        yield ByteRange(str(p), 0, size)


def leading(pieces: Iterable[ByteRange], size: int) -> list[ByteRange]:
    """The first ``size`` bytes that ``pieces`` lay out one after another (empty pieces left out): a segment's
    bytes up to ``segment.bytes``, where the planner rolls."""
    out: list[ByteRange] = []
    for piece in pieces:
        if size <= 0:
            break
        take = min(piece.end - piece.start, size)
        if take > 0:
            out.append(ByteRange(piece.path, piece.start, piece.start + take))
            size -= take
    return out
