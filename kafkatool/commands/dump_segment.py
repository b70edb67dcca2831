"""``kafkatool dump-segment``: decode any Kafka data-directory file, as DumpLogSegments does, and more.

Reads ``.log`` segments (magic 0/1/2, every codec), ``.index``, ``.timeindex``, ``.txnindex``,
producer ``.snapshot`` files, the text checkpoints, ``leader-epoch-checkpoint``, ``partition.metadata``,
``meta.properties`` and ``.kafka_cleanshutdown``. Damage never stops the run: it is reported with the
file, byte position and field, and reading goes on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kafkatool.commands.common import INT32_MAX, INT64_MAX, FollowLinks, run_guarded
from kafkatool.errors import ExitCode, UnreadableInputError, UsageError
from kafkatool.reading.kinds import FORCEABLE, KAFKA_DUMPABLE, SEGMENT_KINDS, kind_of
from kafkatool.reading.objects import input_path
from kafkatool.schema.filenames import (
    BOOTSTRAP_CHECKPOINT,
    CLUSTER_METADATA_TOPIC,
    FileKind,
    classify,
    offset_from_name,
    parse_partition_dir,
)
from kafkatool.schema.topic_records import DECODER_NAMES

if TYPE_CHECKING:
    from kafkatool.engine import rows
    from kafkatool.model import Defect, LogEntry
    from kafkatool.reading import small_files
    from kafkatool.render.output import Diagnostics, Output
    from kafkatool.schema.topic_records import DecodeFn, RecordDefect

# Only the option declarations are imported with this module: ``--format kafka`` runs on the native core and
# needs none of the readers, engines and renderers the other formats import when they run (start-up is a large
# share of a whole-process dump).

#: The kinds ``--kind`` can force, by their output label (from the file-kind registry, ``reading.kinds``).
ForcedKind = StrEnum("ForcedKind", {k.value: k.value for k in FORCEABLE})  # type: ignore[misc]


class Format(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"
    jsonl = "jsonl"
    kafka = "kafka"


class Decoder(StrEnum):
    """How keys and values are shown with ``--print-data``."""

    utf8 = "utf8"
    hex = "hex"
    base64 = "base64"
    json = "json"
    none = "none"


TopicDecoderName = StrEnum("TopicDecoderName", {n: n for n in ("auto", "none", *sorted(DECODER_NAMES))})  # type: ignore[misc]


def topic_decoder_for(path: Path, choice: str) -> DecodeFn | None:
    """The internal-topic record decoder for a segment: by ``--decoder`` name, or (``auto``) by the topic of the
    partition directory holding it; ``None`` for ordinary topics and ``none``."""
    from kafkatool.schema.topic_records import decoder_for_topic, decoder_named

    if choice == "none":
        return None
    if choice != "auto":
        named = decoder_named(choice)
        return None if named is None else named.decode
    if path.name == BOOTSTRAP_CHECKPOINT:  # the log dir's bootstrap metadata: KRaft metadata records
        found = decoder_for_topic(CLUSTER_METADATA_TOPIC)
        return None if found is None else found.decode
    parsed = parse_partition_dir(path.resolve().parent.name)
    found = decoder_for_topic(parsed[0].topic) if parsed and parsed[0] is not None else None
    return None if found is None else found.decode


@dataclass(frozen=True)
class Options:
    """The parsed command line."""

    deep: bool
    print_data: bool
    key_decoder: str
    value_decoder: str
    offsets: tuple[int | None, int | None]
    max_bytes: int | None
    verify: bool
    topic_decoder: str = "auto"
    seen: list[tuple[int, int, int]] = field(default_factory=list)  # per .log dumped: (first, next, shown)
    kind: FileKind | None = None  # --kind: the file kind, whatever the names say
    wide: bool = False  # --wide: every table column, whatever the terminal's width


def parse_offsets(text: str | None) -> tuple[int | None, int | None]:
    """``START:END`` (inclusive, either side optional) or a single offset."""
    if not text:
        return None, None
    try:
        if ":" not in text:
            one = int(text)
            start = end = one
        else:
            lo, hi = text.split(":", 1)
            start = int(lo) if lo.strip() else None
            end = int(hi) if hi.strip() else None
    except ValueError:
        raise UsageError(f"--offsets expects START:END with integers, got {text!r}") from None
    for value in (start, end):
        if value is not None and not 0 <= value <= INT64_MAX:
            raise UsageError(f"--offsets {text}: {value} is out of range (offsets are 0 to {INT64_MAX})")
    if start is not None and end is not None and end < start:
        raise UsageError(f"--offsets: END {end} is below START {start}")
    return start, end


def _in_range(e: LogEntry, lo: int | None, hi: int | None) -> bool:
    if lo is not None and e.last_offset < lo:
        return False
    return not (hi is not None and e.base_offset > hi)


#: How many bytes of a segment go by between two steps of the progress bar (a step a batch costs too much).
PROGRESS_STEP = 4 << 20


def dump_log(path: Path, out: Output, opts: Options, verify: bool,
             advance: Callable[[int], None] = lambda n: None) -> list[Defect]:
    """Stream one segment's entries (and defects) to ``out``; ``advance(n)`` counts the bytes gone by."""
    from kafkatool.engine import rows
    from kafkatool.engine.verify import LogChecker
    from kafkatool.model import Defect
    from kafkatool.reading.log import open_log
    from kafkatool.render.jsonl_native import NativeRows
    from kafkatool.render.table_native import NativeTable

    name = str(path)
    base = offset_from_name(path.name)
    # A KRaft snapshot is named after its end offset and numbers its own records from 0: no name check.
    snapshot = kind_of(path, opts.kind) is FileKind.KRAFT_SNAPSHOT
    checker = LogChecker(name, None if snapshot else base) if verify else None
    defects: list[Defect] = []
    lo, hi = opts.offsets
    filtered = lo is not None or hi is not None
    key_dec = opts.key_decoder if opts.print_data else None
    value_dec = opts.value_decoder if opts.print_data else None
    topic_dec = topic_decoder_for(path, opts.topic_decoder) if opts.print_data else None
    count = 0
    first: int | None = None
    last_offset: int | None = None
    counted = 0  # bytes of the file passed to advance()
    native: NativeRows | NativeTable | None = None
    if not filtered and topic_dec is None:
        native = NativeRows.make(out, name, deep=opts.deep or opts.print_data, key_decoder=key_dec,
                                 value_decoder=value_dec)
        if native is None and not (opts.deep or opts.print_data):
            native = NativeTable.make(out, str(path))

    def fast(buf: bytes | memoryview, pos: int, limit: int) -> int:
        """The native rows of the batches from ``pos`` (``schema.log_segment.FastEntries``)."""
        nonlocal count, first, last_offset, counted
        assert native is not None
        run = native(buf, pos, limit)
        if run.count:
            count += run.count
            first = run.first if first is None else first
            last_offset = run.last
            if checker is not None:
                checker.feed_columns(*run.heads())
            if run.stop - counted >= PROGRESS_STEP:
                advance(run.stop - counted)
                counted = run.stop
        return run.stop

    with open_log(path, deep=opts.deep or opts.print_data, max_bytes=opts.max_bytes, label=name,
                  fast=None if native is None else fast) as items:
        # Only once the file is open: an unreadable file prints no header, only its error.
        out.begin_file(name, "log", {"base_offset": base, "size": path.stat().st_size})
        for item in items:
            if isinstance(item, Defect):
                defects.append(item)
                out.row(rows.defect_row(item))
                continue
            if item.position - counted >= PROGRESS_STEP:
                advance(item.position - counted)
                counted = item.position
            if checker is not None:
                checker.feed(item)
            first = item.base_offset if first is None else first
            last_offset = item.last_offset
            if filtered and not _in_range(item, lo, hi):
                continue
            if item.records is not None and (lo is not None or hi is not None):
                item.records = [r for r in item.records if (lo is None or r.offset >= lo)
                                and (hi is None or r.offset <= hi)]
            row = rows.entry_row(item, key_decoder=key_dec, value_decoder=value_dec, topic_decoder=topic_dec)
            out.row(row)
            count += 1
            for rec in row.get("records") or () if topic_dec is not None else ():
                for found in rec.get("decoded", {}).get("defects", ()):
                    d = _record_defect(name, rec, found)
                    defects.append(d)
                    out.row(rows.defect_row(d))
    advance(_log_bytes(path, opts.max_bytes) - counted)
    if checker is not None:
        for d in checker.defects:
            out.row(rows.defect_row(d))
        defects.extend(checker.defects)
    if first is not None and last_offset is not None:
        opts.seen.append((first, last_offset + 1, count))
    out.end_file({"entries": count, "next_offset": None if last_offset is None else last_offset + 1,
                  "defects": len([d for d in defects if d.severity != "info"])})
    return defects


