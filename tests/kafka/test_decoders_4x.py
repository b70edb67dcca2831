"""Each version's DumpLogSegments ``--share-group-state-decoder`` / ``--remote-log-metadata-decoder`` against
``kafkatool dump-segment -f kafka --kafka-version V --decoder ...``, byte for byte, on segments written here (see
:mod:`tests.kafka.decoders_4x`; no broker is started, only the tool)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.internal_4x import CASES, write_segment
from tests.kafka.decoders_4x import DECODERS, NOT_REPRODUCED, has_decoder, kafka_text, kafkatool_text, line


@pytest.mark.parametrize("case", sorted(CASES))
def test_decoder_text_equals_dumplogsegments(kafka_version: str, case: str, tmp_path: Path) -> None:
    decoder = CASES[case][0]
    if not has_decoder(kafka_version, decoder):
        pytest.skip(f"DumpLogSegments {kafka_version} has no {DECODERS[decoder][0]}")
    segment = write_segment(tmp_path, case)
    kafka = kafka_text(kafka_version, segment, decoder)
    assert "payload:" in kafka, kafka[:2000]
    ours = kafkatool_text(kafka_version, segment, decoder)
    why = NOT_REPRODUCED.get((case, line(kafka_version)))
    if why is not None:
        assert ours != kafka, f"{decoder} on {kafka_version} now matches: drop it from NOT_REPRODUCED"
        pytest.xfail(why)
    assert ours == kafka
