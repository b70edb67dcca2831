"""Real Kafka 4.4 data, without a broker (issue 22 item 5): the ``fixtures/kafka-4x/`` cases ``share-*``,
``streams-*`` and ``voters-*`` that ``tests/kafka/live4x.py`` saved from a live 4.4 broker, with what Kafka itself
printed (DumpLogSegments with the topic's decoder) and said (the admin client's describe of the groups and of the
KRaft quorum, in ``expected.json``).

For each case kafkatool must: decode every record of every file (``dump-segment --print-data -f json``) with no
unknown record type and no defect; print DumpLogSegments 4.4's text byte for byte (``-f kafka --kafka-version
4.4`` with the matching ``--decoder``: group-coordinator, share-group-state, cluster-metadata; data topics with
``--print-data``); replay the groups to the admin client's facts (``groups -f json``); load each metadata log
with no defect (``metadata -f json``); and show the KRaft voter changes and ``quorum-state`` the admin client
described. No check is an xfail: every decoder these cases need exists (issue 22 item 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import REPO

CORPUS = REPO / "fixtures" / "kafka-4x"
#: This module's cases (the others in fixtures/kafka-4x belong to other modules).
PREFIXES = ("share-", "streams-", "voters-")
CASES = sorted(p for p in CORPUS.glob("*") if p.is_dir() and p.name.startswith(PREFIXES)) if CORPUS.is_dir() else []
#: DumpLogSegments' decoder (as saved in expected.json) -> kafkatool's dump-segment flags.
KAFKATOOL_FLAGS = {
    "offsets-decoder": ("--decoder", "group-coordinator"),
    "transaction-log-decoder": ("--decoder", "transaction-log"),
    "cluster-metadata-decoder": ("--decoder", "cluster-metadata"),
    "share-group-state-decoder": ("--decoder", "share-group-state"),
    "print-data": ("--print-data", "--decoder", "none"),
}
INTERNAL = ("__consumer_offsets-", "__share_group_state-", "__transaction_state-")
runner = CliRunner()


def expected(case: Path) -> dict[str, Any]:
    """The case's ``expected.json``."""
    return json.loads((case / "expected.json").read_text())


def log_dirs(case: Path) -> list[Path]:
    """The case's log dirs: ``data/`` and any other node's ``data-<name>/``."""
    return sorted(p for p in case.glob("data*") if p.is_dir())


def run(*args: str) -> Any:
    """Run kafkatool; its JSON output."""
    res = runner.invoke(app, list(args))
    assert res.exit_code in (0, 1), f"kafkatool {' '.join(args)} exited {res.exit_code}: {res.stderr[-2000:]}"
    return json.loads(res.stdout)


def test_the_corpus_holds_each_kind_and_each_case_is_small() -> None:
    if not CASES:
        pytest.skip("no kafka-4x share/streams/voters case saved (python -m tests.kafka.live4x)")
    assert {c.name.split("-")[0] for c in CASES} == {"share", "streams", "voters"}
    for case in CASES:
        size = sum(f.stat().st_size for f in case.rglob("*") if f.is_file())
        assert size < 200_000, f"{case.name} is {size} bytes"
        assert expected(case)["kafkaVersion"] == "4.4.0"


# --- every record decodes ---------------------------------------------------------------------------------------

PARTITIONS = [(case, part) for case in CASES for d in log_dirs(case) for part in sorted(d.iterdir()) if part.is_dir()]


def decoded_kinds(doc: dict[str, Any]) -> set[str]:
    """The record types (``decoded.kind``) a dump's JSON names."""
    return {rec["decoded"]["kind"] for f in doc["files"] for item in f.get("items") or ()
            for rec in item.get("records") or () if (rec.get("decoded") or {}).get("kind")}


