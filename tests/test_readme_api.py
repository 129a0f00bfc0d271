"""The README's Python API examples run as written, from the repository's root."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.compile(r"^## Python API\n(.*?)^## ", re.S | re.M)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[str]:
    """The ``python`` code blocks of the README's "Python API" section, in order."""
    match = SECTION.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match, "the README has no '## Python API' section"
    return BLOCK.findall(match.group(1))


def test_the_section_has_examples():
    blocks = python_blocks()
    assert len(blocks) >= 3
    assert all("perfcast." in block for block in blocks)


def test_the_examples_run_in_order(monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for number, block in enumerate(python_blocks(), start=1):
        try:
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        except Exception as error:  # report which block failed, and how
            pytest.fail(f"README python block {number} failed: {error!r}")
    printed = capsys.readouterr().out
    assert "<Experiment 'examples/data/mpi_scaling_cali': 46 kernels" in printed
    assert "modeler pmnf>" in printed
    assert "candidates: must be an integer from 1 to 42 or None, not -1" in printed
    assert "<html" in str(namespace["html"]).lower()
