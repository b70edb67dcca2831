"""The native core's entry points under fuzz (issue 23): every function of ``kafkatool._native`` is named in
``tests.fuzz.native.NATIVE`` (one list), and a bounded run of each agrees with its Python reference and never
crashes. The long runs are ``python -m tests.fuzz --native``."""

from __future__ import annotations

import random

import pytest

from kafkatool.schema import native
from tests.fuzz.native import NATIVE, RUST_FUZZ, check, entry_points
from tests.fuzz.targets import mutate

core = native.core()
needs_core = pytest.mark.skipif(core is None, reason=f"native core not usable: {native.why_not()}")


def test_every_cargo_fuzz_target_is_named() -> None:
    """The cargo-fuzz crate's targets are the ones NATIVE names (each declared in its Cargo.toml)."""
    files = {p.stem for p in (RUST_FUZZ / "fuzz_targets").glob("*.rs")}
    named = {t.rust for t in NATIVE.values() if t.rust}
    assert files == named
    manifest = (RUST_FUZZ / "Cargo.toml").read_text()
    for name in files:
        assert f'name = "{name}"' in manifest and f'path = "fuzz_targets/{name}.rs"' in manifest


@needs_core
def test_every_entry_point_is_fuzzed() -> None:
    assert core is not None
    missing = [n for n in entry_points(core) if n not in NATIVE]
    assert not missing, f"add these kafkatool._native functions to tests.fuzz.native.NATIVE: {missing}"


@needs_core
@pytest.mark.parametrize("name", sorted(NATIVE))
def test_bounded_differential_run(name: str) -> None:
    assert core is not None
    if not hasattr(core, name):
        pytest.skip(f"kafkatool._native has no {name} in this build")
    target = NATIVE[name]
    pool = target.seeds() or (b"",)
    rnd = random.Random(f"pytest:{name}")
    for data in pool[:50]:
        check(core, target, data)
    for _ in range(300):
        check(core, target, mutate(rnd.choice(pool), rnd, pool))