def _record_defect(name: str, rec: rows.Row, found: RecordDefect) -> Defect:
    """A record's decoding defect (``schema.topic_records.RecordDefect``) as a file defect, located at the record.
    A defect naming no field is worded as it always was: its reason where the field goes, no reason after."""
    from kafkatool.model import Defect

    what, why = (found.reason, "") if found.field is None else (found.field, found.reason)
    return Defect("record-decode", name, rec["position"], f"record {rec['offset']} {what}", why, "warning")


def small_rows(loaded: small_files.Loaded) -> tuple[rows.Row, Iterable[rows.Row]]:
    """File-level facts and one row per decoded entry of a small file (``engine.rows.small_file_rows``)."""
    from kafkatool.engine import rows

    info: rows.Row = {"size": loaded.size}
    if loaded.base_offset is not None:
        info["base_offset"] = loaded.base_offset
    if loaded.value is None:
        return info, []
    more, entry_rows = rows.small_file_rows(FileKind(loaded.kind), loaded.value)
    info.update(more)
    return info, entry_rows


def verify_index(path: Path, loaded: small_files.Loaded) -> list[Defect]:
    """Index and time index entries against their segment (read shallow)."""
    from kafkatool.engine.verify import check_offset_index, check_time_index
    from kafkatool.model import Defect
    from kafkatool.reading.logdir import read_segment

    log_path = path.with_name(path.name.split(".", 1)[0] + ".log")
    if not log_path.exists():
        return [Defect("index-without-log", str(path), None, "file",
                       f"{log_path.name} is missing: the index cannot be checked (Kafka deletes such orphans)",
                       "warning")]
    entries = read_segment(log_path).entries  # held lazily: a 1 GiB segment of small batches is millions of them
    base = loaded.base_offset or 0
    value = loaded.value
    if loaded.kind == FileKind.OFFSET_INDEX.value:
        return check_offset_index(str(path), value.entries, base, entries, log_path.stat().st_size, loaded.size)
    return check_time_index(str(path), value.entries, base, entries, loaded.size)


