"""The live oracle's campaign: N seeded experiments per Kafka version, every kind in turn, one agreement table.

    python -m tests.kafka.campaign --versions all --experiments 40 --seed 7000 --json campaign.json

Experiment ``i`` of a version is of kind ``KINDS[i % len(KINDS)]`` (decoding, crash, producers, replication,
salvage: see :mod:`tests.kafka.salvage`, whose damage kind also follows the seed) with
seed ``SEED + i``, so any single experiment is re-run with ``--versions V --kinds K --seed S --experiments 1``.
It exits 1 on any disagreement (or an experiment that could not run), 0 when everything agreed. With
``KAFKATOOL_SAVE_CASES=1`` each disagreement is saved under ``fixtures/oracle/``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from pathlib import Path

from tests.kafka import versions
from tests.kafka.experiments import KINDS, Outcome


def run_one(version: str, kind: str, seed: int, keep: Path | None) -> Outcome:
    """One experiment in a fresh work dir (kept under ``keep`` when it disagreed, if given)."""
    module = importlib.import_module(f"tests.kafka.{kind}")
    workdir = Path(tempfile.mkdtemp(prefix=f"kafkatool-{kind}-{version}-{seed}-"))
    try:
        outcome = module.run(version, seed, workdir)
    except Exception as exc:  # an experiment that could not run is reported, never hidden
        outcome = Outcome(version, kind, seed)
        outcome.fields["ran"] = False
        outcome.disagreements.append(f"experiment failed to run: {type(exc).__name__}: {exc}".splitlines()[0])
        outcome.detail["traceback"] = traceback.format_exc()[-4000:]
    if keep is not None and not outcome.agree:
        target = keep / workdir.name
        shutil.copytree(workdir, target, symlinks=True, dirs_exist_ok=True)
        outcome.detail["kept"] = str(target)
    shutil.rmtree(workdir, ignore_errors=True)
    return outcome


def table(outcomes: list[Outcome]) -> str:
    """The agreement table: version, kind, runs, and agreed/compared per field."""
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.version, o.kind)].append(o)
    rows = [("version", "kind", "runs", "agree", "per field (agreed/compared)")]
    for (version, kind), group in sorted(groups.items(), key=lambda kv: (versions.VERSIONS.index(kv[0][0])
                                                                         if kv[0][0] in versions.VERSIONS else 99,
                                                                         KINDS.index(kv[0][1]))):
        fields: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in group:
            for name, ok in o.fields.items():
                fields[name][0] += ok
                fields[name][1] += 1
        per_field = ", ".join(f"{n} {a}/{c}" for n, (a, c) in sorted(fields.items()))
        rows.append((version, kind, str(len(group)), f"{sum(o.agree for o in group)}/{len(group)}", per_field))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for r in rows:
        lines.append("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the experiments, print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m tests.kafka.campaign", description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default="all", help="'all' or a comma list of " + ",".join(versions.VERSIONS))
    parser.add_argument("--experiments", type=int, default=len(KINDS), help="experiments per version")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first experiment")
    parser.add_argument("--kinds", default="all", help="'all' or a comma list of " + ",".join(KINDS))
    parser.add_argument("--json", type=Path, help="write every experiment's result here")
    parser.add_argument("--keep", type=Path, help="keep the work dir of each disagreeing experiment under this dir")
    args = parser.parse_args(argv)

    chosen = versions.VERSIONS if args.versions == "all" else tuple(v.strip() for v in args.versions.split(","))
    kinds = KINDS if args.kinds == "all" else tuple(k.strip() for k in args.kinds.split(","))
    bad = [v for v in chosen if v not in versions.VERSIONS] + [k for k in kinds if k not in KINDS]
    if bad or args.experiments < 1:
        parser.error(f"unknown version or kind {bad}" if bad else "--experiments must be at least 1")
    missing = [v for v in chosen if not versions.available(v)]
    if missing:
        print(f"Kafka {', '.join(missing)} not fetched: run `python -m tests.kafka.versions fetch`", file=sys.stderr)
        return 2

    outcomes: list[Outcome] = []
    t0 = time.monotonic()
    total = len(chosen) * args.experiments
    for version in chosen:
        for i in range(args.experiments):
            kind, seed = kinds[i % len(kinds)], args.seed + i
            started = time.monotonic()
            outcome = run_one(version, kind, seed, args.keep)
            outcome.detail["seconds"] = round(time.monotonic() - started, 1)
            outcomes.append(outcome)
            verdict = "agree" if outcome.agree else "DISAGREE"
            print(f"[{len(outcomes)}/{total}] Kafka {version} {kind} seed {seed}: {verdict} "
                  f"({outcome.detail['seconds']} s)", file=sys.stderr, flush=True)
            for line in outcome.disagreements[:5]:
                print(f"    {line}", file=sys.stderr)
    print(table(outcomes))
    disagreeing = [o for o in outcomes if not o.agree]
    print(f"\n{len(outcomes) - len(disagreeing)}/{len(outcomes)} experiments agree on every field "
          f"({time.monotonic() - t0:.0f} s)")
    if args.json:
        doc = {"versions": list(chosen), "seed": args.seed, "experiments": [o.to_json() for o in outcomes]}
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 1 if disagreeing else 0


if __name__ == "__main__":
    raise SystemExit(main())
