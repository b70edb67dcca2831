"""Times read as ISO-8601 UTC in every table (issue 20): the dump table, the producer replay, the transactions
view; the machine formats keep Kafka's raw epoch milliseconds."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.render.safe import for_people, iso_time

runner = CliRunner()
DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "demo-0"
SEGMENT = DEMO / "00000000000000000000.log"


def test_iso_time_is_utc_with_milliseconds_and_minus_one_is_no_time() -> None:
    assert iso_time(1700000000016) == "2023-11-14T22:13:20.016Z"
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(-1) is None
    assert iso_time(2**62) == str(2**62)  # beyond year 9999: the number, never an error
    doc = for_people({"max_timestamp": 1700000000016, "timestamp_type": "CreateTime", "offset": 1700000000016})
    assert doc == {"max_timestamp": "2023-11-14T22:13:20.016Z", "timestamp_type": "CreateTime",
                   "offset": 1700000000016}


def test_dump_table_shows_iso_times_and_json_raw_milliseconds() -> None:
    raw = json.loads(runner.invoke(app, ["dump-segment", "--deep", "-f", "json", str(SEGMENT)]).stdout)
    first = raw["files"][0]["items"][0]
    assert isinstance(first["max_timestamp"], int) and isinstance(first["records"][0]["timestamp"], int)
    table = runner.invoke(app, ["dump-segment", "--deep", str(SEGMENT)]).stdout
    assert iso_time(first["max_timestamp"]) in table
    assert iso_time(first["records"][0]["timestamp"]) in table
    assert str(first["max_timestamp"]) not in table


def test_replay_table_shows_iso_times() -> None:
    doc = json.loads(runner.invoke(app, ["replay-producers", "-f", "json", str(DEMO)]).stdout)
    stamps = [p["last_timestamp"] for p in doc["producers"] if p["last_timestamp"] >= 0]
    assert stamps
    table = runner.invoke(app, ["replay-producers", str(DEMO)]).stdout
    assert all(iso_time(ts) in table for ts in stamps)