def _log_bytes(path: Path, max_bytes: int | None) -> int:
    """The bytes of a segment that are read (all, or the first ``--max-bytes``); 0 when it cannot be told."""
    try:
        size = path.stat().st_size
    except OSError:
        return 0
    return size if max_bytes is None else min(size, max_bytes)


def dump_file(path: Path, out: Output, opts: Options, diag: Diagnostics,
              advance: Callable[[int], None] = lambda n: None) -> list[Defect] | None:
    """Dump one file by its kind (``--kind``, else its name); ``None`` when the name is not a Kafka file kind.
    ``advance(n)``: the bytes of a segment read, for a progress bar."""
    from kafkatool.engine import rows
    from kafkatool.reading import small_files
    from kafkatool.reading.kinds import SMALL_KINDS

    kind = kind_of(path, opts.kind)
    if kind in SEGMENT_KINDS:
        return dump_log(path, out, opts, opts.verify, advance)
    if kind not in SMALL_KINDS:
        return None
    loaded = small_files.load(path, kind)
    defects = list(loaded.defects)
    if opts.verify and loaded.value is not None and kind in (FileKind.OFFSET_INDEX, FileKind.TIME_INDEX):
        defects += verify_index(path, loaded)
    info, file_rows = small_rows(loaded)
    out.begin_file(str(path), loaded.kind, info)
    count = 0
    for row in file_rows:
        out.row(row)
        count += 1
    for d in defects:
        out.row(rows.defect_row(d))
    out.end_file({"entries": count, "defects": len([d for d in defects if d.severity != "info"])})
    return defects


def kafka_paths(paths: list[str]) -> list[str]:
    """For ``--format kafka``: files as given; a directory becomes the files DumpLogSegments can dump
    (segments, indexes, snapshots), in Kafka's order, named relative to it as the user named it."""
    from kafkatool.reading.inventory import expand

    out: list[str] = []
    for raw in paths:
        if input_path(raw).is_dir():
            out += [str(p) for p in expand([raw]) if classify(p.name) in KAFKA_DUMPABLE]
        else:
            out.append(raw)
    return out