def record_problems(doc: dict[str, Any], internal: bool) -> list[str]:
    """File defects, record defects and (in an internal topic) records of no known type in a dump's JSON."""
    out = []
    for f in doc["files"]:
        out += [f"{Path(f['path']).name}: {d}" for d in f.get("defects") or ()]
        for item in f.get("items") or ():
            for rec in item.get("records") or ():
                dec = rec.get("decoded")
                where = f"{Path(f['path']).name}@{rec.get('offset')}"
                if dec is None:
                    if internal and not item.get("is_control"):
                        out.append(f"{where}: not decoded")
                    continue
                out += [f"{where}: {d}" for d in dec.get("defects") or ()]
                if internal and dec.get("kind") is None:
                    out.append(f"{where}: no record type")
    return out


def check_partition(case: Path, part: Path) -> None:
    """Every record of the partition's files decodes with no defect; an internal topic's records each have a
    type, and the case's own record families are there."""
    doc = run("dump-segment", "--print-data", "-f", "json", str(part))
    problems = record_problems(doc, part.name.startswith(INTERNAL))
    assert not problems, problems[:10]
    if part.name.startswith(INTERNAL):
        kinds = decoded_kinds(doc)
        assert kinds, "no record decoded"
        if part.name.startswith("__share_group_state-"):
            assert len(kinds) == 2, kinds  # ShareSnapshot and ShareUpdate
        elif case.name.startswith("share-"):
            assert any("share" in k.lower() for k in kinds), kinds
        elif case.name.startswith("streams-"):
            assert any("streams" in k.lower() for k in kinds), kinds


@pytest.mark.parametrize(("case", "part"), PARTITIONS,
                         ids=[f"{c.name}:{p.parent.name}/{p.name}" for c, p in PARTITIONS])
def test_every_record_decodes_without_defect(case: Path, part: Path) -> None:
    check_partition(case, part)


# --- DumpLogSegments' text --------------------------------------------------------------------------------------

DUMPS = [(case, d) for case in CASES for d in expected(case)["dumps"]]


def decoder_names() -> set[str]:
    """The decoder names ``dump-segment --decoder`` accepts."""
    from kafkatool.schema import topic_records

    return set(topic_records.decoders())


def check_dump(case: Path, dump: dict[str, Any]) -> None:
    """``dump-segment -f kafka --kafka-version V`` (the release that wrote the case) with the matching decoder
    prints that release's DumpLogSegments text."""
    flags = KAFKATOOL_FLAGS[dump["mode"]]
    assert flags[-1] in decoder_names() | {"none"}, f"dump-segment has no --decoder {flags[-1]}"
    release = ".".join(expected(case).get("kafkaVersion", "4.4.0").split(".")[:2])
    res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", release, *flags,
                              str(case / dump["file"])])
    assert res.exit_code == 0, res.stderr
    ours = res.stdout.split("\n", 1)[1] if res.stdout.startswith("Dumping ") else res.stdout
    theirs = (case / dump["dump"]).read_text()
    if ours != theirs:
        a_lines, b_lines = [*ours.splitlines(), ""], [*theirs.splitlines(), ""]
        first = next(i for i, (a, b) in enumerate(zip(a_lines, b_lines, strict=False)) if a != b)
        pytest.fail(f"{dump['file']} line {first + 1} differs:\nkafkatool: {a_lines[first][:400]}\n"
                    f"kafka:     {b_lines[first][:400]}")


@pytest.mark.parametrize(("case", "dump"), DUMPS, ids=[f"{c.name}:{d['file']}:{d['mode']}" for c, d in DUMPS])
def test_kafkatool_prints_what_dumplogsegments_printed(case: Path, dump: dict[str, Any]) -> None:
    check_dump(case, dump)


# --- groups: the admin client's facts -----------------------------------------------------------------------------

GROUP_CASES = [c for c in CASES if "groups" in expected(c).get("admin", {})]


def admin_groups(case: Path) -> dict[str, dict[str, Any]]:
    """The admin client's groups of a case by id (internal streams/share helpers left out: none are expected)."""
    return {g["group_id"]: g for g in expected(case)["admin"]["groups"]}


