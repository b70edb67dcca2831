"""pytest plumbing for the live oracle: one Kafka version per parameter, skipped when its jars are not fetched
(a failure under CI, where ``.ci/run`` fetches them), and a work dir per test that is removed afterwards."""

from __future__ import annotations

import os

import pytest

from tests.kafka import versions


def require_version(version: str) -> str:
    """``version`` if its jars are fetched; skip (fail under CI) otherwise."""
    if not versions.available(version):
        message = f"Kafka {version} jars not fetched (python -m tests.kafka.versions fetch)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI is set, so the live oracle must run")
        pytest.skip(message)
    try:
        versions.java_binary()
    except versions.JarsMissing as exc:
        pytest.fail(str(exc)) if os.environ.get("CI") else pytest.skip(str(exc))
    return version


@pytest.fixture(params=versions.selected_versions())
def kafka_version(request: pytest.FixtureRequest) -> str:
    """Each supported Kafka version in turn."""
    return require_version(request.param)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/kafka as ``live`` (``-m "not live"`` deselects the real brokers)."""
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.live)
