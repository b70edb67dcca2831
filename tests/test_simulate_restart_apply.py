"""simulate-restart --apply-to: the directory Kafka would leave, never touching the input; loading it
again is a clean no-op."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import corpus_cases, load_expected, shared_dir

runner = CliRunner()
KEYS = ("log_start_offset", "log_end_offset", "high_watermark", "first_unstable_offset", "last_stable_offset")


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def snapshot_view(producer: dict) -> dict:
    return {k: producer[k] for k in ("producer_id", "producer_epoch", "coordinator_epoch", "last_sequence",
                                     "last_data_offset", "last_timestamp", "current_txn_first_offset")}


def run(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["simulate-restart", "-f", "json", *args])
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}


@pytest.mark.parametrize("case", corpus_cases())
def test_apply_to_then_reload_is_a_clean_no_op(case: str, tmp_path: Path) -> None:
    source = shared_dir("corpus") / case / "input"
    now = str(load_expected(case).get("afterLoad", {}).get("loadTimeMs", 1700003600000))
    before = digest(source)
    out = tmp_path / "recovered"
    _, first = run("--now", now, "--apply-to", str(out), str(source))
    assert digest(source) == before, "the input directory must not change"
    loaded = [p for p in first["partitions"] if p["outcome"] == "loaded"]
    if not loaded:
        pytest.skip("Kafka fails to load every partition of this case")
    code, again = run("--now", now, str(out))
    second = {p["directory"]: p for p in again["partitions"]}
    for p in loaded:
        q = second[p["directory"]]
        assert q["outcome"] == "loaded" and q["bytes_truncated"] == 0 and not q["loss"]["records"]
        assert {k: q[k] for k in KEYS} == {k: p[k] for k in KEYS}
        assert [(s["base_offset"], s["size_bytes"]) for s in q["segments"]] == \
            [(s["base_offset"], s["size_bytes"]) for s in p["segments"]]
        # The reload is an unclean start (Kafka deleted the marker): it may cache more batches per producer,
        # but the producer state a snapshot holds must not change.
        assert [snapshot_view(x) for x in q["producers"]] == [snapshot_view(x) for x in p["producers"]]
        assert q["leader_epochs"] == p["leader_epochs"]
    assert code == 0


def test_apply_to_refuses_the_input_and_non_empty_dirs(corpus_root: Path, tmp_path: Path) -> None:
    source = corpus_root / "idem-torn-write" / "input"
    result = runner.invoke(app, ["simulate-restart", "--apply-to", str(source / "out"), str(source)])
    assert result.exit_code == 2 and "inside the input" in result.stderr
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    result = runner.invoke(app, ["simulate-restart", "--apply-to", str(tmp_path / "busy"), str(source)])
    assert result.exit_code == 2 and "not an empty directory" in result.stderr


def test_apply_to_truncates_the_torn_segment_as_kafka_does(corpus_root: Path, tmp_path: Path) -> None:
    source = corpus_root / "idem-torn-write" / "input"
    after = load_expected("idem-torn-write")["afterLoad"]["partitions"]["payments-0"]
    run("--now", "1700003600000", "--apply-to", str(tmp_path / "out"), str(source))
    for seg in after["segmentComparison"]:
        assert (tmp_path / "out" / "payments-0" / seg["file"]).stat().st_size == seg["sizeAfter"]
    snapshots = sorted(p.name for p in (tmp_path / "out" / "payments-0").glob("*.snapshot"))
    assert snapshots == after["snapshotFilesAfterLoad"]
    assert not (tmp_path / "out" / ".kafka_cleanshutdown").exists()


def test_an_interrupted_earlier_run_is_cleaned_and_named(tmp_path: Path) -> None:
    """A killed --apply-to run leaves ``.<out>.*.partial`` beside OUT_DIR: the next run removes it and says so
    (issue 20, item 10)."""
    demo = Path(__file__).resolve().parents[1] / "fixtures" / "demo"
    out = tmp_path / "recovered"
    stale = tmp_path / ".recovered.abc123.partial"
    (stale / "demo-0").mkdir(parents=True)
    (stale / "demo-0" / "00000000000000000000.log").write_bytes(b"half written")
    result = CliRunner().invoke(app, ["simulate-restart", "--apply-to", str(out), str(demo)])
    assert result.exit_code in (0, 1), result.stderr
    assert not stale.exists()
    assert f"removed {stale}" in result.stderr and "interrupted" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recovered"]


@pytest.mark.parametrize("given", ["log dir", "partition dir"])
def test_apply_to_inside_the_input_is_refused_before_anything_is_read(
        given: str, corpus_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused at once, however big the input (issue 20, item 10): the reader must not even be called. A partition
    directory given alone has its log dir as input too (its checkpoints are read): OUT_DIR beside it is inside."""
    import shutil

    from kafkatool.commands import simulate_restart

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the input was read before --apply-to was refused")

    monkeypatch.setattr(simulate_restart, "read_restart_inputs", never)
    monkeypatch.setattr(simulate_restart, "segment_bytes", never)
    log_dir = tmp_path / "logdir"
    shutil.copytree(corpus_root / "idem-torn-write" / "input", log_dir)
    source = log_dir if given == "log dir" else log_dir / "payments-0"
    for out in (log_dir / "recovered", log_dir / "payments-0" / "recovered"):
        result = runner.invoke(app, ["simulate-restart", "--apply-to", str(out), str(source)])
        assert result.exit_code == 2 and "inside the input" in result.stderr, result.stderr
        assert not out.exists()