def check_groups(case: Path) -> None:
    """``groups -f json``: each group the admin client listed, with its type, epochs, members, committed (streams)
    or start (share) offsets and lag."""
    doc = run("groups", "-f", "json", str(case / "data"))
    ours = {g["group"]: g for g in doc["groups"]}
    for gid, admin in admin_groups(case).items():
        kind = admin["type"].lower()
        group = ours.get(gid)
        assert group is not None and group.get("protocol") == kind, f"group {gid}: kafkatool {group}, admin {admin}"
        assert group["generation"] == admin.get("group_epoch", group["generation"]), gid
        for ours_key, admin_key in (("assignment_epoch", "target_assignment_epoch"),
                                    ("topology_epoch", "topology_epoch")):
            if admin_key in admin and group.get(ours_key) is not None:
                assert group[ours_key] == admin[admin_key], (gid, ours_key)
        assert len(group["members"]) == len(admin.get("members", group["members"])), gid
        committed = {f"{o['topic']}-{o['partition']}": o.get("start_offset", o["committed_offset"])
                     for o in doc["offsets"] if o["group"] == gid}
        want = {tp: (v["start_offset"] if isinstance(v, dict) else v) for tp, v in admin["offsets"].items()}
        assert committed == want, gid
        lags = {tp: v["lag"] for tp, v in admin["offsets"].items() if isinstance(v, dict) and v.get("lag") is not None}
        ours_lag = {f"{o['topic']}-{o['partition']}": o.get("lag") for o in doc["offsets"] if o["group"] == gid}
        assert {tp: ours_lag.get(tp) for tp in lags} == lags, gid


@pytest.mark.parametrize("case", GROUP_CASES, ids=[c.name for c in GROUP_CASES])
def test_groups_equal_the_admin_clients(case: Path) -> None:
    check_groups(case)


# --- the metadata log and the quorum --------------------------------------------------------------------------------

METADATA = [(case, d) for case in CASES for d in log_dirs(case) if (d / "__cluster_metadata-0").is_dir()]


def check_metadata(case: Path, log_dir: Path) -> None:
    """``metadata -f json`` loads the metadata log with no defect, with the feature levels the case needs."""
    doc = run("metadata", "-f", "json", str(log_dir))
    assert doc["defects"] == [], doc["defects"][:5]
    levels = doc["image"]["features"]["finalized_levels"] if doc.get("image") else {}
    if case.name.startswith("share-"):
        assert levels.get("share.version", 0) >= 1, levels
    if case.name.startswith("streams-"):
        assert levels.get("streams.version", 0) >= 1, levels


@pytest.mark.parametrize(("case", "log_dir"), METADATA, ids=[f"{c.name}:{d.name}" for c, d in METADATA])
def test_metadata_loads_without_defect(case: Path, log_dir: Path) -> None:
    check_metadata(case, log_dir)


VOTERS = [c for c in CASES if "quorum" in expected(c)]


