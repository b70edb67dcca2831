"""``dump-segment --format kafka``'s renderer: DumpLogSegments' exact text, for scripts written against
``kafka-dump-log.sh``. An output format beside table/json/jsonl (``render.output``), streamed to a text stream.

Glue only: files are read through :mod:`kafkatool.reading`, decoded by the schema layer and turned into
Kafka's text by :mod:`kafkatool.engine.dls`, which models ``DumpLogSegments.execute``. Like Kafka, the run
stops at the first exception (its message on stderr, exit 1) and prints the cross-file summaries on stderr
only when every file was dumped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from kafkatool.engine import dls
from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import ProducerSnapshotEntry
from kafkatool.reading import siblings
from kafkatool.reading.context import resolve
from kafkatool.schema.codecs import ReadLimits

if TYPE_CHECKING:  # the decoders are imported by the command only when one is chosen
    from kafkatool.engine.dls_decoders import Parser


def _java_io_message(err: UnreadableInputError) -> str:
    """The ``getMessage()`` of the ``IOException`` Java raises for the same OS failure."""
    if err.reason == "is a directory":
        return "Is a directory"
    return err.path


def _offset_slots(data: Any, base_offset: int) -> dls.IndexSlots:
    """Every slot of an ``.index`` as ``OffsetIndex`` maps it (read when looked at)."""
    from kafkatool.schema import offset_index

    return dls.IndexSlots(base_offset, len(data), offset_index.SlotView(data, offset_index.ENTRY_STRUCT, 0,
                                                                        base_offset))


def _time_slots(data: Any, base_offset: int) -> dls.IndexSlots:
    """Every slot of a ``.timeindex`` as ``TimeIndex`` maps it (read when looked at)."""
    from kafkatool.schema import offset_index, time_index

    return dls.IndexSlots(base_offset, len(data), offset_index.SlotView(data, time_index.ENTRY_STRUCT, 1,
                                                                        base_offset))


def _snapshot(data: bytes) -> tuple[list[ProducerSnapshotEntry] | None, str | None]:
    """Producers of a ``.snapshot`` or the ``CorruptSnapshotException`` message Kafka would print."""
    from kafkatool.schema import producer_snapshot

    corrupt = producer_snapshot.snapshot_corruption(data)
    if corrupt is not None:
        return None, corrupt
    return list(producer_snapshot.parse_producer_snapshot(data).entries), None


def _fast_lines(path: str, buf: Any, stream: Any = None) -> dls.FastLines | None:
    """The native core's shallow batch-line writer bound to the file at ``path`` (read by it in bounded chunks;
    ``buf`` is that file mapped) or to ``buf`` itself when it is ``bytes``; ``None`` without the core.

    When the lines go to ``stream``'s ``write`` and ``stream`` is a text file over a binary one (``sys.stdout``),
    the text layer is flushed and the blocks go to the binary layer as bytes (the text is ASCII)."""
    from kafkatool.schema.native import core

    native = core()
    if native is None or buf is None:
        return None
    size = len(buf)

    def lines(start: int, end: int, emit: dls.Emit) -> int:
        target: Any = emit
        binary = getattr(stream, "buffer", None) if stream is not None and emit == stream.write else None
        if binary is not None:
            stream.flush()
            target = binary.write
        if isinstance(buf, bytes):
            return native.dls_batch_lines_bytes(buf, start, end, target, binary is not None)  # type: ignore[no-any-return]
        return native.dls_batch_lines_path(path, start, end, size, target, binary is not None)  # type: ignore[no-any-return]

    return lines


def _dump_one(session: dls.DlsSession, path: str, *, deep: bool, print_data: bool, verify_index_only: bool,
              index_sanity_check: bool, max_message_size: int, max_bytes: int | None,
              skip_record_metadata: bool, parser: Parser | None = None,
              emit: dls.Emit | None = None, max_output: int | None = None, stream: Any = None) -> dls.FileDump:
    """Read what DumpLogSegments reads for ``path`` and emulate its dump of it (segment and index lines streamed
    to ``emit`` as made, so memory stays flat whatever the segment holds)."""
    key = siblings.absolute_path(path)
    kind = dls.file_kind(path, session.layout)
    if kind == "unknown":
        return dls.FileDump(err=[dls.unknown_file_line(path)])
    if kind == "log":
        with siblings.mapped_if_exists(path) as buf:
            return dls.dump_log(session, path, buf, deep=deep, print_data=print_data,
                                skip_record_metadata=skip_record_metadata, max_bytes=max_bytes, key=key,
                                parser=parser, emit=emit, max_output=max_output,
                                fast_lines=_fast_lines(path, buf, stream))
    if kind == "snapshot":
        data = siblings.read_if_exists(path)
        if data is None:
            return dls.dump_snapshot(path, None, layout=session.layout)
        entries, corrupt = _snapshot(data)
        return dls.dump_snapshot(path, entries, corrupt, layout=session.layout)
    if kind == "txnindex":
        from kafkatool.reading.files import read_txn_index

        exists = siblings.exists(path)
        return dls.dump_txn_index(path, read_txn_index(path) if exists else None, emit=emit)
    base = dls.base_offset_of(path)
    log_path = dls.sibling_path(path, dls.LOG_SUFFIX)
    with siblings.mapped_if_exists(log_path) as log_buf:
        if kind == "index":
            # indexes are mapped and their slots read where looked at: a preallocated zero fill is never read
            with siblings.mapped_if_exists(path if log_buf is not None else "") as data:
                index = None if data is None else _offset_slots(data, base)
                return dls.dump_index(session, path, index, log_buf, verify_only=verify_index_only,
                                      sanity_only=index_sanity_check, max_message_size=max_message_size, key=key,
                                      emit=emit)
        index_path = dls.sibling_path(path, dls.INDEX_SUFFIX)
        with siblings.mapped_if_exists(index_path if log_buf is not None else "") as index_data, \
                siblings.mapped_if_exists(path if index_data is not None else "") as time_data:
            return dls.dump_time_index(
                session, path, None if time_data is None else _time_slots(time_data, base),
                None if index_data is None else _offset_slots(index_data, base), log_buf,
                verify_only=verify_index_only, sanity_only=index_sanity_check, key=key, emit=emit,
                max_output=max_output)


def run_kafka_format(paths: list[str], *, deep: bool, print_data: bool, verify_index_only: bool,
                     index_sanity_check: bool, max_message_size: int, max_bytes: int | None,
                     skip_record_metadata: bool, out: TextIO, err: TextIO, parser: Parser | None = None,
                     layout: dls.KafkaLayout = dls.DEFAULT_LAYOUT, limits: ReadLimits | None = None) -> int:
    """Dump ``paths`` as ``kafka-dump-log.sh --files`` would; returns its exit code (0, or 1 on an exception).

    stdout text goes to ``out``, stderr lines (unknown files, corrupt snapshots, the crash message, the
    summaries) to ``err``. Paths are printed as given; ``layout`` is the release line whose text is reproduced;
    ``limits`` bound decompression (``None``: the run's, see :mod:`kafkatool.reading.context`).
    """
    max_output = resolve(limits).max_decompressed_bytes
    session = dls.DlsSession(layout)
    for given in paths:
        path = dls.java_file(given)
        out.write(f"Dumping {path}\n")
        try:
            result = _dump_one(session, path, deep=deep, print_data=print_data,
                               verify_index_only=verify_index_only, index_sanity_check=index_sanity_check,
                               max_message_size=max_message_size, max_bytes=max_bytes,
                               skip_record_metadata=skip_record_metadata, parser=parser, emit=out.write,
                               max_output=max_output, stream=out)
        except dls.DlsError as error:
            result = dls.FileDump(crash=error.line)
        except UnreadableInputError as error:
            result = dls.FileDump(crash=_java_io_message(error))
        except DecodeError as error:
            result = dls.FileDump(crash=error.reason)
        out.write(result.text())
        for line in result.err:
            err.write(line + "\n")
        if result.crash is not None:
            out.flush()
            err.write(result.crash + "\n")
            return 1
    for line in session.summary_lines():
        err.write(line + "\n")
    return 0


__all__ = ["run_kafka_format"]
