"""``kafkatool simulate-replication``: the shared scenarios step by step, invariants under random events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.replication import (
    Simulation,
    apply,
    cache_assign,
    cache_end_offset_for,
    check_invariants,
    compare_steps,
    run,
    start,
)
from kafkatool.reading.scenario import ScenarioFormatError, load_scenario
from tests.conftest import SHARED, shared_dir

runner = CliRunner()
SCENARIOS = sorted(p.stem for p in (SHARED / "replication").glob("*.json")) if (SHARED / "replication").is_dir() \
    else ["kip101-s1-hw-truncation-loss"]


def _load(name: str) -> dict[str, Any]:
    return load_scenario(shared_dir("replication") / f"{name}.json")


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_matches_expected_steps_and_final(name: str) -> None:
    scenario = _load(name)
    result = run(scenario)
    diffs = compare_steps(result.steps, scenario["expected"]["steps"])
    assert not diffs, diffs[:5]
    assert result.final == scenario["expected"]["final"]


def test_kip101_hw_truncation_loss_is_reported_as_a_violation_and_exit_1() -> None:
    path = shared_dir("replication") / "kip101-s1-hw-truncation-loss.json"
    result = runner.invoke(app, ["simulate-replication", str(path)])
    assert result.exit_code == 1
    assert "acknowledged records lost: m2" in result.stdout
    assert "every step matches" in result.stdout
    result = runner.invoke(app, ["simulate-replication", str(path), "--format", "json"])
    doc = json.loads(result.stdout)
    expected = json.loads(path.read_text())["expected"]["steps"]
    assert [set(s) for s in doc["steps"]] == [set(s) for s in expected]
    assert {v["rule"] for v in doc["violations"]} == {"hw-above-isr-leo", "acked-record-lost"}


def test_leader_epoch_scenario_runs_clean_exit_0() -> None:
    path = shared_dir("replication") / "kip101-s1-leader-epoch-no-loss.json"
    assert runner.invoke(app, ["simulate-replication", str(path)]).exit_code == 0


def test_a_difference_from_expected_exits_1(tmp_path: Path) -> None:
    doc = _load("hw-waits-for-slow-isr-member")
    doc["expected"]["steps"][3]["replicas"]["1"]["hw"] = 99
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["simulate-replication", str(path)])
    assert result.exit_code == 1
    assert "replicas.1.hw" in result.stdout


def test_bad_field_names_its_json_path(tmp_path: Path) -> None:
    doc = _load("hw-waits-for-slow-isr-member")
    doc["events"][2]["acks"] = 2
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ScenarioFormatError, match=r"\$\.events\[2\]\.acks"):
        load_scenario(path)
    result = runner.invoke(app, ["simulate-replication", str(path)])
    assert result.exit_code == 3
    assert "$.events[2].acks" in result.stderr


def test_missing_and_unparsable_files_exit_3(tmp_path: Path) -> None:
    assert runner.invoke(app, ["simulate-replication", str(tmp_path / "none.json")]).exit_code == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert runner.invoke(app, ["simulate-replication", str(bad)]).exit_code == 3


def test_epoch_cache_rules() -> None:
    cache: list[list[int]] = [[1, 0], [2, 11]]
    cache_assign(cache, 1, 16)  # LEFC: entries with epoch or start >= the new entry's go first
    assert cache == [[1, 16]]
    leader = [[0, 0], [1, 5], [4, 12]]
    assert cache_end_offset_for(leader, 3, 14) == (1, 12)
    assert cache_end_offset_for(leader, 4, 14) == (4, 14)
    assert cache_end_offset_for([[2, 5]], 1, 9) == (1, 5)


def _diverging_scenario() -> dict[str, Any]:
    return {
        "settings": {"replicas": [1, 2], "min_insync_replicas": 1, "replica_lag_time_max_ms": 30000,
                     "unclean_leader_election": True, "truncation": "fetch_diverging_epoch",
                     "alter_partition_auto_commit": False},
        "initial": {"t_ms": 1_000_000, "leader": 2, "leader_epoch": 1, "isr": [2],
                    "replicas": {"1": {"log": [{"epoch": 1, "count": 11}, {"epoch": 2, "count": 5}], "hw": 11},
                                 "2": {"log": [{"epoch": 1, "count": 21}], "hw": 21}}},
        "events": [],
    }


def test_diverging_epoch_fetch_truncates_without_updating_the_leader_view() -> None:
    scenario = _diverging_scenario()
    scenario["initial"]["leader_epoch"] = 3
    scenario["events"] = [{"t_ms": 1_000_010, "type": "fetch", "replica": 1},
                          {"t_ms": 1_000_020, "type": "fetch", "replica": 1},
                          {"t_ms": 1_000_025, "type": "fetch", "replica": 1},
                          {"t_ms": 1_000_030, "type": "alter_partition_response", "accept": True}]
    steps = run(scenario).steps
    first = steps[1]
    assert first["replicas"]["1"]["leo"] == 11
    assert first["replicas"]["1"]["fetch_state"] == {"fetch_offset": 11, "state": "fetching",
                                                     "last_fetched_epoch": 1}
    assert first["leader_view"]["followers"]["1"]["leo"] == -1
    assert steps[2]["replicas"]["1"]["leo"] == 21
    assert steps[2]["leader_view"]["followers"]["1"]["leo"] == 11
    third = steps[3]["leader_view"]
    assert third["pending_isr_change"] is not None
    assert third["maximal_isr"] == [1, 2] and third["isr"] == [2]
    assert steps[4]["controller"]["isr"] == [1, 2] and steps[4]["leader_view"]["pending_isr_change"] is None


# ------------------------------------------------------------------ random event sequences


def _random_scenario(mode: str, n: int, min_isr: int, unclean: bool, auto_commit: bool) -> dict[str, Any]:
    ids = list(range(1, n + 1))
    return {"settings": {"replicas": ids, "min_insync_replicas": min_isr, "replica_lag_time_max_ms": 1000,
                         "unclean_leader_election": unclean, "truncation": mode,
                         "alter_partition_auto_commit": auto_commit},
            "initial": {"t_ms": 1_000_000, "leader": 1, "leader_epoch": 0, "isr": ids,
                        "replicas": {str(i): {"log": [{"epoch": 0, "count": 2}], "hw": 2} for i in ids}},
            "events": []}


def _draw_event(data: st.DataObject, sim: Simulation, t: int, *, unclean: bool, flush_loss: bool) -> dict[str, Any]:
    alive = [r for r in sim.replicas_ids if sim.replicas[r].alive]
    dead = [r for r in sim.replicas_ids if not sim.replicas[r].alive]
    kinds = ["produce", "fetch", "fetch", "fetch", "tick"]
    if len(alive) > 1:
        kinds.append("crash")
    if dead:
        kinds.append("restart")
    electable = [r for r in sim.c_isr if sim.replicas[r].alive]
    if electable or (unclean and alive):
        kinds.append("elect")
    if not sim.auto_commit:
        kinds += ["alter_partition_response"] * 2
    kind = data.draw(st.sampled_from(kinds))
    event: dict[str, Any] = {"t_ms": t, "type": kind}
    if kind == "produce":
        event.update(records=data.draw(st.integers(1, 3)), acks=data.draw(st.sampled_from([-1, 1, 0])))
    elif kind == "fetch":
        event.update(replica=data.draw(st.sampled_from(sim.replicas_ids)),
                     max_records=data.draw(st.sampled_from([None, 1, 2])),
                     outcome=data.draw(st.sampled_from(["complete", "complete", "response_lost", "request_lost"])))
    elif kind == "crash":
        event["replica"] = data.draw(st.sampled_from(alive))
        if flush_loss:
            event["flushed_offset"] = data.draw(st.integers(0, sim.replicas[event["replica"]].leo))
    elif kind == "restart":
        event["replica"] = data.draw(st.sampled_from(dead))
    elif kind == "alter_partition_response":
        event["accept"] = data.draw(st.booleans())
    elif kind == "elect":
        clean = bool(electable) and (not unclean or data.draw(st.booleans()))
        event.update(leader=data.draw(st.sampled_from(electable if clean else alive)), clean=clean)
    return event


def _run_random(data: st.DataObject, mode: str, *, unclean: bool, flush_loss: bool) -> list[Any]:
    n = data.draw(st.integers(2, 3))
    scenario = _random_scenario(mode, n, data.draw(st.integers(1, n)), unclean, data.draw(st.booleans()))
    sim = start(scenario)
    reported: set[str] = set()
    violations = check_invariants(sim, None, "initial", set(), reported)
    prev = sim.snapshot("initial")
    t = 1_000_000
    for step in range(data.draw(st.integers(1, 40))):
        t += data.draw(st.sampled_from([0, 10, 400, 1000, 1500]))
        event = _draw_event(data, sim, t, unclean=unclean, flush_loss=flush_loss)
        apply(sim, event)
        acked = {i for r in sim.requests if r.acks == -1 and r.status == "acked" for i in r.ids}
        violations += check_invariants(sim, prev, step, acked, reported)
        prev = sim.snapshot(step)
    return violations


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), mode=st.sampled_from(["fetch_diverging_epoch", "offsets_for_leader_epoch"]))
def test_invariants_hold_under_random_events_with_leader_epochs(data: st.DataObject, mode: str) -> None:
    """With leader epochs, fully flushed logs and clean elections, no invariant ever breaks."""
    violations = _run_random(data, mode, unclean=False, flush_loss=False)
    assert not violations, [(v.step, v.rule, v.message) for v in violations]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), mode=st.sampled_from(["fetch_diverging_epoch", "offsets_for_leader_epoch",
                                             "offsets_for_leader_epoch_v0", "high_watermark"]))
def test_hw_rules_hold_in_every_mode(data: st.DataObject, mode: str) -> None:
    """Even with unflushed tails, unclean elections and HW truncation: leader HW monotonic, HW <= LEO."""
    violations = _run_random(data, mode, unclean=True, flush_loss=True)
    bad = [v for v in violations if v.rule in ("leader-hw-decreased", "hw-above-leo")]
    assert not bad, [(v.step, v.rule, v.message) for v in bad]


@pytest.mark.parametrize("suffix", ["svg", "png"])
def test_plot_shows_the_kip101_loss(tmp_path, suffix: str) -> None:
    from typer.testing import CliRunner

    from kafkatool.cli import app

    scenario = shared_dir("replication") / "kip101-s1-hw-truncation-loss.json"
    out = tmp_path / f"kip101.{suffix}"
    result = CliRunner().invoke(app, ["simulate-replication", "--plot", str(out), str(scenario)])
    assert result.exit_code in (0, 1), result.stderr
    data = out.read_bytes()
    if suffix == "svg":
        assert b"<svg" in data[:2000] and b"LOST" in data
    else:
        assert data.startswith(b"\x89PNG")
    bad = CliRunner().invoke(app, ["simulate-replication", "--plot", str(tmp_path / "x.gif"), str(scenario)])
    assert bad.exit_code == 2


def test_an_empty_fetch_returns_nothing_but_carries_the_high_watermark(tmp_path: Path) -> None:
    """Issue 20, item 3: ``max_records: 0`` is a fetch that returns no records (not "no limit"); the response
    still carries the leader's high watermark, which the follower takes (capped at its own log end)."""
    scenario = _diverging_scenario()
    scenario["initial"]["replicas"] = {"1": {"log": [{"epoch": 1, "count": 11}], "hw": 5},
                                       "2": {"log": [{"epoch": 1, "count": 21}], "hw": 11}}
    scenario["events"] = [{"t_ms": 1_000_010, "type": "fetch", "replica": 1, "max_records": 0},
                          {"t_ms": 1_000_020, "type": "fetch", "replica": 1, "max_records": 4}]
    scenario.update({"schema": "kafkatool.replication-scenario/1", "name": "empty-fetch"})
    path = tmp_path / "empty-fetch.json"
    path.write_text(json.dumps(scenario))
    steps = run(load_scenario(path)).steps
    empty, four = steps[1]["replicas"]["1"], steps[2]["replicas"]["1"]
    assert (empty["leo"], empty["hw"]) == (11, 11)
    assert four["leo"] == 15


