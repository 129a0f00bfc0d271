"""The results journal of ``perfcast run --advise`` read back: every advised round belongs to
the campaign it was advised for, so loading the journal gives what the campaign's output holds."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from campaign_helpers import compile_c, run_cli

import perfcast
from perfcast.api import load_campaign, run_advised, run_campaign

#: A kernel whose time grows like n*p (with a little noise), reported as a region library would.
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  double p = atof(argv[1]), n = atof(argv[2]);
  const char *out = getenv("PERFCAST_OUTPUT");
  srand((unsigned) getpid());
  double noise = 1.0 + 0.04 * ((double) rand() / RAND_MAX - 0.5);
  if (out) {
    FILE *f = fopen(out, "a");
    fprintf(f, "{\"kernel\": \"solve\", \"metric\": \"time\", \"value\": %.9g}\n",
            (0.5 + 0.01 * n * p) * noise);
    fclose(f);
  }
  return 0;
}
"""

#: Campaigns with advised rounds of a real program, end to end: a few seconds each.
pytestmark = pytest.mark.slow

CANDIDATES = "p=1..32*2,n=10,20,40,80"


def _campaign_file(tmp_path: Path, p_values: str = "1, 2, 4, 8") -> Path:
    program = compile_c(tmp_path / "bin", "grid", PROGRAM)
    path = tmp_path / "campaign.toml"
    path.write_text(
        f"command = [{json.dumps(str(program))}, '{{p}}', '{{n}}']\n"
        "repetitions = 2\nseed = 1\n"
        f"output = {json.dumps(str(tmp_path / 'out.csv'))}\n"
        f"[parameters]\np = [{p_values}]\nn = [10, 20, 40]\n"
    )
    return path


def _points(experiment: perfcast.Experiment) -> set[tuple[float, ...]]:
    return {tuple(point) for point in experiment.points().tolist()}


@pytest.fixture
def advised(tmp_path: Path):
    """A campaign on a 4 x 3 grid and the advised rounds ``run --advise`` took after it."""
    path = _campaign_file(tmp_path)
    campaign = load_campaign(path)
    result, history, _, _ = run_advised(campaign, at="p=64,n=80", budget=6, candidates=CANDIDATES)
    assert len(history) >= 2
    return path, campaign, result, history


def test_the_journal_loads_as_every_point_the_advised_campaign_measured(advised, capsys):
    path, campaign, result, history = advised
    loaded = perfcast.load(campaign.results_path)
    # Before: only the last advised point (each round's session replaced the scope).
    assert _points(loaded) == _points(result.experiment)
    assert len(_points(loaded)) == 12 + len(history)
    for advised_round in history:
        assert (advised_round.point["p"], advised_round.point["n"]) in _points(loaded)
    csv = pd.read_csv(campaign.output)
    assert len(loaded.to_frame()) == len(csv)
    assert loaded.metadata["runs"]["outside_campaign"] == 0
    assert loaded.metadata["campaign"]["parameters"] == {"p": [1, 2, 4, 8], "n": [10, 20, 40]}
    # `perfcast model` on the journal fits to every point (before: exit 2, one value of p).
    assert run_cli(["model", str(campaign.results_path), "--format", "json"]) == 0
    models = json.loads(capsys.readouterr().out)
    assert models and "solve" in json.dumps(models)
    fitted = perfcast.fit(loaded)
    assert fitted is not None


def test_an_ordinary_rerun_of_the_same_campaign_keeps_the_advised_rounds(advised):
    path, campaign, result, history = advised
    again = run_campaign(load_campaign(path))
    assert again.executed == 0
    assert _points(again.experiment) == _points(result.experiment)
    assert _points(perfcast.load(campaign.output)) == _points(result.experiment)


def test_a_rerun_with_other_points_leaves_the_stale_advised_rounds_out(advised, tmp_path):
    path, campaign, result, history = advised
    path.write_text(path.read_text().replace("p = [1, 2, 4, 8]", "p = [1, 2, 4]"))
    smaller = run_campaign(load_campaign(path))
    assert smaller.executed == 0
    # The advised rounds were advised for the 4 x 3 grid, not for this one: left out, counted.
    assert _points(smaller.experiment) == {(p, n) for p in (1, 2, 4) for n in (10, 20, 40)}
    loaded = perfcast.load(campaign.results_path)
    assert loaded.metadata["runs"]["outside_campaign"] == 2 * 3 + 2 * len(history)
    # Advising again for the smaller grid replays the earlier rounds into its results.
    again, history_again, _, _ = run_advised(
        load_campaign(path), at="p=64,n=80", budget=6, candidates=CANDIDATES
    )
    replayed = [r for r in history_again if r.resumed]
    assert len(replayed) == len(history)
    loaded = perfcast.load(campaign.results_path)
    assert _points(loaded) == _points(again.experiment)
    assert all((r.point["p"], r.point["n"]) in _points(loaded) for r in history_again)