def _bar_wanted(files: list[Path], opts: Options, quiet: bool) -> tuple[int, bool]:
    """The segment bytes to read, and whether a progress bar is shown: stderr a terminal, stdout not one (the
    rows would run through the bar: on a terminal they show the progress themselves), big enough, no ``--quiet``."""
    from kafkatool.render.scan_report import wants_progress

    total = sum(_log_bytes(p, opts.max_bytes) for p in files if kind_of(p, opts.kind) in SEGMENT_KINDS)
    try:
        stdout_tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        stdout_tty = False
    return total, not stdout_tty and wants_progress(total, quiet=quiet)


def run(paths: list[str], fmt: Format, opts: Options, quiet: bool = True) -> int:
    """The command body: expand paths, dump each file, pick the exit code (``quiet``: no progress bar)."""
    from kafkatool.engine import rows
    from kafkatool.model import Defect
    from kafkatool.reading.inventory import expand_with_refusals, refused_defects
    from kafkatool.render.output import Diagnostics, make_output
    from kafkatool.render.scan_report import byte_progress

    diag = Diagnostics()
    files, refused = expand_with_refusals(paths)
    out = make_output(fmt.value, wide=opts.wide)
    all_defects: list[Defect] = refused_defects(refused, str)
    for d in all_defects:  # named, never read: a link out of the evidence tree, a FIFO, a device
        out.begin_file(d.file, "not-read", {"reason": d.reason})
        out.row(rows.defect_row(d))
        out.end_file({"entries": 0, "defects": 1})
    unknown: list[str] = []
    unreadable = 0
    dumped = 0
    total, shown = _bar_wanted(files, opts, quiet)
    with byte_progress(total, "reading", enabled=shown) as advance:
        for path in files:
            try:
                found = dump_file(path, out, opts, diag, advance)
            except UnreadableInputError as err:
                diag.error(str(err))
                all_defects.append(Defect("unreadable", str(path), None, "file", err.reason))
                unreadable += 1
                continue
            if found is None:
                unknown.append(str(path))
                continue
            dumped += 1
            all_defects.extend(found)
    serious = [d for d in all_defects if d.severity != "info"]
    out.finish({"files": dumped, "skipped": len(unknown), "defects": len(serious)})
    if dumped == 0 and unreadable:
        return int(ExitCode.UNREADABLE)  # each unreadable file's error is already said, one line each
    if dumped == 0 and not refused:
        raise UnreadableInputError(", ".join(unknown or paths), "not a Kafka file (its name is no Kafka file kind; "
                                   "--kind KIND reads a file as a kind whatever its name)")
    for name in unknown:
        diag.warning(f"{name}: not a Kafka file kind (by its name); skipped")
    lo, hi = opts.offsets
    if (lo is not None or hi is not None) and opts.seen and not any(shown for _, _, shown in opts.seen):
        held = f"{min(a for a, _, _ in opts.seen)}..{max(b for _, b, _ in opts.seen) - 1}"
        raise UsageError(f"--offsets {'' if lo is None else lo}:{'' if hi is None else hi} matches no batch: "
                         f"the segments hold offsets {held}")
    if fmt is not Format.table:  # a table shows each defect in place: it is not said twice
        for d in serious[:20]:
            diag.warning(d.describe())
        if len(serious) > 20:
            diag.warning(f"... and {len(serious) - 20} more defects")
    return int(ExitCode.DEFECTS if serious else ExitCode.CLEAN)


