"""The inside of a Slurm batch job of a campaign: take one run, leave its journal line.

Started by the job script :class:`perfcast.measure.slurm.SlurmExecutor` submits::

    python -m perfcast.measure.slurm_job CAMPAIGN.pickle RUN.json RESULT.json

It runs the run as the local executor would (:func:`perfcast.measure.campaign.execute_run`)
and writes its journal line to ``RESULT.json`` in one step, for the submitting process to
journal. A failing program is a run line with status ``failed``, not a failing job.
"""

from __future__ import annotations

import json
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path

from perfcast.io.campaign_results import RunKey
from perfcast.measure.campaign import execute_run
from perfcast.measure.slurm import write_atomically


def main(argv: Sequence[str] | None = None) -> int:
    """Take the run ``argv`` names; returns the exit status (0 once its line is written)."""
    campaign_file, run_file, result_file = map(Path, sys.argv[1:] if argv is None else argv)
    campaign = pickle.loads(campaign_file.read_bytes())
    run = json.loads(run_file.read_text())
    point = tuple(run["point"][name] for name in campaign.parameter_names)
    line = execute_run(campaign, RunKey(point, int(run["repetition"]), str(run["mode"])))
    write_atomically(result_file, json.dumps(line, allow_nan=False).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
