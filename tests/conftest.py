"""Shared test fixtures: paths to the spec's reference data (copied into the repo for CI)."""
from pathlib import Path
from typing import Iterator

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def examples_path() -> Path:
    return FIXTURES / "mobile_actions_examples.jsonl"


def _environment(variable: str, value) -> Iterator[None]:
    """`variable` set to `value` while the tests run, and as it was afterwards."""
    import os

    old = os.environ.get(variable)
    os.environ[variable] = str(value)
    yield
    if old is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = old


@pytest.fixture(autouse=True, scope="session")
def _run_key(tmp_path_factory):
    """Run folders are signed with a per-user key; tests use one of their own, never the user's."""
    from mobile_actions.hybrid.trace import RUN_KEY_ENV

    yield from _environment(RUN_KEY_ENV, tmp_path_factory.mktemp("config") / "run-key")


@pytest.fixture(autouse=True, scope="session")
def _prefix_store(tmp_path_factory):
    """Callers keep filled prompt prefixes on disk; tests keep theirs in a folder of their own."""
    from mobile_actions.runtime.prefix_store import ENV

    yield from _environment(ENV, tmp_path_factory.mktemp("prefix-kv"))


@pytest.fixture(autouse=True, scope="session")
def _session_store(tmp_path_factory):
    """Decoders keep their packed sessions on disk; tests keep theirs in a folder of their own."""
    from mobile_actions.runtime.session_store import ENV

    yield from _environment(ENV, tmp_path_factory.mktemp("sessions"))


@pytest.fixture(autouse=True, scope="session")
def _asks_classifier():
    """The gate's asks-now classifier is built by `model prepare`: tests read with the word reader alone,
    whether or not this machine has prepared it (tests/test_asks.py builds and checks a classifier of its own)."""
    from mobile_actions.asks import LM_ENV, shipped

    shipped.cache_clear()
    yield from _environment(LM_ENV, "off")
    shipped.cache_clear()
