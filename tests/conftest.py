"""Shared test fixtures: paths to the spec's reference data (copied into the repo for CI)."""
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def examples_path() -> Path:
    return FIXTURES / "mobile_actions_examples.jsonl"


@pytest.fixture(autouse=True, scope="session")
def _run_key(tmp_path_factory):
    """Run folders are signed with a per-user key; tests use one of their own, never the user's."""
    import os

    from mobile_actions.hybrid.trace import RUN_KEY_ENV

    old = os.environ.get(RUN_KEY_ENV)
    os.environ[RUN_KEY_ENV] = str(tmp_path_factory.mktemp("config") / "run-key")
    yield
    if old is None:
        os.environ.pop(RUN_KEY_ENV, None)
    else:
        os.environ[RUN_KEY_ENV] = old


@pytest.fixture(autouse=True, scope="session")
def _prefix_store(tmp_path_factory):
    """Callers keep filled prompt prefixes on disk; tests keep theirs in a folder of their own."""
    import os

    from mobile_actions.runtime.prefix_store import ENV

    old = os.environ.get(ENV)
    os.environ[ENV] = str(tmp_path_factory.mktemp("prefix-kv"))
    yield
    if old is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = old


@pytest.fixture(autouse=True, scope="session")
def _asks_classifier():
    """The gate's asks-now classifier is built by `model prepare`: tests read with the word reader alone,
    whether or not this machine has prepared it (tests/test_asks.py builds and checks a classifier of its own)."""
    import os

    from mobile_actions.asks import LM_ENV, shipped

    old = os.environ.get(LM_ENV)
    os.environ[LM_ENV] = "off"
    shipped.cache_clear()
    yield
    shipped.cache_clear()
    if old is None:
        os.environ.pop(LM_ENV, None)
    else:
        os.environ[LM_ENV] = old


@pytest.fixture(autouse=True, scope="session")
def _session_store(tmp_path_factory):
    """Decoders keep their packed sessions on disk; tests keep theirs in a folder of their own."""
    import os

    from mobile_actions.runtime.session_store import ENV

    old = os.environ.get(ENV)
    os.environ[ENV] = str(tmp_path_factory.mktemp("sessions"))
    yield
    if old is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = old
