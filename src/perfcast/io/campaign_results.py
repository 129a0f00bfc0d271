"""Reader of a campaign's results journal (``<name>.results.jsonl``, written by ``perfcast run``).

The journal's first line is a ``session`` object with the campaign and its fingerprint; see
:mod:`perfcast.measure.journal`. Reading it gives the full experiment with the campaign's
metadata, also for a campaign that is still running or was killed.
"""

from __future__ import annotations

import json
from pathlib import Path

from perfcast.experiment import Experiment
from perfcast.measure.campaign import load_results

NAME = "perfcast-campaign"


def sniff(path: Path, head: str) -> bool:
    """True when the first line is a campaign ``session`` object."""
    first = head.split("\n", 1)[0]
    try:
        line = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(line, dict) and line.get("type") == "session" and "fingerprint" in line


def read(path: Path) -> Experiment:
    """The experiment of every successful run in the journal (see ``load_results``)."""
    return load_results(path)