# ------------------------------------------------------------------ multi-round truncation (issue 20, item 4)
#
# Every expected value below is worked by hand from Kafka trunk 1eb76443: the leader's answer is
# Partition.readRecords with LeaderEpochFileCache.endOffsetFor, the follower's cut is
# AbstractFetcherThread.getOffsetTruncationState with UnifiedLog.endOffsetForEpoch, and the state after it
# is AbstractFetcherThread.updateFetchOffsetAndMaybeMarkTruncationComplete (Fetching whenever truncation on
# fetch is supported, even when the truncation is not final).


def _follower(step: dict[str, Any], rid: str) -> tuple[Any, ...]:
    rep = step["replicas"][rid]
    fs = rep["fetch_state"]
    return rep["leo"], rep["hw"], rep["epoch_cache"], fs["fetch_offset"], fs["state"], fs["last_fetched_epoch"]


def _three_round_scenario(mode: str) -> dict[str, Any]:
    """Leader 2 (epoch 6) has epochs 0,1,3,5; follower 1 wrote epochs 2 and 4 that the leader never had."""
    return {
        "settings": {"replicas": [1, 2], "min_insync_replicas": 1, "replica_lag_time_max_ms": 30000,
                     "unclean_leader_election": False, "truncation": mode, "alter_partition_auto_commit": True},
        "initial": {"t_ms": 1_000_000, "leader": 2, "leader_epoch": 6, "isr": [2],
                    "replicas": {"1": {"log": [{"epoch": 0, "count": 4}, {"epoch": 2, "count": 3},
                                               {"epoch": 4, "count": 3}], "hw": 2},
                                 "2": {"log": [{"epoch": 0, "count": 3}, {"epoch": 1, "count": 3},
                                               {"epoch": 3, "count": 3}, {"epoch": 5, "count": 3}], "hw": 3}}},
        "events": [{"t_ms": 1_000_000 + 10 * n, "type": "fetch", "replica": 1} for n in range(1, 6)],
    }


