"""DumpLogSegments' ``--share-group-state-decoder`` and ``--remote-log-metadata-decoder`` against
``kafkatool dump-segment -f kafka --decoder share-group-state|remote-log-metadata``, on segments written here
byte by byte (``tests/internal_4x.py``): no broker, only each version's DumpLogSegments from the jars.

``python -m tests.kafka.decoders_4x`` (after ``python -m tests.kafka.versions fetch``) saves one corpus case per
segment (``tests.internal_4x.CASES``) under ``fixtures/kafka-4x/decoders-<case>/``: the segment under
``input/<partition>/`` and, per Kafka version whose DumpLogSegments has the option, ``dump/<version>.txt`` (its
text after the ``Dumping`` line), and ``expected.json`` (the flag, the versions, and whether kafkatool reproduces
each). ``tests/test_decoders_4x.py`` checks the saved text without Kafka.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.internal_4x import CASES, write_segment
from tests.kafka import versions
from tests.kafka.decoding import kafka_dump, split_dumps

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "kafka-4x"

#: kafkatool's decoder name -> (DumpLogSegments' option, the first release line whose tool has it).
DECODERS: dict[str, tuple[str, tuple[int, int]]] = {
    "share-group-state": ("--share-group-state-decoder", (4, 0)),
    "remote-log-metadata": ("--remote-log-metadata-decoder", (3, 9)),
    "group-coordinator": ("--offsets-decoder", (3, 9)),
}

#: (case, release line) pairs kafkatool does not reproduce, and why (checked to still differ); none since issue 22.
NOT_REPRODUCED: dict[tuple[str, str], str] = {}


def line(version: str) -> str:
    """``4.0.2`` -> ``4.0``."""
    return ".".join(version.split(".")[:2])


def has_decoder(version: str, decoder: str) -> bool:
    """Whether ``version``'s DumpLogSegments has ``decoder``'s option."""
    major, minor = (int(x) for x in line(version).split("."))
    return (major, minor) >= DECODERS[decoder][1]


def kafka_text(version: str, path: Path, decoder: str) -> str:
    """DumpLogSegments of ``version`` with the decoder's option over ``path``: the text after ``Dumping``."""
    return split_dumps(kafka_dump(version, [path], (DECODERS[decoder][0],)))[str(path)]


def kafkatool_text(version: str, path: Path, decoder: str) -> str:
    """``kafkatool dump-segment -f kafka --kafka-version V --decoder D`` over ``path``: the text after ``Dumping``."""
    cmd = [sys.executable, "-m", "kafkatool", "dump-segment", "-f", "kafka", "--kafka-version", version,
           "--decoder", decoder, str(path)]
    proc = subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, "COLUMNS": "200"}, check=False,
                          cwd=REPO)
    return split_dumps(proc.stdout.decode()).get(str(path), proc.stdout.decode() + proc.stderr.decode())


def save_case(name: str) -> Path:
    """Write the case's segment, dump it with every fetched version that has its decoder, save the case."""
    decoder, partition, _ = CASES[name]
    case = CORPUS / f"decoders-{name}"
    if case.exists():
        shutil.rmtree(case)
    segment = write_segment(case / "input", name)
    dumps = {}
    for version in versions.VERSIONS:
        if not has_decoder(version, decoder) or not versions.available(version):
            continue
        text = kafka_text(version, segment, decoder)
        rel = f"dump/{version}.txt"
        (case / rel).parent.mkdir(parents=True, exist_ok=True)
        (case / rel).write_text(text)
        why = NOT_REPRODUCED.get((name, line(version)))
        dumps[version] = {"dump": rel, "reproduced": why is None, **({"why": why} if why else {})}
    doc = {"case": case.name, "kind": "decoding", "segment": name, "decoder": decoder, "partition": partition,
           "dumpLogSegmentsFlags": [DECODERS[decoder][0]],
           "description": f"tests/internal_4x.py's {name} segment, dumped by each version's DumpLogSegments that "
                          "has the option", "versions": dumps}
    (case / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")
    return case


def main(argv: list[str]) -> int:
    """Save the cases named (all by default)."""
    for name in argv or list(CASES):
        print(save_case(name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
