"""Under CI the Kafka-made reference material must be there; elsewhere its absence skips."""

from tests.conftest import corpus_cases, shared_dir


def test_shared_material_present() -> None:
    root = shared_dir()
    assert (root / "corpus").is_dir()
    assert (root / "vectors").is_dir()
    assert corpus_cases(), "no corpus case with an expected.json"