def test_diverging_epoch_truncation_takes_one_round_per_fetch() -> None:
    """Three diverging-epoch answers, one per Fetch, before the follower's fetch offset settles at 3."""
    steps = run(_three_round_scenario("fetch_diverging_epoch")).steps
    assert steps[0]["replicas"]["2"]["epoch_cache"] == [[0, 0], [1, 3], [3, 6], [5, 9], [6, 12]]
    want = [
        # start-up: a non-empty cache starts fetching at the LEO with the latest epoch (RM.initialFetchOffset)
        (10, 2, [[0, 0], [2, 4], [4, 7]], 10, "fetching", 4),
        # epoch 4 -> leader (3, 9); the follower has no epoch 3: cut to the end of its epoch 2 (7), not final
        (7, 2, [[0, 0], [2, 4]], 7, "fetching", 2),
        # epoch 2 -> leader (1, 6); no epoch 1 either: cut to the end of its epoch 0 (4), not final
        (4, 2, [[0, 0]], 4, "fetching", 0),
        # epoch 0 -> leader (0, 3); same epoch: min(3, 4, 4) = 3, final
        (3, 2, [[0, 0]], 3, "fetching", 0),
        # no divergence at 3: the records 3..11 come with the leader's HW 12
        (12, 12, [[0, 0], [1, 3], [3, 6], [5, 9]], 12, "fetching", 5),
        (12, 12, [[0, 0], [1, 3], [3, 6], [5, 9]], 12, "fetching", 5),
    ]
    assert [_follower(s, "1") for s in steps] == want
    # a diverging answer never updates the leader's record of the follower (KAFKA-13141)
    assert [s["leader_view"]["followers"]["1"]["leo"] for s in steps] == [-1, -1, -1, -1, 3, 12]
    assert steps[5]["controller"]["isr"] == [1, 2]


