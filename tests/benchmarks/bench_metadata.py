"""Speed of KRaft metadata decoding and replay: ``python -m tests.benchmarks.bench_metadata [--repeat N]``.

Decodes every metadata record value of the corpus's controller log ``N`` times (records per second), then replays
a synthetic log of ``N`` copies of its batches with PartitionChangeRecords toggling one partition's ISR (records
per second of ``Replayer``). Reads ``../shared`` (``KAFKATOOL_SHARED``); not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from kafkatool.engine.metadata_image import Replayer
from kafkatool.reading.metadata_log import read_meta_batches
from kafkatool.schema.metadata_records import MetaBatch, MetadataRecord, MetaRecord, parse_metadata_record

SHARED = Path(os.environ.get("KAFKATOOL_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CASE = SHARED / "corpus" / "kraft-controller-metadata-clean" / "input" / "__cluster_metadata-0"


def main() -> None:
    """Print decode and replay rates."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    from kafkatool.reading.log import read_log

    entries, _ = read_log(CASE / "00000000000000000000.log", deep=True)
    values = [r.value for e in entries if not e.is_control for r in e.records or () if r.value is not None]
    start = time.perf_counter()
    for _ in range(args.repeat):
        for v in values:
            parse_metadata_record(v)
    elapsed = time.perf_counter() - start
    print(f"decode: {len(values) * args.repeat / elapsed:,.0f} records/s ({len(values)} distinct values)")

    batches, _ = read_meta_batches(CASE / "00000000000000000000.log", "bench")
    topic_id = next(r.record.fields["topicId"] for b in batches for r in b.records
                    if r.record and r.record.record_class == "TopicRecord")
    changes = [MetaBatch(1000 + i, 1000 + i, 3, i, False, (MetaRecord(1000 + i, MetadataRecord(
        1, 5, 1, "PartitionChangeRecord", {"partitionId": 0, "topicId": topic_id, "isr": [1, 2] if i % 2 else [1]})),),
        "bench", 0) for i in range(args.repeat * 10)]
    replayer = Replayer()
    start = time.perf_counter()
    replayer.replay_batches(batches)
    replayer.replay_batches(changes)
    elapsed = time.perf_counter() - start
    print(f"replay: {(len(changes) + sum(len(b.records) for b in batches)) / elapsed:,.0f} records/s")


if __name__ == "__main__":
    main()
