"""Markdown output shared by the benchmarks: tables, figures and the reproducing command."""

from __future__ import annotations

import os
import platform
import shlex
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

TOOL_LABELS = {
    "perfcast": "perfcast",
    "extrap": "Extra-P",
    "extrap-neg": "Extra-P (neg. exp.)",
    "extrap-median": "Extra-P (median)",
    "oracle": "oracle",
}


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def percent(share: float) -> str:
    """``0.931`` as ``93.1 %``."""
    return f"{100 * share:.1f} %"


def error(value: float) -> str:
    """A relative error in percent with three significant digits (``inf`` stays ``inf``)."""
    return "inf" if value == float("inf") else f"{100 * value:.3g} %"


def command_line(module: str, argv: Sequence[str] | None = None) -> str:
    """The command that reproduces this run (``argv`` defaults to the process's arguments)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    return shlex.join(["python", "-m", module, *arguments])


def preamble(module: str, seed: int, argv: Sequence[str] | None = None) -> str:
    """Where, when and how a run was made."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Command: `{command_line(module, argv)}` (seed {seed})\n\n"
        f"Run {stamp} on {platform.node() or 'unknown host'}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}."
    )
