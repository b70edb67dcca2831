"""``kafkatool salvage`` against each Kafka version: one experiment of the campaign's ``salvage`` kind per release
line and CI run (see :mod:`tests.kafka.salvage`): seeded damage on a copy of a real broker's log dir (or diverged
replicas after an unclean election), the repaired dir served by a broker of the same version, every salvaged record
byte-equal at its offset, aborted ones hidden from read_committed, ``simulate-restart`` predicting no loss on it,
and kafkatool's account of Kafka's own recovery what a broker on the unrepaired copy does.

Which damage kind each line gets rotates with the UTC day (as ``test_crash.py``'s mutations do): six lines take
six consecutive kinds of the seven, so every kind runs within two days on some line and on every line within a
week. ``KAFKATOOL_ROTATION=N`` replays one rotation; ``all`` runs every kind on every line.
"""

from __future__ import annotations

from pathlib import Path

from tests.kafka import versions
from tests.kafka.salvage import DAMAGES, rotation, run, served_mismatches

SEED = 3300


def kinds_for(version: str, turn: int | None) -> tuple[str, ...]:
    """The damage kinds ``version`` runs in rotation ``turn`` (all of them for ``None``)."""
    if turn is None:
        return DAMAGES
    return (DAMAGES[(turn + versions.VERSIONS.index(version)) % len(DAMAGES)],)


def test_each_rotation_covers_six_kinds_and_every_kind_within_two_days() -> None:
    for turn in (0, 1, 739_000):
        today = {k for v in versions.VERSIONS for k in kinds_for(v, turn)}
        tomorrow = {k for v in versions.VERSIONS for k in kinds_for(v, turn + 1)}
        assert len(today) == len(versions.VERSIONS) and today | tomorrow == set(DAMAGES), turn
    assert all(kinds_for(v, None) == DAMAGES for v in versions.VERSIONS)


def test_a_broker_serves_every_salvaged_record(kafka_version: str, tmp_path: Path) -> None:
    turn = rotation()
    seed = SEED if turn is None else SEED + turn % 1000
    failed = []
    for i, kind in enumerate(kinds_for(kafka_version, turn)):
        outcome = run(kafka_version, seed + i, tmp_path / kind, kind)
        assert {"served", "restart_no_loss"} <= set(outcome.fields), f"{kind}: nothing compared"
        counts = outcome.detail["counts"]
        print(kind, outcome.detail["damage"], counts)
        assert counts["exported"] == counts["served_salvage"] > 0, (kind, counts)
        if not outcome.agree:
            failed.append(f"{kind} (seed {seed + i}, rotation {turn}): {outcome.detail['damage']}\n    "
                          + "\n    ".join(outcome.disagreements[:8]))
    assert not failed, "\n".join(failed)


def test_the_served_check_finds_every_kind_of_difference() -> None:
    """The comparison the experiments rely on (no broker): a changed value, a missing offset, a record served that
    salvage did not export, and an aborted record visible to read_committed are each reported."""
    import base64

    def row(offset: int, value: bytes, state: str = "none") -> dict:
        return {"topic": "t", "partition": 0, "offset": offset, "timestamp": 5, "key": None,
                "value": base64.b64encode(value).decode(), "headers": [], "transaction_state": state}

    def served(*recs: tuple[int, bytes]) -> dict:
        return {"t-0": {"end": None, "records": [{"offset": o, "timestamp": 5, "key": None, "value": v,
                                                  "headers": []} for o, v in recs]}}

    rows = [row(0, b"a"), row(1, b"b", "aborted"), row(2, b"c", "committed")]
    good = served((0, b"a"), (1, b"b"), (2, b"c"))
    assert served_mismatches(rows, good, served((0, b"a"), (2, b"c"))) == []
    changed = served_mismatches(rows, served((0, b"a"), (1, b"b"), (2, b"X")), served((0, b"a"), (2, b"c")))
    missing = served_mismatches(rows, served((0, b"a"), (2, b"c")), served((0, b"a"), (2, b"c")))
    extra = served_mismatches(rows, served((0, b"a"), (1, b"b"), (2, b"c"), (3, b"d")), served((0, b"a"), (2, b"c")))
    visible = served_mismatches(rows, good, good)
    hidden = served_mismatches(rows, good, served((0, b"a")))
    assert [len(x) for x in (changed, missing, extra, visible, hidden)] == [1, 1, 1, 1, 1]
    assert "offset 2" in changed[0] and "offset 1" in missing[0] and "not export" in extra[0]
    assert "aborted but visible" in visible[0] and "committed but hidden" in hidden[0]
    stable = served((0, b"a"))
    stable["t-0"]["end"] = 1  # an open transaction at offset 1 holds the last stable offset: offset 2 is hidden
    assert served_mismatches(rows, good, stable) == []
