"""The divergence engine's merge walks over offset-ordered logs answer exactly as the plain definitions do
(a scan for the batch holding an offset, sets of every batch), which held every batch of a replica in memory."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.engine.divergence import Batch, Replica, _absent, analyse_election, divergence


@st.composite
def logs(draw: st.DrawFn) -> list[Batch]:
    """An offset-ordered log: batches of 1-3 offsets, gaps now and then, epochs that never go down."""
    out, offset, epoch = [], 0, 0
    for _ in range(draw(st.integers(0, 25))):
        offset += draw(st.sampled_from([0, 0, 0, 1, 3]))
        epoch += draw(st.sampled_from([0, 0, 0, 1]))
        last = offset + draw(st.integers(0, 2))
        out.append(Batch(offset, last, epoch, draw(st.integers(0, 2)), last - offset + 1))
        offset = last + 1
    return out


def _plain_divergence(leader: Replica, follower: Replica) -> tuple[int | None, int | None]:
    common = min(leader.log_end_offset, follower.log_end_offset)
    by_epoch = by_crc = None
    lead = {b.base_offset: b for b in leader.batches}
    for b in follower.batches:
        if b.base_offset >= common:
            break
        other = next((x for x in leader.batches if x.base_offset <= b.base_offset <= x.last_offset), None)
        if by_epoch is None and (other is None or other.epoch != b.epoch):
            by_epoch = b.base_offset
        same = lead.get(b.base_offset)
        if by_crc is None and (same is None or (same.last_offset, same.crc) != (b.last_offset, b.crc)):
            by_crc = b.base_offset
    return by_epoch, by_crc


def _replica(broker: int, batches: list[Batch]) -> Replica:
    leo = batches[-1].last_offset + 1 if batches else 0
    return Replica(broker, leo, leo, [], batches)


@settings(max_examples=400, deadline=None)
@given(logs(), logs())
def test_merge_walks_equal_the_plain_definitions(a: list[Batch], b: list[Batch]) -> None:
    leader, follower = _replica(1, a), _replica(2, b)
    by_epoch, by_crc, _ = divergence(leader, follower)
    plain = _plain_divergence(leader, follower)
    longer = follower.log_end_offset > leader.log_end_offset
    assert by_epoch == (plain[0] if plain[0] is not None or not longer else leader.log_end_offset)
    assert by_crc == (plain[1] if plain[1] is not None or not longer else leader.log_end_offset)
    have = {(x.base_offset, x.last_offset, x.crc) for x in b}
    assert _absent(a, b) == [x for x in a if (x.base_offset, x.last_offset, x.crc) not in have]
    election = analyse_election(leader, follower, isr=[2], old_hw=leader.high_watermark // 2)
    assert election.lost_acknowledged + election.lost_unacknowledged == sorted(
        _absent(a, b), key=lambda x: x.last_offset >= leader.high_watermark // 2)
