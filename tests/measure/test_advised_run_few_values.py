"""``perfcast run --advise`` on a campaign with too few values of a parameter for any model:
it first measures the point that makes a fit possible, within the budget, or says why not."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from campaign_helpers import compile_c, run_cli

import perfcast
from perfcast.analyze.advice import measured_core_hours
from perfcast.api import load_campaign, run_advised

#: Campaigns with advised rounds of a real program, end to end: a few seconds each.
pytestmark = pytest.mark.slow

#: Spends 2 ms * (1 + n*p/40) and reports it as region 'solve'.
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  double p = atof(argv[1]), n = atof(argv[2]);
  double seconds = 0.002 * (1.0 + n * p / 40.0);
  struct timespec t = {0, (long) (seconds * 1e9)};
  nanosleep(&t, NULL);
  const char *out = getenv("PERFCAST_OUTPUT");
  if (out) {
    FILE *f = fopen(out, "a");
    fprintf(f, "{\"kernel\": \"solve\", \"metric\": \"time\", \"value\": %.9g}\n", seconds);
    fclose(f);
  }
  return 0;
}
"""


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    """p measured at two values only: no model can be fitted to the campaign alone."""
    program = compile_c(tmp_path / "bin", "two", PROGRAM)
    path = tmp_path / "campaign.toml"
    path.write_text(
        f"command = [{json.dumps(str(program))}, '{{p}}', '{{n}}']\n"
        "repetitions = 2\nseed = 1\n"
        f"output = {json.dumps(str(tmp_path / 'out.csv'))}\n"
        "[parameters]\np = [1, 2]\nn = [10, 20, 40, 80]\n"
    )
    return path


def _points(experiment: perfcast.Experiment) -> set[tuple[float, ...]]:
    return {tuple(point) for point in experiment.points().tolist()}


def test_the_loop_first_measures_a_third_value_then_advises(campaign_file: Path):
    campaign = load_campaign(campaign_file)
    result, history, advice, stop = run_advised(campaign, at="p=16,n=80", budget=8)
    # Before: exit 2 at the first fit ("measured at 2 value(s) of 'p'").
    first = history[0]
    assert first.point == {"p": 4.0, "n": 10.0}  # the cheapest new value, on the lowest line
    assert first.note is not None and "'p' was measured at 2 value(s)" in first.note
    assert first.to_dict()["width_before"] is None and first.to_dict()["note"] == first.note
    assert all(r.note is None for r in history[1:]) and len(history) >= 2
    assert sum(r.runs for r in history) <= 8
    assert stop in ("budget", "no-advice", "goal", "rounds")
    assert advice.prediction > 0
    loaded = perfcast.load(campaign.results_path)
    assert _points(loaded) == _points(result.experiment)
    assert len({p for p, _ in _points(loaded)}) >= 3
    assert perfcast.fit(loaded)["solve"]["time"] is not None


def test_a_budget_in_core_hours_prices_the_new_value_by_what_was_measured(campaign_file: Path):
    campaign = load_campaign(campaign_file)
    result, history, _, _ = run_advised(campaign, at="p=16,n=80", budget="1h")
    first = history[0]
    assert first.point == {"p": 4.0, "n": 10.0} and first.note is not None
    # Estimated from p=2, n=10 (2 cores): grown by 4/2 in the value and 4/2 in the cores.
    measured = measured_core_hours(result.experiment, "time", {"p": 2, "n": 10}, 2)
    assert measured is not None and first.core_hours == pytest.approx(measured * 4, rel=1e-12)
    assert len(history) >= 2


def test_the_command_line_says_why_it_measures_the_new_value(campaign_file: Path, capsys):
    arguments = ["run", str(campaign_file), "--advise", "--at", "p=16,n=80", "--budget", "4"]
    assert run_cli(arguments) == 0
    err = capsys.readouterr().err
    assert "advised round 1: measured p=4,n=10 (2 runs); 'p' was measured at 2 value(s)" in err
    assert "advised round 2: measured" in err and "advice stopped:" in err
    assert "Traceback" not in err


def test_a_budget_too_small_for_the_new_value_is_one_message(campaign_file: Path, capsys):
    arguments = ["run", str(campaign_file), "--advise", "--at", "p=16,n=80", "--budget", "1e-9h"]
    assert run_cli(arguments) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "results.jsonl" in err and "'p' was measured at 2 value(s)" in err
    assert "more than the 1e-09 left of the budget" in err and err.endswith("; raise --budget\n")
    # Nothing measured is lost: the campaign's 8 points are in its journal and its output.
    campaign = load_campaign(campaign_file)
    assert len(_points(perfcast.load(campaign.results_path))) == 8
    assert len(pd.read_csv(campaign.output).groupby(["p", "n"])) == 8
    # Candidates that offer no new value of p: one message naming the parameter.
    arguments = ["run", str(campaign_file), "--advise", "--at", "p=16,n=80", "--budget", "4"]
    assert run_cli([*arguments, "--candidates", "p=1,2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "offer no new value of it; give --candidates" in err
