"""Where the Extra-P test files live (copies in ``tests/data``)."""

from __future__ import annotations

from pathlib import Path

import pytest

EXTRAP_DATA = Path(__file__).resolve().parents[1] / "data" / "extrap"


@pytest.fixture
def extrap_data() -> Path:
    """The folder of Extra-P's own test inputs (text, json, jsonlines, talpas, cubeset)."""
    return EXTRAP_DATA
