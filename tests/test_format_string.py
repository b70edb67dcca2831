"""``dump-segment --format-string``: kcat's format tokens, each with kcat's meaning (kcat's ``-f`` help and
``fmt_msg_output_str``), kafkatool's producer tokens, kcat's escapes, and terminal safety."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.model import Header, Record
from kafkatool.render.record_format import FormatStringError, parse, unescape
from kafkatool.schema import legacy
from kafkatool.schema import record_batch as rb
from tests.pty_support import drain

T0 = 1_700_000_000_000


def _segment(tmp_path: Path) -> Path:
    """orders-3: an idempotent batch (headers, a null key, a tombstone), a COMMIT marker, a LogAppendTime batch,
    a magic 0 and a magic 1 message."""
    data = rb.build_records_batch([
        Record(offset=0, timestamp=0, key=b"k1", value=b"v1", headers=(Header(b"h1", b"a"), Header(b"h2", None),
                                                                       Header(b"h3", b""))),
        Record(offset=1, timestamp=0, key=None, value=b"\x1b]0;pwned\x07red", offset_delta=1, timestamp_delta=7),
        Record(offset=2, timestamp=0, key=b"", value=None, offset_delta=2, timestamp_delta=9),
    ], base_offset=0, base_timestamp=T0, producer_id=77, producer_epoch=5, base_sequence=10)
    data += rb.build_records_batch([
        Record(offset=3, timestamp=0, key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x05")],
        base_offset=3, base_timestamp=T0 + 20, attributes=0x30, producer_id=77, producer_epoch=5)
    data += rb.build_records_batch([Record(offset=4, timestamp=0, key=b"late", value=b"x" * 300)],
                                   base_offset=4, base_timestamp=5, attributes=0x08, max_timestamp=T0 + 9999)
    data += legacy.build_entry(5, legacy.build_message(magic=0, attributes=0, key=b"m0", value=b"zero"))
    data += legacy.build_entry(6, legacy.build_message(magic=1, attributes=0, key=None, value=b"one",
                                                       timestamp=1234))
    part = tmp_path / "orders-3"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(data)
    return part


def _dump(*args: str, tty: bool = False) -> tuple[int, bytes, str]:
    cmd = [sys.executable, "-m", "kafkatool", "dump-segment", *args]
    if not tty:
        done = subprocess.run(cmd, capture_output=True, timeout=60, check=False)
        return done.returncode, done.stdout, done.stderr.decode()
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=follower, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(follower)
    out = drain(leader)
    code = proc.wait(timeout=60)
    assert proc.stderr is not None
    return code, out.replace(b"\r\n", b"\n"), proc.stderr.read().decode()


def _lines(part: Path, fmt: str) -> list[bytes]:
    code, out, err = _dump("--format-string", fmt + "\\n", str(part))
    assert code == 0, err
    return out.split(b"\n")[:-1]


@pytest.fixture(scope="module")
def part(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _segment(tmp_path_factory.mktemp("fmt"))


def test_topic_partition_offset(part: Path) -> None:
    # The COMMIT marker at offset 3 is no record a consumer sees: kcat never prints it.
    assert _lines(part, "%t [%p] @%o") == [f"orders [3] @{o}".encode() for o in (0, 1, 2, 4, 5, 6)]


def test_key_and_key_size(part: Path) -> None:
    # kcat: the key's bytes (nothing for a null or empty key); %K its length, -1 for null.
    assert _lines(part, "%k|%K") == [b"k1|2", b"|-1", b"|0", b"late|4", b"m0|2", b"|-1"]


def test_value_and_value_sizes(part: Path) -> None:
    assert _lines(part, "%S") == [b"2", b"13", b"-1", b"300", b"4", b"3"]
    code, out, _ = _dump("--format-string", "%s|", str(part))
    assert code == 0
    assert out == b"v1|\x1b]0;pwned\x07red||" + b"x" * 300 + b"|zero|one|"  # raw bytes through a pipe, as kcat
    code, out, _ = _dump("--format-string", "%R", str(part))
    assert out == struct.pack(">6i", 2, 13, -1, 300, 4, 3)  # big-endian int32, -1 for a null value


def test_timestamp(part: Path) -> None:
    # CreateTime: the record's own; LogAppendTime: the batch's (what a consumer is handed); magic 0: none, -1.
    assert _lines(part, "%T") == [str(t).encode() for t in (T0, T0 + 7, T0 + 9, T0 + 9999, -1, 1234)]


def test_headers(part: Path) -> None:
    # kcat's print_headers: name=value joined by commas, NULL for a null value, nothing for an empty one.
    assert _lines(part, "%h")[0] == b"h1=a,h2=NULL,h3="
    assert _lines(part, "%h")[1:] == [b""] * 5


def test_producer_tokens(part: Path) -> None:
    assert _lines(part, "%P %E %Q") == [b"77 5 10", b"77 5 11", b"77 5 12", b"-1 -1 -1", b"-1 -1 -1",
                                        b"-1 -1 -1"]


def test_literal_text_and_percent(part: Path) -> None:
    assert _lines(part, "100%% of %o")[:2] == [b"100% of 0", b"100% of 1"]


def test_escapes_as_kcat_reads_them() -> None:
    assert unescape(rb"a\tb\rc\nd") == b"a\tb\rc\nd"
    assert unescape(rb"\x41\x7e") == b"A~"  # hex after \x
    assert unescape(rb"\65\0101\0x42") == b"AAB"  # strtoul base 0: decimal, octal, hex
    assert unescape(rb"\q\\") == b"q\\"  # any other character stands for itself
    assert unescape(rb"\xff") == b"ff"  # kcat reads digits only when a decimal digit follows the x
    assert unescape(b"end\\") == b"end\\"


def test_parse_refuses_what_kcat_refuses() -> None:
    assert parse("%t:%%%o") == ["t", b":", b"%", "o"]
    with pytest.raises(FormatStringError, match="unsupported formatter %z"):
        parse("%z")
    with pytest.raises(FormatStringError, match="lone %"):
        parse("offset %o %")


def test_bad_format_is_exit_2_naming_the_token(part: Path) -> None:
    code, out, err = _dump("--format-string", "%o %y", str(part))
    assert code == 2 and out == b"" and "%y" in err
    code, _, err = _dump("--format-string", "%o", "-f", "json", str(part))
    assert code == 2 and "--format-string" in err


def test_terminal_gets_no_control_character(part: Path) -> None:
    code, out, _ = _dump("--format-string", "%o %s\\n", str(part), tty=True)
    assert code == 0
    assert b"\x1b" not in out and b"\x07" not in out
    assert b"1 \\x1b]0;pwned\\x07red\n" in out


def test_defects_go_to_stderr_and_exit_1(part: Path, tmp_path: Path) -> None:
    torn = tmp_path / "orders-3"
    torn.mkdir()
    data = (part / "00000000000000000000.log").read_bytes()
    (torn / "00000000000000000000.log").write_bytes(data[:-5])
    code, out, err = _dump("--format-string", "%o\\n", str(torn / "00000000000000000000.log"))
    assert code == 1
    assert out.split(b"\n")[:5] == [b"0", b"1", b"2", b"4", b"5"]
    assert "kafkatool: warning:" in err
