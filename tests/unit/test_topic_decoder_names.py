"""The decoder names the command line declares without importing the decoders (``DECODER_NAMES``) are exactly
the registry's once every decoder module is loaded."""

from kafkatool.schema.topic_records import DECODER_NAMES, decoders


def test_declared_names_are_the_registry() -> None:
    assert sorted(DECODER_NAMES) == sorted(decoders())