def test_offsets_for_leader_epoch_truncation_stays_truncating_between_rounds() -> None:
    """The same history over OffsetsForLeaderEpoch: Truncating until the final round, which then fetches."""
    steps = run(_three_round_scenario("offsets_for_leader_epoch")).steps
    want = [
        (10, 2, [[0, 0], [2, 4], [4, 7]], 2, "truncating", None),
        (7, 2, [[0, 0], [2, 4]], 7, "truncating", 2),
        (4, 2, [[0, 0]], 4, "truncating", 0),
        (12, 12, [[0, 0], [1, 3], [3, 6], [5, 9]], 12, "fetching", 5),
    ]
    assert [_follower(s, "1") for s in steps[:4]] == want


def _a_b_a_scenario() -> dict[str, Any]:
    """Leadership 1 -> 2 -> 1 -> 2 through unclean elections; 1 comes back holding epochs 0 and 2 of its own."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("crash", {"replica": 2}), ("produce", {"records": 3, "acks": 1}),        # 1 writes m1-m3 in epoch 0
        ("crash", {"replica": 1}), ("restart", {"replica": 2}), ("elect", {"leader": 2, "clean": False}),
        ("produce", {"records": 2, "acks": 1}),                                    # 2 writes m4, m5 in epoch 1
        ("crash", {"replica": 2}), ("restart", {"replica": 1}), ("elect", {"leader": 1, "clean": False}),
        ("produce", {"records": 1, "acks": 1}),                                    # 1 writes m6 in epoch 2
        ("crash", {"replica": 1}), ("restart", {"replica": 2}), ("elect", {"leader": 2, "clean": False}),
        ("produce", {"records": 3, "acks": 1}),                                    # 2 writes m7-m9 in epoch 3
        ("restart", {"replica": 1}),
        ("fetch", {"replica": 1}), ("fetch", {"replica": 1}), ("fetch", {"replica": 1}), ("fetch", {"replica": 1}),
    ]
    return {
        "settings": {"replicas": [1, 2], "min_insync_replicas": 1, "replica_lag_time_max_ms": 30000,
                     "unclean_leader_election": True, "truncation": "fetch_diverging_epoch",
                     "alter_partition_auto_commit": True},
        "initial": {"t_ms": 1_000_000, "leader": 1, "leader_epoch": 0, "isr": [1, 2],
                    "replicas": {"1": {"log": [{"epoch": 0, "count": 2}], "hw": 2},
                                 "2": {"log": [{"epoch": 0, "count": 2}], "hw": 2}}},
        "events": [{"t_ms": 1_000_000 + 10 * (n + 1), "type": kind, **fields}
                   for n, (kind, fields) in enumerate(events)],
    }


def test_a_b_a_history_truncates_over_two_diverging_rounds() -> None:
    result = run(_a_b_a_scenario())
    steps = result.steps
    assert steps[14]["replicas"]["2"]["epoch_cache"] == [[0, 0], [1, 2], [3, 4]]
    want = {
        # restart: LEO 6 with epochs 0 and 2, HW from its checkpoint (6)
        14: (6, 6, [[0, 0], [2, 5]], 6, "fetching", 2),
        # epoch 2 -> leader (1, 4); unknown to 1: cut to the end of its epoch 0 (5); the HW drops to the LEO
        15: (5, 5, [[0, 0]], 5, "fetching", 0),
        # epoch 0 -> leader (0, 2); same epoch: min(2, 5, 5) = 2, final
        16: (2, 2, [[0, 0]], 2, "fetching", 0),
        17: (7, 7, [[0, 0], [1, 2], [3, 4]], 7, "fetching", 3),
        18: (7, 7, [[0, 0], [1, 2], [3, 4]], 7, "fetching", 3),
    }
    assert {n: _follower(steps[n + 1], "1") for n in want} == want
    assert steps[-1]["replicas"]["1"]["log"] == steps[-1]["replicas"]["2"]["log"]
    assert result.final["acknowledged_lost"] == ["m1", "m2", "m3", "m6"]
    assert result.final["diverged_from_leader"] == {"1": False}
    assert not [v for v in result.violations if v.rule != "acked-record-lost"]


# ------------------------------------------------------------------ pending AlterPartition (issue 20, item 4)


def _pending_scenario() -> dict[str, Any]:
    """An expansion, then a shrink, each left in flight until an ``alter_partition_response``."""
    timed: list[tuple[int, str, dict[str, Any]]] = [
        (10, "fetch", {"replica": 2}), (20, "fetch", {"replica": 3}),            # 1: expand by 3 pending
        (30, "produce", {"records": 2, "acks": -1}),                              # 2: m1, m2 at 4-5
        (40, "fetch", {"replica": 2}), (50, "fetch", {"replica": 2}),            # 4: 2 at 6, 3 still at 4
        (60, "alter_partition_response", {"accept": True}),                      # 5: ISR 1,2,3
        (70, "fetch", {"replica": 3}), (80, "fetch", {"replica": 3}),            # 7: HW 6, m1 m2 acked
        (9000, "fetch", {"replica": 2}), (15000, "produce", {"records": 1, "acks": -1}),  # 9: m3 at 6
        (15010, "fetch", {"replica": 2}), (15020, "fetch", {"replica": 2}),      # 11: 2 at 7
        (15030, "tick", {}),                                                      # 12: shrink (-3) pending
        (15040, "produce", {"records": 1, "acks": 1}),                            # 13: m4 at 7, acked
        (15050, "alter_partition_response", {"accept": True}),                    # 14: ISR 1,2; HW 7; m3 acked
    ]
    return {
        "schema": "kafkatool.replication-scenario/1", "name": "pending-alter-partition",
        "settings": {"replicas": [1, 2, 3], "min_insync_replicas": 2, "replica_lag_time_max_ms": 10000,
                     "truncation": "fetch_diverging_epoch", "alter_partition_auto_commit": False},
        "initial": {"t_ms": 1_000_000, "leader": 1, "leader_epoch": 1, "isr": [1, 2],
                    "replicas": {str(r): {"log": [{"epoch": 1, "count": 4}], "hw": 4} for r in (1, 2, 3)}},
        "events": [{"t_ms": 1_000_000 + t, "type": kind, **fields} for t, kind, fields in timed],
    }


def test_pending_alter_partition_counts_the_maximal_isr_for_the_hw_at_once() -> None:
    """PendingExpandIsr: the new member holds the HW back before the controller answers; PendingShrinkIsr:
    the leaving member still holds it until the shrink commits (Partition.maybeIncrementLeaderHW)."""
    steps = run(_pending_scenario()).steps
    view = [(s["leader_view"]["isr"], s["leader_view"]["maximal_isr"], s["leader_view"]["pending_isr_change"],
             s["replicas"]["1"]["hw"], s["controller"]["partition_epoch"]) for s in steps]
    expand = {"type": "expand", "isr": [1, 2, 3]}
    shrink = {"type": "shrink", "isr": [1, 2]}
    assert view[2] == ([1, 2], [1, 2, 3], expand, 4, 0)
    # step 4: the committed ISR 1,2 is at 6, but 3 (pending, at 4) already holds the HW at 4
    assert view[5] == ([1, 2], [1, 2, 3], expand, 4, 0)
    assert steps[5]["requests"][0]["status"] == "pending"
    assert view[6] == ([1, 2, 3], [1, 2, 3], None, 4, 1)
    assert view[8][3] == 6 and steps[8]["requests"][0]["status"] == "acked"
    # step 12-13: the shrink is in flight, 3 (at 6) still counts, the HW stays at 6 below 2's 7
    assert view[13] == ([1, 2, 3], [1, 2, 3], shrink, 6, 1)
    assert view[14] == ([1, 2, 3], [1, 2, 3], shrink, 6, 1)
    assert steps[14]["requests"][1]["status"] == "pending"
    assert view[15] == ([1, 2], [1, 2], None, 7, 2)
    assert steps[15]["requests"][1]["status"] == "acked"


def test_pending_alter_partition_is_rejected_back_to_the_committed_isr() -> None:
    """A rejected expansion goes back to the last committed ISR (Partition.handleAlterPartitionError);
    the HW is not recomputed by the answer itself."""
    scenario = _pending_scenario()
    scenario["events"] = [*scenario["events"][:5],
                          {"t_ms": 1_000_060, "type": "alter_partition_response", "accept": False}]
    steps = run(scenario).steps
    last = steps[-1]["leader_view"]
    assert (last["isr"], last["maximal_isr"], last["pending_isr_change"]) == ([1, 2], [1, 2], None)
    assert steps[-1]["replicas"]["1"]["hw"] == 4 and steps[-1]["controller"]["partition_epoch"] == 0


def test_timeline_shows_the_pending_alter_partition(tmp_path: Path) -> None:
    path = tmp_path / "pending.json"
    path.write_text(json.dumps(_pending_scenario()))
    result = runner.invoke(app, ["simulate-replication", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert "1,2 (+3 pending, HW by 1,2,3)" in next(line for line in lines if "fetch by 3" in line)
    assert "1,2,3 (-3 pending, HW by 1,2,3)" in next(line for line in lines if " tick " in line)
    assert any(line.startswith("ISR: committed;") for line in lines)
    doc = json.loads(runner.invoke(app, ["simulate-replication", str(path), "-f", "json"]).stdout)
    assert doc["steps"][13]["leader_view"]["pending_isr_change"] == {"type": "shrink", "isr": [1, 2]}


# ------------------------------------------------------------------ acknowledged records in offset order


def _two_acks_scenario() -> dict[str, Any]:
    """An acks=all record ``z`` at offset 2 is acknowledged after the acks=1 record ``y`` at offset 3."""
    timed: list[tuple[str, dict[str, Any]]] = [
        ("fetch", {"replica": 2}),
        ("produce", {"records": 1, "acks": -1, "ids": ["z"]}),   # offset 2, waits for 2
        ("produce", {"records": 1, "acks": 1, "ids": ["y"]}),    # offset 3, acknowledged at once
        ("fetch", {"replica": 2}), ("fetch", {"replica": 2}),    # 2 reaches 4: z is acknowledged
    ]
    return {
        "schema": "kafkatool.replication-scenario/1", "name": "ack-order",
        "settings": {"replicas": [1, 2, 3], "min_insync_replicas": 1, "replica_lag_time_max_ms": 30000,
                     "unclean_leader_election": True, "truncation": "fetch_diverging_epoch"},
        "initial": {"t_ms": 1_000_000, "leader": 1, "leader_epoch": 0, "isr": [1, 2],
                    "replicas": {str(r): {"log": [{"epoch": 0, "count": 2}], "hw": 2} for r in (1, 2, 3)}},
        "events": [{"t_ms": 1_000_000 + 10 * (n + 1), "type": kind, **fields}
                   for n, (kind, fields) in enumerate(timed)],
    }


def test_acknowledged_records_are_listed_in_offset_order(tmp_path: Path) -> None:
    scenario = _two_acks_scenario()
    scenario["events"] += [{"t_ms": 1_000_100, "type": "crash", "replica": 1},
                           {"t_ms": 1_000_110, "type": "crash", "replica": 2},
                           {"t_ms": 1_000_120, "type": "elect", "leader": 3, "clean": False}]
    result = run(scenario)
    assert result.steps[3]["acknowledged"] == ["y"]
    assert result.steps[5]["acknowledged"] == ["z", "y"]
    assert result.final["acknowledged_lost"] == ["z", "y"]
    path = tmp_path / "ack-order.json"
    path.write_text(json.dumps(scenario))
    out = runner.invoke(app, ["simulate-replication", str(path)], env={"COLUMNS": "200"}).stdout
    assert "acknowledged records lost: z, y" in out
    doc = json.loads(runner.invoke(app, ["simulate-replication", str(path), "-f", "json"]).stdout)
    assert doc["final"]["acknowledged_lost"] == ["z", "y"] and doc["steps"][-1]["acknowledged"] == ["z", "y"]


def test_acknowledged_records_of_later_leaders_follow_those_of_earlier_ones() -> None:
    """Across leaders the order is by leader epoch, then offset (the shared KIP-279 histories reuse offsets)."""
    result = run(_load("kip279-fast-failover"))
    assert result.steps[-1]["acknowledged"] == [f"m{n}" for n in range(1, 18)]


def test_lost_acks_all_records_are_reported_in_offset_order() -> None:
    """The acked-record-lost violation names the records by offset, not by string order of their ids."""
    scenario = _two_acks_scenario()
    scenario["settings"]["unclean_leader_election"] = False
    scenario["events"][2] = {"t_ms": 1_000_030, "type": "produce", "records": 1, "acks": -1, "ids": ["y"]}
    scenario["events"] += [{"t_ms": 1_000_100, "type": "crash", "replica": 2, "flushed_offset": 2},
                           {"t_ms": 1_000_110, "type": "crash", "replica": 1, "flushed_offset": 2},
                           {"t_ms": 1_000_120, "type": "restart", "replica": 2},
                           {"t_ms": 1_000_130, "type": "elect", "leader": 2, "clean": True}]
    result = run(scenario)
    assert result.steps[5]["acknowledged"] == ["z", "y"]
    lost = [v.message for v in result.violations if v.rule == "acked-record-lost"]
    assert lost == ["acks=all records acknowledged but missing from leader 2: z, y"]