def run_format_string(paths: list[str], fmt: str, opts: Options) -> int:
    """``--format-string``: each data record of the segments as ``fmt`` says, kcat-style
    (``render.record_format``); defects on stderr. Control records are left out, as a consumer never sees them."""
    from kafkatool.model import Defect, RecordBatch
    from kafkatool.reading.inventory import expand_with_refusals, refused_defects
    from kafkatool.reading.log import open_log
    from kafkatool.render.output import Diagnostics
    from kafkatool.render.record_format import FormatStringError, Where, compile_format
    from kafkatool.render.safe import printable

    try:
        render = compile_format(fmt)
    except FormatStringError as err:
        raise UsageError(str(err)) from None
    diag = Diagnostics()
    files, refused = expand_with_refusals(paths)
    defects: list[Defect] = refused_defects(refused, str)
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    buffer = getattr(sys.stdout, "buffer", None)
    sys.stdout.flush()

    def write(data: bytes) -> None:
        if tty:  # a terminal never gets a control character from the data raw
            sys.stdout.write(printable(data.decode("utf-8", "replace"), keep_newlines=True))
        elif buffer is not None:
            buffer.write(data)
        else:
            sys.stdout.write(data.decode("utf-8", "surrogateescape"))

    lo, hi = opts.offsets
    segments = unreadable = 0
    skipped: list[str] = []
    for path in files:
        if kind_of(path, opts.kind) not in SEGMENT_KINDS:
            skipped.append(str(path))
            continue
        parsed = parse_partition_dir(path.resolve().parent.name)
        where = Where(parsed[0].topic.encode(), parsed[0].partition) if parsed and parsed[0] is not None \
            else Where(b"", -1)
        try:
            with open_log(path, deep=True, max_bytes=opts.max_bytes, label=str(path)) as items:
                segments += 1
                for item in items:
                    if isinstance(item, Defect):
                        defects.append(item)
                        continue
                    if item.records is None or (isinstance(item, RecordBatch) and item.is_control):
                        continue
                    lines = [render(item, r, where) for r in item.records
                             if (lo is None or r.offset >= lo) and (hi is None or r.offset <= hi)]
                    if lines:
                        write(b"".join(lines))
        except UnreadableInputError as err:
            diag.error(str(err))
            defects.append(Defect("unreadable", str(path), None, "file", err.reason))
            unreadable += 1
    sys.stdout.flush()
    if segments == 0:
        if unreadable:
            return int(ExitCode.UNREADABLE)
        raise UnreadableInputError(", ".join(paths), "no log segment to format (--format-string prints the records "
                                   "of .log segments)")
    named = {Path(p) for p in paths}
    for name in skipped:  # only files named on the command line: a directory's other files are not news
        if Path(name) in named:
            diag.warning(f"{name}: not a log segment; --format-string prints records only, skipped")
    serious = [d for d in defects if d.severity != "info"]
    for d in serious[:20]:
        diag.warning(d.describe())
    if len(serious) > 20:
        diag.warning(f"... and {len(serious) - 20} more defects")
    return int(ExitCode.DEFECTS if serious else ExitCode.CLEAN)


