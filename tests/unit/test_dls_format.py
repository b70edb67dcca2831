"""``--format kafka`` against Kafka's own DumpLogSegments output, for every corpus run.

Each row of ``<case>/dump/MANIFEST.tsv`` is one ``kafka-dump-log.sh`` run from inside ``<case>/input``.
The same run through :func:`kafkatool.render.kafka_text.run_kafka_format` must print the same stdout
byte for byte, exit the same way, and print the same stderr lines (Java stack-trace lines excepted).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from kafkatool.engine import dls
from kafkatool.render.kafka_text import run_kafka_format
from kafkatool.storage.java_hash import java_string_hash, string_hash_map_order
from tests.conftest import SHARED, corpus_cases, shared_dir

MODES = {
    "shallow": {},
    "deep": {"deep": True, "print_data": True},
    "plain": {},
    "verify": {"verify_index_only": True},
    "sanity": {"index_sanity_check": True},
}
# The first line of a Java stack trace: a class name, then ": message" or nothing.
TRACE_START = re.compile(r"^[A-Za-z_$][\w$]*(\.[\w$]+)+(: |$)")


def _runs() -> list[pytest.param]:
    params = []
    for case in corpus_cases():
        manifest = SHARED / "corpus" / case / "dump" / "MANIFEST.tsv"
        if not manifest.is_file():
            continue
        rows = manifest.read_text().splitlines()[1:]
        for row in rows:
            partition, file, mode, args, code, *_ = row.split("\t")
            params.append(pytest.param(case, partition, file, mode, args, int(code),
                                        id=f"{case}/{partition}/{file}.{mode}"))
    return params


def universal_newlines(text: str) -> str:
    """The corpus capture read the tool's output with universal newlines: a CR inside a printed value
    (a binary key or payload) is stored as LF. Kafka itself writes the CR; compare after the same change.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def expected_stderr(text: str, code: int) -> list[str]:
    """The stored stderr without the Java stack trace that follows a crash message."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if code == 0:
        return lines
    for i in range(1, len(lines)):
        if TRACE_START.match(lines[i]) or lines[i].startswith("\t"):
            return lines[:i]
    return lines


SUMMARY_HEADS = ("Mismatches in :", "Found timestamp mismatch in :", "Found out of order timestamp in :",
                 "Non-consecutive offsets in ")


def as_released(lines: list[str], cwd: Path, index: bool) -> list[str]:
    """The corpus' stderr as the released tools print it. The corpus transcribed trunk's Java DumpLogSegments
    (see its DUMP-README) with two differences from the release jars, which ``tests/kafka/test_dls_conformance.py``
    runs: the released tools name a file in their end-of-run summaries by its absolute path (the key of their
    maps, ``File.getAbsolutePath``), not as given, and the log of a dumped ``index``/time index likewise in
    exceptions, as the index itself in its sanity check's; and the Java tool (4.3 on) heads the not-found list
    ``... not found in :<file>``."""
    out = []
    for line in lines:
        for head in SUMMARY_HEADS:
            if line.startswith(head) and not line[len(head):].startswith("/"):
                line = head + str(cwd / line[len(head):])
        # an index's log is opened as new File(index.getAbsoluteFile().getParent(), ...): messages name it so
        if index:
            line = re.sub(r"(file=|in file )(?!/)([^ ,]+\.log)", lambda m: m.group(1) + str(cwd / m.group(2)), line)
            # the index's own sanityCheck names it by file().getAbsolutePath()
            line = re.sub(r"^(Corrupt time index found, time index file \(|Time index file |Corrupt index found, "
                          r"index file |Index file )(?!/)([^ )]+index)", lambda m: m.group(1) + str(cwd / m.group(2)),
                          line)
        out.append(line)
    return out


def run(case_input: Path, path: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(case_input)
    out, err = io.StringIO(), io.StringIO()
    options = {"deep": False, "print_data": False, "verify_index_only": False, "index_sanity_check": False,
               "max_message_size": dls.DEFAULT_MAX_MESSAGE_SIZE, "max_bytes": None, "skip_record_metadata": False}
    options.update(MODES[mode])
    code = run_kafka_format([path], out=out, err=err, **options)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.corpus
@pytest.mark.parametrize(("case", "partition", "file", "mode", "args", "code"), _runs())
def test_matches_dump_log_segments(case: str, partition: str, file: str, mode: str, args: str, code: int,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = shared_dir("corpus") / case
    assert args.endswith(f"--files {partition}/{file}")
    got_code, got_out, got_err = run(root / "input", f"{partition}/{file}", mode, monkeypatch)
    dump = root / "dump" / partition
    want_out = (dump / f"{file}.{mode}.txt").read_bytes()
    assert universal_newlines(got_out).encode("utf-8") == want_out
    stderr_file = dump / f"{file}.{mode}.stderr.txt"
    want_err = as_released(expected_stderr(stderr_file.read_text(encoding="utf-8") if stderr_file.exists() else "",
                                           code), root / "input", file.endswith(("index", "timeindex")))
    got = got_err.split("\n")[:-1]
    assert [line for line in got if not line.startswith("The following indexed offsets are not found in :")] == \
        [line for line in want_err if line != "The following indexed offsets are not found in the log."]
    assert sum(line.startswith("The following indexed offsets are not found in :") for line in got) == \
        want_err.count("The following indexed offsets are not found in the log.")
    assert got_code == code


def test_corpus_has_dumps() -> None:
    cases = [c for c in corpus_cases() if (shared_dir("corpus") / c / "dump" / "MANIFEST.tsv").is_file()]
    assert cases, "no corpus case has a dump/MANIFEST.tsv"


def test_java_utf8_matches_the_jdk_on_malformed_input() -> None:
    assert dls.java_utf8(b"ok") == "ok"
    assert dls.java_utf8(b"\xed\xa0\x80x") == "\ufffdx"  # an encoded surrogate: one replacement
    assert dls.java_utf8(b"a\xe1\x80") == "a\ufffd"  # truncated at the end: one replacement
    assert dls.java_utf8(b"\xed\xa0") == "\ufffd"
    assert dls.java_utf8(b"\xe1\x80A") == "\ufffdA"
    assert dls.java_utf8(b"\xf0\x80\x80\x80") == "\ufffd" * 4
    assert dls.java_utf8(b"\xc0\xaf") == "\ufffd\ufffd"
    assert dls.java_utf8(b"\xf0\x9f\x98\x80") == "\U0001f600"


def test_hashmap_order_is_javas() -> None:
    # "Aa" and "BB" collide in Java (same hashCode): a bucket keeps insertion order.
    assert java_string_hash("Aa") == java_string_hash("BB")
    assert string_hash_map_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert java_string_hash("hello") == 99162322


def test_summaries_follow_execute() -> None:
    session = dls.DlsSession()
    session.record_index_mismatch("p/1.index", None, 5, 4)
    session.record_index_mismatch("p/1.index", None, 9, 8)
    session.record_gap("p/2.log", None, -1, 7)
    assert session.summary_lines() == [
        "Mismatches in :p/1.index", "  Index offset: 9, log offset: 8", "  Index offset: 5, log offset: 4",
        "Non-consecutive offsets in p/2.log", "  -1 is followed by 7"]


def test_lazy_record_failure_prints_the_records_before_it() -> None:
    from kafkatool.model import Record
    from kafkatool.schema import record_batch as rb

    records = [Record(offset=i, timestamp=0, key=b"k%d" % i, value=b"v", offset_delta=i, timestamp_delta=i)
               for i in range(3)]
    data = bytearray(rb.build_records_batch(records, base_offset=10, base_timestamp=1000))
    data[8:12] = (len(data) - 12 + 3).to_bytes(4, "big")  # three stray bytes after the last record
    dump = dls.dump_log(dls.DlsSession(), "p/00000000000000000010.log", bytes(data) + bytes(3), deep=True)
    assert [line[:12] for line in dump.lines[2:]] == ["| offset: 10", "| offset: 11"]
    assert dump.crash == "Incorrect declared batch size, records still remaining in file"


def test_streamed_lines_are_not_kept_and_match_the_collected_dump() -> None:
    """With ``emit`` (what ``--format kafka`` passes), every complete line is handed over as it is made and none
    is kept: a segment of millions of one-record batches must not be held in memory. The text is the same."""
    from kafkatool.model import Record
    from kafkatool.schema import record_batch as rb

    data = b"".join(rb.build_records_batch([Record(offset=i, timestamp=0, key=None, value=b"v")], base_offset=i,
                                           base_timestamp=1000 + i) for i in range(50))
    path = "p/00000000000000000000.log"
    kept = dls.dump_log(dls.DlsSession(), path, data + bytes(7), deep=True, print_data=True)
    streamed: list[str] = []
    dump = dls.dump_log(dls.DlsSession(), path, data + bytes(7), deep=True, print_data=True, emit=streamed.append)
    assert len(kept.lines) == 1 + 50 * 2 + 1  # header, batch and record lines, the trailing-bytes line
    assert dump.lines == [] and dump.crash == kept.crash
    assert "".join(streamed) + dump.text() == kept.text()


def test_zero_tail_crashes_like_file_log_input_stream() -> None:
    dump = dls.dump_log(dls.DlsSession(), "p/00000000000000000000.log", bytes(40))
    assert dump.lines == ["Log starting offset: 0"]
    assert dump.crash == ("Found record size 0 smaller than minimum record overhead (14) in file "
                          "p/00000000000000000000.log.")


def test_snapshot_corruption_messages() -> None:
    import struct

    import crc32c

    body = struct.pack(">i", 0)
    good = struct.pack(">hI", 1, crc32c.crc32c(body)) + body
    assert dls.snapshot_corruption(good) is None
    assert dls.snapshot_corruption(b"\x00") == "Snapshot failed schema validation: null"
    assert dls.snapshot_corruption(struct.pack(">h", 7) + good[2:]) == (
        "Snapshot failed schema validation: Snapshot contained an unknown file version 7")
    bad = struct.pack(">hI", 1, 5) + body
    assert dls.snapshot_corruption(bad) == (
        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: 5. Computed crc: {crc32c.crc32c(body)}")


def test_index_lookup_and_missing_batch() -> None:
    index = dls.IndexSlots(100, 24, [(100, 0), (110, 50), (120, 90)])
    assert dls.index_lookup(index, 99) == (100, 0)
    assert dls.index_lookup(index, 115) == (110, 50)
    assert dls.index_lookup(index, 500) == (120, 90)
    # An entry whose position holds no whole batch: iterator().next() throws with a null message.
    dump = dls.dump_index(dls.DlsSession(), "p/00000000000000000100.index",
                          dls.IndexSlots(100, 8, [(105, 0)]), bytes(10))
    assert dump.crash == "null"
