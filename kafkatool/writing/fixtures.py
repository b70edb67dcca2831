"""Former home of the fixture writer and its recipes, split by issue 21: the writer is
:mod:`kafkatool.writing.fixture_writer`, the named scenarios :mod:`kafkatool.writing.fixture_recipes`.
Left: re-exports for commands/fixture.py (SCENARIOS, build_scenario, get_scenario) and tests/scan_support.py
(the writer's names), until those import the new modules."""

from kafkatool.writing.fixture_recipes import SCENARIOS, build_scenario, get_scenario  # re-export; issue 21
from kafkatool.writing.fixture_writer import LogDir, PartitionWriter, Producer, TopicConfig, text_value  # ditto

__all__ = ["SCENARIOS", "LogDir", "PartitionWriter", "Producer", "TopicConfig", "build_scenario", "get_scenario",
           "text_value"]
