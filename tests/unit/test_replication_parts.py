"""The replication model's parts, each a Kafka class: ``Replica`` (the leader's record of a follower),
``Partition`` (HW, ISR, fetch checks), the controller's elections and the produce bookkeeping."""

from __future__ import annotations

import pytest

from kafkatool.engine.replication.controller import Controller
from kafkatool.engine.replication.log import LocalReplica
from kafkatool.engine.replication.partition import Partition, check_fetch, read_records
from kafkatool.engine.replication.produce import Produces, Request
from kafkatool.engine.replication.replica import Replica
from kafkatool.engine.replication.scenario import ScenarioError, build_log, rebuild_cache


def local(rid: int, epochs: list[int], hw: int = 0) -> LocalReplica:
    log = [(e, f"r{n}") for n, e in enumerate(epochs)]
    return LocalReplica(rid, log, hw, rebuild_cache(log))


def test_a_fetch_at_the_leader_end_catches_up_now() -> None:
    r = Replica()
    assert r.update_fetch_state(5, 5, now=100, broker_epoch=3) is True
    assert (r.leo, r.last_caught_up_ms, r.last_fetch_ms, r.last_fetch_leader_leo, r.broker_epoch) == (5, 100, 100, 5, 3)
    assert r.update_fetch_state(5, 8, now=200, broker_epoch=3) is False  # LEO unchanged
    # behind the leader now, but at the leader's LEO of the previous fetch: caught up as of that fetch (R:112-145)
    assert r.last_caught_up_ms == 100
    r.update_fetch_state(8, 9, now=300, broker_epoch=3)
    assert r.last_caught_up_ms == 200


def test_reset_keeps_a_staying_leaders_knowledge_only() -> None:
    prev = Replica(7, 10, 20, 9, 4)
    assert Replica.reset(None, in_sync=True, now=50, leader_leo=12) == Replica(-1, 50, 0, -1, None)
    assert Replica.reset(prev, in_sync=True, now=50, leader_leo=12) == Replica(7, 50, 50, 12, 4)
    assert Replica.reset(prev, in_sync=False, now=50, leader_leo=12) == Replica(7, 0, 0, 12, 4)


def test_hw_waits_for_maximal_isr_and_not_under_min_isr() -> None:
    leader, f2, f3 = local(1, [0] * 6), local(2, [0] * 6), local(3, [0] * 6)
    replicas = {1: leader, 2: f2, 3: f3}
    part = Partition.make_leader(leader, 0, [1, 2, 3], [1, 2, 3], None, now=0)
    part.followers[2].update_fetch_state(4, 6, now=0, broker_epoch=0)
    part.followers[3].update_fetch_state(6, 6, now=0, broker_epoch=0)
    assert part.maybe_increment_leader_hw(leader, replicas, 0, 1000, min_isr=2) is True
    assert leader.hw == 4  # the slowest ISR member
    part.isr = [1]
    assert part.maybe_increment_leader_hw(leader, replicas, 0, 1000, min_isr=2) is False  # under min ISR


def test_out_of_sync_replicas_and_expansion() -> None:
    leader, f2 = local(1, [0] * 4, hw=4), local(2, [0] * 4)
    part = Partition.make_leader(leader, 0, [1, 2], [1, 2], None, now=0)
    assert part.out_of_sync_replicas(4, now=2000, lag_ms=1000) == [2]
    part.isr = [1]
    assert part.expansion_for(2, leader, f2) is None  # no fetch yet: not ISR eligible
    part.followers[2].update_fetch_state(4, 4, now=2000, broker_epoch=0)
    assert part.expansion_for(2, leader, f2) == [1, 2]
    part.pending = ("shrink", [1])
    assert part.expansion_for(2, leader, f2) is None  # an ISR change is in flight


def test_check_fetch_ranges_and_diverging_epoch() -> None:
    leader = local(1, [0, 0, 2, 2])
    assert check_fetch(leader, 4, None) == (None, None)  # at the log end: empty, not out of range
    assert check_fetch(leader, 5, None)[0] is not None
    assert check_fetch(leader, -1, None)[0] == "offset -1 is negative"
    assert check_fetch(leader, 3, 1) == (None, (0, 2))  # epoch 1 unknown to the leader: its epoch 0 ends at 2
    assert check_fetch(leader, 3, 3)[0] is not None  # no epoch 3 and nothing above it
    assert read_records(leader, 1, 2) == [(0, "r1"), (2, "r2")]


def test_elections() -> None:
    c = Controller(1, 3, 5, [1, 2], unclean_allowed=False)
    with pytest.raises(ScenarioError, match="not alive"):
        c.elect(2, clean=True, alive={1: True, 2: False, 3: True})
    with pytest.raises(ScenarioError, match="not in the ISR"):
        c.elect(3, clean=True, alive={1: True, 2: True, 3: True})
    with pytest.raises(ScenarioError, match="unclean"):
        c.elect(3, clean=False, alive={1: True, 2: True, 3: True})
    c.elect(2, clean=True, alive={1: False, 2: True, 3: True})
    assert (c.leader, c.leader_epoch, c.partition_epoch, c.isr) == (2, 4, 6, [2])


def test_produce_bookkeeping() -> None:
    p = Produces()
    assert p.new_ids(2, []) == ["m1", "m2"]
    assert p.new_ids(2, ["a", "b"]) == ["a", "b"]
    assert p.new_ids(1, []) == ["m5"]
    req = Request(["a", "b"], 3, 4, -1, "pending", 1, 2)
    p.requests.append(req)
    p.complete_delayed(4, enough_replicas=True)
    assert req.status == "pending"  # the HW must pass the request's last offset
    p.complete_delayed(5, enough_replicas=True)
    assert req.status == "acked" and p.acknowledged == ["a", "b"]
    p.record_committed([(0, "x"), (0, "a"), (0, "x")])
    assert p.committed == ["x", "a"]


def test_build_log_rejects_a_gap() -> None:
    assert build_log([{"epoch": 1, "count": 2}]) == [(1, "e1o0"), (1, "e1o1")]
    with pytest.raises(ScenarioError, match="does not follow"):
        build_log([{"epoch": 0, "offset": 1}])
