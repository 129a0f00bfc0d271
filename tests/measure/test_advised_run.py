"""``perfcast run --advise``: a real program measured at advised points until the budget is
spent, every round in the same results journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campaign_helpers import compile_c, run_cli

from perfcast.api import advice_stop_reasons, load_campaign, run_advised
from perfcast.io.campaign_results import read_journal

#: Reports a kernel whose time grows like n*p (with a little noise), as a region library would.
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


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    program = compile_c(tmp_path / "bin", "grid", PROGRAM)
    path = tmp_path / "campaign.toml"
    path.write_text(
        f"command = [{json.dumps(str(program))}, '{{p}}', '{{n}}']\n"
        "repetitions = 3\nseed = 1\n"
        f"output = {json.dumps(str(tmp_path / 'out.csv'))}\n"
        "[parameters]\np = [1, 2, 4, 8, 16]\nn = [10, 20, 40]\n"
    )
    return path


def test_advised_rounds_measure_new_points_within_the_budget(campaign_file: Path):
    campaign = load_campaign(campaign_file)
    result, history, advice, stop = run_advised(
        campaign, at="p=64,n=80", budget=12, candidates="p=1..32*2,n=10,20,40,80"
    )
    assert stop in advice_stop_reasons()
    assert 1 <= len(history) <= 4 and sum(r.runs for r in history) <= 12
    journal = read_journal(campaign.results_path)
    recorded = {(line["point"]["p"], line["point"]["n"]) for line in journal.runs.values()}
    in_experiment = {tuple(point) for point in result.experiment.points().tolist()}
    for advised in history:
        assert (advised.point["p"], advised.point["n"]) in recorded & in_experiment
    assert len(in_experiment) == 15 + len(history)
    assert result.experiment.kernel_count("time") == 2  # the program's wall time and 'solve'
    # The advised points lie beyond the campaign's grid.
    assert all(r.point["p"] == 32 or r.point["n"] == 80 for r in history)
    # The counts are of every round, the campaign's included (before: of the last round only,
    # so `perfcast run --advise` said "3 runs done, 0 already recorded" after 45 + 3*rounds).
    assert result.executed == 15 * 3 + 3 * len(history) and result.skipped == 0
    again, history_again, _, _ = run_advised(
        campaign, at="p=64,n=80", budget=3, candidates="p=1..32*2,n=10,20,40,80"
    )
    # Resuming replays the rounds from the journal: every run is counted once.
    assert again.skipped >= 15 * 3
    assert again.executed + again.skipped == 15 * 3 + 3 * len(history_again)


def test_command_line(campaign_file: Path, capsys):
    arguments = ["run", str(campaign_file), "--advise", "--at", "p=64,n=80", "--budget", "6"]
    assert run_cli([*arguments, "--candidates", "p=1..32*2,n=10,20,40,80"]) == 0
    err = capsys.readouterr().err
    assert "advised round 1: measured" in err and "advice stopped:" in err
    assert run_cli(["run", str(campaign_file), "--at", "p=64"]) == 2
    assert "--at: only with --advise" in capsys.readouterr().err
    assert run_cli(["run", str(campaign_file), "--advise", "--budget", "3"]) == 2
    assert "needs --at" in capsys.readouterr().err