def command(
    paths: Annotated[list[str], typer.Argument(help="Files, partition directories or log dirs to decode.",
                                              show_default=False, metavar="PATH")],
    deep: Annotated[bool, typer.Option("--deep", help="Decode every record inside each batch.")] = False,
    print_data: Annotated[bool, typer.Option("--print-data", help="Show record keys and values (implies --deep).")]
    = False,
    key_decoder: Annotated[Decoder, typer.Option("--key-decoder", help="How to show keys with --print-data.")]
    = Decoder.utf8,
    value_decoder: Annotated[Decoder, typer.Option("--value-decoder", help="How to show values with --print-data.")]
    = Decoder.utf8,
    offsets: Annotated[str | None, typer.Option("--offsets", metavar="START:END",
                                                help="Only batches holding offsets in this inclusive range.")]
    = None,
    max_bytes: Annotated[int | None, typer.Option("--max-bytes", min=1, max=INT64_MAX, metavar="N",
                                                  help="Read only the first N bytes of each .log file.")] = None,
    verify: Annotated[bool, typer.Option("--verify", help="Check CRCs, offset order, record counts, indexes "
                                                          "against the log, snapshot CRCs.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Tables with every column, whatever the terminal's "
                                                       "width (by default columns are chosen to fit).")] = False,
    kind: Annotated[ForcedKind | None, typer.Option(
        "--kind", metavar="KIND", help="Read the files as this kind whatever their names (log, index, timeindex, "
                                       "txnindex, snapshot, kraft-snapshot, leader-epoch-checkpoint, ...).")]
    = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="table (terminal), json, jsonl, or kafka "
                                                               "(kafka-dump-log.sh's exact text).")]
    = Format.table,
    verify_index_only: Annotated[bool, typer.Option(
        "--verify-index-only", help="With --format kafka: check index entries against the log, print only "
                                    "problems (DumpLogSegments' option).")] = False,
    index_sanity_check: Annotated[bool, typer.Option(
        "--index-sanity-check", help="With --format kafka: run the broker's start-up index sanity check "
                                     "(DumpLogSegments' option).")] = False,
    max_message_size: Annotated[int, typer.Option(
        "--max-message-size", min=1, max=INT32_MAX, metavar="N",
        help="With --format kafka: slice size when checking an index entry.")]
    = 5 * 1024 * 1024,
    skip_record_metadata: Annotated[bool, typer.Option(
        "--skip-record-metadata", help="With --format kafka: print only keys and payloads of records.")] = False,
    topic_decoder: Annotated[TopicDecoderName, typer.Option(  # type: ignore[valid-type]
        "--decoder", metavar="NAME",
        help="Record format of internal topics: auto (by the partition's topic name), none, or a decoder name "
             "(" + ", ".join(sorted(DECODER_NAMES)) + "). A name implies --print-data.")]
    = "auto",  # type: ignore[assignment]
    kafka_version: Annotated[str, typer.Option(
        "--kafka-version", metavar="VERSION",
        help="With --format kafka: the Kafka release whose DumpLogSegments text is reproduced: 3.9, 4.0, 4.1, 4.2, "
             "4.3 or 4.4; a patch version such as 3.9.2 is accepted.")] = "4.4",
    format_string: Annotated[str | None, typer.Option(
        "--format-string", metavar="FMT",
        help="Print each data record as FMT says, kcat-style (implies --print-data): %t topic, %p partition, "
             "%o offset, %k key, %K key size, %s value, %S value size, %R value size as 4 big-endian bytes, "
             "%T timestamp, %h headers, %P producer id, %E producer epoch, %Q sequence, %% a percent sign; "
             "escapes \\n \\r \\t \\xHH.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
    follow_links: FollowLinks = False,
) -> None:
    """Decode Kafka log segments, indexes, snapshots and checkpoint files, and report damage."""

    def body() -> int:
        choice = str(getattr(topic_decoder, "value", topic_decoder))
        parser = None
        from kafkatool.engine.dls import layout_for

        layout = layout_for(kafka_version)
        if layout is None:
            raise UsageError(f"--kafka-version {kafka_version}: kafkatool reproduces DumpLogSegments of 3.9, 4.0, "
                             "4.1, 4.2, 4.3 and 4.4")
        if fmt is Format.kafka and choice not in ("auto", "none"):
            from kafkatool.engine.dls_decoders import parser_for, parser_names

            parser = parser_for(choice, layout)
            if parser is None:
                raise UsageError(f"--decoder {choice}: DumpLogSegments {layout.name} has no such option; with "
                                 f"--format kafka --kafka-version {kafka_version} use "
                                 + " or ".join(parser_names(layout)))
        if fmt is Format.kafka:
            from kafkatool.render.kafka_text import run_kafka_format
            from kafkatool.render.safe import for_terminal

            shown = print_data or parser is not None  # a decoder option implies --print-data-log in Kafka too
            return run_kafka_format(
                kafka_paths(paths), deep=deep or shown, print_data=shown, verify_index_only=verify_index_only,
                index_sanity_check=index_sanity_check, max_message_size=max_message_size, max_bytes=max_bytes,
                skip_record_metadata=skip_record_metadata, out=for_terminal(sys.stdout), err=sys.stderr, parser=parser,
                layout=layout)
        if verify_index_only or index_sanity_check or skip_record_metadata:
            raise UsageError("--verify-index-only, --index-sanity-check and --skip-record-metadata go with "
                             "--format kafka (use --verify for kafkatool's own checks)")
        shown = print_data or choice not in ("auto", "none")
        if format_string is not None and (fmt is not Format.table or verify or wide or choice not in ("auto", "none")):
            raise UsageError("--format-string prints records its own way: it does not go with --format, "
                                 "--verify, --wide or --decoder")
        if kind is not None and any(input_path(p).is_dir() for p in paths):
            raise UsageError("--kind names the kind of the files given; give files, not directories")
        opts = Options(deep=deep or shown, print_data=shown, key_decoder=key_decoder.value,
                       value_decoder=value_decoder.value, offsets=parse_offsets(offsets), max_bytes=max_bytes,
                       verify=verify, topic_decoder=choice, kind=None if kind is None else FileKind(kind.value),
                       wide=wide)
        if format_string is not None:
            return run_format_string(paths, format_string, opts)
        return run(paths, fmt, opts, quiet=quiet)

    run_guarded(body, follow_links=follow_links)
