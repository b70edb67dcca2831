"""dump-segment end to end, as a user runs it: help, man page, formats, errors and exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import REPO, shared_dir

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _command_names() -> list[str]:
    """Every registered subcommand (groups included), so a new command cannot ship without a man page."""
    import typer.main

    return sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", _command_names())
def test_help_lists_every_option_and_the_man_page_documents_them(name: str) -> None:
    import typer.core
    import typer.main

    command = typer.main.get_command(app)
    sub = command.commands[name]  # type: ignore[attr-defined]
    man = (REPO / "man" / f"kafkatool-{name}.1").read_text()
    man_plain = man.replace("\\-", "-")
    # A group (e.g. ``fixture``) is documented in one page; its subcommands' options are checked against it.
    leaves = [([name], sub)] if not hasattr(sub, "commands") else [
        ([name, child], cmd) for child, cmd in sub.commands.items()]
    helps = ""
    for argv, leaf in leaves:
        code, out, _ = run(*argv, "--help")
        assert code == 0
        helps += out
        for param in leaf.params:
            if isinstance(param, typer.core.TyperOption):
                for opt in param.opts:
                    assert opt in man_plain, f"{opt} missing from man/kafkatool-{name}.1"
                    assert opt in out, f"{opt} missing from {' '.join(argv)} --help"
    documented = set(re.findall(r"^\.(?:TP\n)?\.B[IR]? (\\-\\-[a-z-]+)", man, flags=re.M))
    for opt in documented:
        assert opt.replace("\\-", "-") in helps


def test_man_pages_render() -> None:
    if not shutil.which("man"):
        pytest.skip("man not installed")
    for page in ["kafkatool.1", *(f"kafkatool-{name}.1" for name in _command_names())]:
        proc = subprocess.run(["man", "-l", str(REPO / "man" / page)], capture_output=True, text=True,
                              env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"}, check=False)
        assert proc.returncode == 0, proc.stderr
        assert "SYNOPSIS" in proc.stdout


def test_missing_path_exits_3() -> None:
    code, out, err = run("dump-segment", "/nonexistent/00000000000000000000.log")
    assert code == 3
    assert out == ""
    assert "no such file" in err and len(err.strip().splitlines()) == 1


def test_directory_without_kafka_files_exits_3(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    code, _, err = run("dump-segment", str(tmp_path))
    assert code == 3
    assert "no Kafka" in err


def test_non_kafka_file_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "passwd"
    path.write_text("root:x:0:0:root:/root:/bin/bash\n")
    code, _, err = run("dump-segment", str(path))
    assert code == 3
    assert "not a Kafka file" in err


def test_file_of_zeros_is_a_defect(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"\0" * 4096)
    code, out, err = run("dump-segment", "-f", "json", str(path))
    assert code == 1
    doc = json.loads(out)
    [defect] = doc["files"][0]["defects"]
    assert defect["code"] == "trailing-zeros" and defect["position"] == 0
    assert "4096 zero bytes" in err


def test_truncated_file_reports_torn_tail(corpus_root: Path, tmp_path: Path) -> None:
    src = corpus_root / "plain-none-clean" / "input" / "orders-0" / "00000000000000000000.log"
    data = src.read_bytes()
    path = tmp_path / src.name
    path.write_bytes(data[:len(data) - 100])
    code, out, _ = run("dump-segment", "-f", "jsonl", str(path))
    assert code == 1
    lines = [json.loads(x) for x in out.splitlines()]
    defects = [x for x in lines if x["type"] == "defect"]
    assert [d["code"] for d in defects] == ["torn-tail"]
    batches = [x for x in lines if x["type"] == "batch"]
    assert defects[0]["position"] == batches[-1]["position"] + batches[-1]["size"]


def test_corruption_in_the_middle_resyncs(corpus_root: Path, tmp_path: Path) -> None:
    src = corpus_root / "plain-none-clean" / "input" / "orders-0" / "00000000000000000000.log"
    data = bytearray(src.read_bytes())
    clean = [json.loads(x) for x in run("dump-segment", "-f", "jsonl", str(src))[1].splitlines()]
    batches = [x for x in clean if x["type"] == "batch"]
    victim = batches[10]
    data[victim["position"] + 8:victim["position"] + 12] = b"\0\0\0\0"  # length field zeroed
    path = tmp_path / src.name
    path.write_bytes(bytes(data))
    code, out, _ = run("dump-segment", "-f", "jsonl", str(path))
    assert code == 1
    lines = [json.loads(x) for x in out.splitlines()]
    got = [x["base_offset"] for x in lines if x["type"] == "batch"]
    want = [b["base_offset"] for b in batches]
    assert got == want[:10] + want[11:], "every batch after the damaged one is still read"
    codes = [x["code"] for x in lines if x["type"] == "defect"]
    assert codes == ["corrupt-entry", "unreadable-bytes"]


def test_crc_flip_is_reported_and_reading_goes_on(corpus_root: Path, tmp_path: Path) -> None:
    src = corpus_root / "plain-none-clean" / "input" / "orders-0" / "00000000000000000000.log"
    data = bytearray(src.read_bytes())
    data[200] ^= 0xFF
    path = tmp_path / src.name
    path.write_bytes(bytes(data))
    code, out, _ = run("dump-segment", "-f", "json", "--verify", str(path))
    assert code == 1
    doc = json.loads(out)
    entry = doc["files"][0]
    assert [d["code"] for d in entry["defects"]] == ["crc-mismatch"]
    assert len(entry["items"]) == 48


def test_json_uses_null_for_sentinels(corpus_root: Path) -> None:
    src = corpus_root / "plain-none-clean" / "input" / "orders-0" / "00000000000000000000.log"
    code, out, _ = run("dump-segment", "-f", "json", "--deep", str(src))
    assert code == 0
    batch = json.loads(out)["files"][0]["items"][0]
    assert batch["producer_id"] is None and batch["base_sequence"] is None
    assert batch["records"][0]["sequence"] is None
    assert all(k == k.lower() for k in batch)


def test_print_data_and_offsets(corpus_root: Path) -> None:
    src = corpus_root / "idem-clean" / "input" / "payments-0" / "00000000000000000128.log"
    code, out, _ = run("dump-segment", "-f", "jsonl", "--print-data", "--offsets", "129:130", str(src))
    assert code == 0
    batches = [json.loads(x) for x in out.splitlines() if '"type":"batch"' in x]
    records = [r for b in batches for r in b["records"]]
    assert [r["offset"] for r in records] == [129, 130]
    # The value DumpLogSegments printed for offset 129 (deep dump of the same file).
    dump = (corpus_root / "idem-clean" / "dump" / "payments-0" / "00000000000000000128.log.deep.txt").read_text()
    line = next(x for x in dump.splitlines() if x.startswith("| offset: 129 "))
    assert line.endswith("payload: " + records[0]["value"])
    assert records[0]["key"] == "key-32"


def test_partition_dir_and_table_format(corpus_root: Path) -> None:
    code, out, _ = run("dump-segment", str(corpus_root / "idem-clean" / "input" / "payments-0"))
    assert code == 0
    assert "00000000000000000128.snapshot" in out and "leader-epoch-checkpoint" in out


def test_module_entry_point_never_prints_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.index"
    path.write_bytes(b"\x01\x02\x03")
    proc = subprocess.run([sys.executable, "-m", "kafkatool", "dump-segment", str(path)], capture_output=True,
                          text=True, check=False)
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (1, 3)


def test_shared_is_there_for_cli_tests() -> None:
    shared_dir("corpus")


def test_kafka_format_expands_a_partition_dir(corpus_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = corpus_root / "idem-clean"
    monkeypatch.chdir(case / "input")
    code, out, _ = run("dump-segment", "-f", "kafka", "payments-0")
    assert code == 0
    first = "payments-0/00000000000000000000"
    expected = "".join((case / "dump" / f"{first}{suffix}.{mode}.txt").read_text()
                       for suffix, mode in ((".log", "shallow"), (".index", "plain"), (".timeindex", "plain")))
    assert out.startswith(expected)


def test_offsets_that_match_nothing_say_so() -> None:
    """Issue 20: a filter that matches nothing exits 2 naming the offsets the segments hold."""
    from pathlib import Path

    part = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "demo-0"
    result = runner.invoke(app, ["dump-segment", "-f", "json", "--offsets", "100000:200000", str(part)])
    assert result.exit_code == 2
    assert "matches no batch" in result.stderr and "hold offsets 0.." in result.stderr
    assert runner.invoke(app, ["dump-segment", "--offsets", "3:4", str(part)]).exit_code == 0


def test_kind_reads_a_misnamed_file(tmp_path) -> None:
    """Issue 20: --kind forces the file kind of files whose names are not Kafka's."""
    import shutil
    from pathlib import Path

    part = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "demo-0"
    seg, idx = tmp_path / "attachment.bin", tmp_path / "idx.bin"
    shutil.copyfile(part / "00000000000000000000.log", seg)
    shutil.copyfile(part / "00000000000000000000.index", idx)
    refused = runner.invoke(app, ["dump-segment", str(seg)])
    assert refused.exit_code == 3 and "--kind" in refused.stderr
    want = json.loads(runner.invoke(app, ["dump-segment", "-f", "json", str(part / "00000000000000000000.log")])
                      .stdout)["files"][0]["items"]
    got = json.loads(runner.invoke(app, ["dump-segment", "-f", "json", "--kind", "log", str(seg)]).stdout)
    assert got["files"][0]["kind"] == "log" and got["files"][0]["items"] == want
    index = json.loads(runner.invoke(app, ["dump-segment", "-f", "json", "--kind", "index", str(idx)]).stdout)
    assert index["files"][0]["kind"] == "index" and index["files"][0]["items"]
    assert runner.invoke(app, ["dump-segment", "--kind", "log", str(part)]).exit_code == 2
