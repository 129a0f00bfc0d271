"""Advice on a perfcast campaign prices a point by the whole program's wall time, the run's
cost, not by that time plus the regions the program ran inside it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from campaign_helpers import compile_c

import perfcast
from perfcast.analyze.advice import measured_core_hours
from perfcast.api import load_campaign, run_campaign

#: Sleeps 10 ms * (1 + n*p/40) in region 'solve', half of it in 'halo' inside 'solve', as an
#: instrumented code reports nested regions.
NESTED = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void pause_for(double seconds) {
  struct timespec t = {(time_t) seconds, (long) ((seconds - (time_t) seconds) * 1e9)};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  double p = atof(argv[1]), n = atof(argv[2]);
  double solve = 0.01 * (1.0 + n * p / 40.0);
  pause_for(solve);
  const char *out = getenv("PERFCAST_OUTPUT");
  if (out) {
    FILE *f = fopen(out, "a");
    fprintf(f, "{\"kernel\": \"solve\", \"metric\": \"time\", \"value\": %.9g}\n", solve);
    fprintf(f, "{\"kernel\": \"solve.halo\", \"metric\": \"time\", \"value\": %.9g}\n",
            solve / 2);
    fclose(f);
  }
  return 0;
}
"""


@pytest.fixture
def measured(tmp_path: Path) -> perfcast.Experiment:
    program = compile_c(tmp_path / "bin", "nested", NESTED)
    path = tmp_path / "campaign.toml"
    path.write_text(
        f"command = [{json.dumps(str(program))}, '{{p}}', '{{n}}']\n"
        "repetitions = 2\nseed = 1\n"
        f"output = {json.dumps(str(tmp_path / 'out.csv'))}\n"
        "[parameters]\np = [1, 2, 4, 8]\nn = [10, 20, 40]\n"
    )
    campaign = load_campaign(path)
    run_campaign(campaign)
    return perfcast.load(campaign.results_path)


def _mean(experiment: perfcast.Experiment, kernel: str, p: float, n: float) -> float:
    frame = experiment.to_frame()
    rows = frame[(frame["kernel"] == kernel) & (frame["p"] == p) & (frame["n"] == n)]
    return float(rows["value"].mean())


def test_a_measured_point_costs_the_programs_wall_time(measured: perfcast.Experiment):
    assert measured.metadata["program_kernel"] == "nested"
    wall = _mean(measured, "nested", 8, 40)
    inside = _mean(measured, "solve", 8, 40) + _mean(measured, "solve.halo", 8, 40)
    assert wall >= _mean(measured, "solve", 8, 40)  # the regions ran inside the program
    taken = measured_core_hours(measured, "time", {"p": 8, "n": 40}, 2)
    # Before: (wall + solve + halo) * 8 cores (p, by its name) * 2 runs, about 2.4 times
    # what the runs took.
    assert taken == pytest.approx(wall * 8 * 2 / 3600, rel=1e-12)
    assert taken < (wall + inside) * 8 * 2 / 3600 * 0.6


def test_the_advice_predicts_and_prices_the_programs_wall_time(measured: perfcast.Experiment):
    advice = perfcast.advise(measured, at="p=64,n=80", budget="1h", candidates="p=16,n=10,80")
    program = perfcast.fit(measured)["nested"]["time"]
    expected = float(program.evaluate(np.array([[64.0, 80.0]]))[0])
    # Before: the sum of the program's time and its regions' (about 2.5 times as much).
    assert advice.prediction == pytest.approx(expected, rel=1e-9)
    assert advice.suggestions
    for suggestion in advice.suggestions:
        point = np.array([[suggestion.point["p"], suggestion.point["n"]]])
        cores = suggestion.point["p"]  # p holds the processes, by its name
        price = float(program.evaluate(point)[0]) * cores * suggestion.runs / 3600
        assert suggestion.core_hours == pytest.approx(max(price, 0.0), rel=1e-9)