def control_records(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """Every KRaft control record of one ``.log`` or ``.checkpoint`` as dump-segment's JSON shows it: (offset,
    message class, fields)."""
    doc = run("dump-segment", "--print-data", "-f", "json", str(path))
    out = []
    for f in doc["files"]:
        for item in f.get("items") or ():
            for rec in item.get("records") or ():
                message = (rec.get("control") or {}).get("message") or {}
                if message.get("class"):
                    out.append((rec["offset"], message["class"], message["fields"]))
    return out


def voters(fields: dict[str, Any]) -> list[tuple[int, str]]:
    """A VotersRecord's (voter id, directory id) pairs."""
    return sorted((v["voterId"], v["voterDirectoryId"]) for v in fields["voters"])


def admin_voters(quorum: dict[str, Any]) -> list[tuple[int, str]]:
    """DescribeMetadataQuorum's voters as (replica id, directory id) pairs."""
    return sorted((v["replica_id"], v["directory_id"]) for v in quorum["voters"])


def check_voters(case: Path) -> None:
    """Each node's log: its VotersRecords are the voter sets the admin client saw, in order (standalone, added,
    removed), and its KRaftVersionRecord says kraft.version 1 (a dynamic quorum); each snapshot starts with the
    voter set in effect at its offset; quorum-state (data version 1) names the admin client's leader and epoch."""
    quorum = expected(case)["quorum"]
    for log_dir in log_dirs(case):
        meta = log_dir / "__cluster_metadata-0"
        (log,) = meta.glob("*.log")
        records = control_records(log)
        changes = [(off, voters(f)) for off, cls, f in records if cls == "VotersRecord"]
        want = [admin_voters(quorum[k]) for k in ("before", "after_add", "after_remove")]
        assert [v for _, v in changes] == want, log_dir.name
        assert changes[-1][1] == admin_voters(quorum["final"])
        assert [f["kRaftVersion"] for _, cls, f in records if cls == "KRaftVersionRecord"] == [1], log_dir.name
        for snap in sorted(meta.glob("*.checkpoint")):
            end = int(snap.name.split("-")[0])
            if end == 0:  # the bootstrap snapshot of the format: --standalone writes node 1 as the only voter,
                in_effect = [changes[0][1]] if log_dir.name == "data" else []  # --no-initial-controllers none
            else:
                in_effect = [[v for off, v in changes if off < end][-1]]
            snap_records = control_records(snap)
            got = [voters(f) for _, cls, f in snap_records if cls == "VotersRecord"]
            assert got == in_effect, f"{log_dir.name}/{snap.name}"
            assert [f["kRaftVersion"] for _, cls, f in snap_records if cls == "KRaftVersionRecord"] == [1]
        state = run("metadata", "-f", "json", str(log_dir))["quorum_state"]
        written = json.loads((meta / "quorum-state").read_text())  # the version this release's node wrote
        assert state is not None and state["data_version"] == written["data_version"], log_dir.name
        final = quorum["final"]
        assert (state["leader_id"], state["epoch"]) == (final["leader_id"], final["leader_epoch"]), log_dir.name


@pytest.mark.parametrize("case", VOTERS, ids=[c.name for c in VOTERS])
def test_voter_changes_and_quorum_state_equal_the_admin_clients_quorum(case: Path) -> None:
    check_voters(case)


def check_findings(case: Path, log_dir: Path) -> None:
    """``check``: no anomaly on real 4.4 data. The one finding allowed is the metadata log's missing index: the
    case leaves out the raft log's preallocated 10 MiB indexes (listed in expected.json's mutations)."""
    doc = run("check", "-f", "json", str(log_dir))
    left_out = {m.split(" ")[0] for m in expected(case)["mutations"] if "preallocated index" in m}
    for finding in doc["findings"]:
        index = f"{log_dir.name}/{str(finding['file']).removesuffix('.log')}.index"
        assert finding["code"] == "missing-index" and index in left_out, finding


@pytest.mark.parametrize(("case", "log_dir"), [(c, d) for c in CASES for d in log_dirs(c)],
                         ids=[f"{c.name}:{d.name}" for c in CASES for d in log_dirs(c)])
def test_check_finds_no_anomaly(case: Path, log_dir: Path) -> None:
    check_findings(case, log_dir)


def check_case(case: Path) -> None:
    """Every check above on one case (the live test runs them on a case it has just written)."""
    for log_dir in log_dirs(case):
        for part in sorted(p for p in log_dir.iterdir() if p.is_dir()):
            check_partition(case, part)
        if (log_dir / "__cluster_metadata-0").is_dir():
            check_metadata(case, log_dir)
        check_findings(case, log_dir)
    for dump in expected(case)["dumps"]:
        check_dump(case, dump)
    if "groups" in expected(case).get("admin", {}):
        check_groups(case)
    if "quorum" in expected(case):
        check_voters(case)
