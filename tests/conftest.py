"""Shared test fixtures: paths to the spec's reference data (copied into the repo for CI)."""
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def examples_path() -> Path:
    return FIXTURES / "mobile_actions_examples.jsonl"
