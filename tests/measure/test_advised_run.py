"""``perfcast run --advise``: a real program measured at advised points until the budget is
spent, every round in the same results journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campaign_helpers import compile_c, run_cli

from perfcast.analyze.advice import measured_core_hours
from perfcast.api import advice_stop_reasons, load_campaign, run_advised
from perfcast.io.campaign_results import read_journal

#: Seconds of work per unit of the simulated cost ``0.5 + 0.01*n*p`` (p=16, n=40 takes 0.14 s):
#: the program really spends the time its region reports, so the whole program's wall time
#: (what a run costs, and what the advice prices) holds the region, as in a real code.
SCALE = 0.02

#: Reports a kernel whose time grows like n*p (with a little noise), as a region library would,
#: after spending that time.
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  double p = atof(argv[1]), n = atof(argv[2]);
  const char *out = getenv("PERFCAST_OUTPUT");
  srand((unsigned) getpid());
  double noise = 1.0 + 0.04 * ((double) rand() / RAND_MAX - 0.5);
  double seconds = SCALE * (0.5 + 0.01 * n * p) * noise;
  struct timespec pause = {(time_t) seconds, (long) ((seconds - (time_t) seconds) * 1e9)};
  nanosleep(&pause, NULL);
  if (out) {
    FILE *f = fopen(out, "a");
    fprintf(f, "{\"kernel\": \"solve\", \"metric\": \"time\", \"value\": %.9g}\n", seconds);
    fclose(f);
  }
  return 0;
}
""".replace("SCALE", repr(SCALE))


def _write_campaign(tmp_path: Path, name: str, source: str) -> Path:
    """A campaign running ``source`` (built as ``name``) over p = 1..16, n = 10..40."""
    program = compile_c(tmp_path / "bin", name, source)
    path = tmp_path / "campaign.toml"
    path.write_text(
        f"command = [{json.dumps(str(program))}, '{{p}}', '{{n}}']\n"
        "repetitions = 3\nseed = 1\n"
        f"output = {json.dumps(str(tmp_path / 'out.csv'))}\n"
        "[parameters]\np = [1, 2, 4, 8, 16]\nn = [10, 20, 40]\n"
    )
    return path


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    return _write_campaign(tmp_path, "grid", PROGRAM)


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


def _advised_runs(campaign) -> dict[tuple[float, float], int]:
    """Run lines in the journal per point outside the campaign's grid."""
    own = set(campaign.points())
    counts: dict[tuple[float, float], int] = {}
    for line in read_journal(campaign.results_path).runs.values():
        point = (line["point"]["p"], line["point"]["n"])
        if point not in own:
            counts[point] = counts.get(point, 0) + 1
    return counts


def test_a_resumed_loop_counts_the_rounds_an_earlier_loop_took(campaign_file: Path):
    # An earlier loop (other candidates: its advice differs from the resumed loop's) measured
    # p=32, n=10 and stopped. Before the fix the resumed loop no longer saw that point (the
    # journal's latest session is the campaign's again), spent its whole budget on two new
    # rounds (9 advised runs against a budget of 6) and modeled without the point.
    campaign = load_campaign(campaign_file)
    run_advised(campaign, at="p=64,n=80", budget=3, candidates="p=32,n=10")
    result, history, _, stop = run_advised(
        campaign, at="p=64,n=80", budget=6, candidates="p=1..32*2,n=10,20,40,80"
    )
    assert [(r.point["p"], r.point["n"], r.resumed) for r in history[:1]] == [(32, 10, True)]
    assert [r.resumed for r in history[1:]] == [False] and stop == "budget"
    assert sum(_advised_runs(campaign).values()) == 6
    in_experiment = {tuple(point) for point in result.experiment.points().tolist()}
    assert (32, 10) in in_experiment and len(in_experiment) == 15 + 2
    assert history[0].to_dict()["resumed"] is True


def test_a_loop_killed_in_a_round_completes_that_round_and_spends_no_more(
    campaign_file: Path, capsys
):
    arguments = ["run", str(campaign_file), "--advise", "--at", "p=64,n=80", "--budget", "6"]
    arguments += ["--candidates", "p=1..32*2,n=10,20,40,80"]
    assert run_cli(arguments) == 0
    campaign = load_campaign(campaign_file)
    whole = _advised_runs(campaign)
    assert sum(whole.values()) == 6
    # The state a kill -9 after the first run of the second round leaves: the append-only
    # journal without its last two run lines.
    journal = campaign.results_path
    lines = journal.read_text().splitlines(keepends=True)
    assert all(json.loads(line)["type"] == "run" for line in lines[-2:])
    journal.write_text("".join(lines[:-2]))
    capsys.readouterr()
    assert run_cli(arguments) == 0
    err = capsys.readouterr().err
    assert err.count("taken before the resume") == 2 and "advised round 3" not in err
    assert "2 runs done, 49 already recorded" in err  # the two lost runs, taken again
    assert _advised_runs(campaign) == whole


#: Like PROGRAM, but 20 times slower from p=32 on (beyond the campaign's grid): the models
#: fitted to p=1..16 price a point at p=32 far below what its runs take.
SLOWER_BEYOND = PROGRAM.replace("* noise;", "* noise * (p >= 32 ? 20.0 : 1.0);")


def test_a_round_counts_the_core_hours_its_runs_took_not_the_models_price(tmp_path: Path):
    campaign = load_campaign(_write_campaign(tmp_path, "slower", SLOWER_BEYOND))
    # p=32, n=10: priced about 3 runs * 32 cores * 3.7 SCALE s = 0.1 SCALE core-hours; it
    # takes 20 times that.
    budget = 0.5 * SCALE
    result, history, _, stop = run_advised(
        campaign, at="p=64,n=80", budget=f"{budget!r}h", candidates="p=32,n=10,20,40"
    )
    assert len(history) == 1 and history[0].core_hours < budget
    taken = measured_core_hours(result.experiment, "time", history[0].point, history[0].runs)
    assert taken is not None and taken > 2 * budget
    # Before, the loop counted the price (0.1 of 0.5 core-hours) and went on while any point
    # looked affordable, saying in the end that no point helps; now it says the budget is spent.
    assert stop == "budget"


#: Like PROGRAM with noise of ±25 %: the models' cost intervals are wide.
NOISY = PROGRAM.replace("0.04 *", "0.5 *")


def test_no_round_starts_whose_upper_price_exceeds_the_budget_left(tmp_path: Path):
    campaign = load_campaign(_write_campaign(tmp_path, "noisy", NOISY))
    budget = 0.5 * SCALE
    candidates = "p=1..32*2,n=10,20,40,80"
    result, history, advice, stop = run_advised(
        campaign, at="p=64,n=80", budget=f"{budget!r}h", candidates=candidates
    )
    assert history
    spent = 0.0
    for advised in history:
        # Before a round: what earlier rounds took (measured) and this one's upper price fit.
        low, high = advised.core_hours_interval
        assert low <= advised.core_hours <= high
        assert spent + high <= budget * (1 + 1e-9)
        taken = measured_core_hours(result.experiment, "time", advised.point, advised.runs)
        assert taken is not None
        spent += taken
    assert spent <= budget
    # The loop stopped because nothing left fits at its upper price (or the budget is gone).
    assert stop in ("no-advice", "budget")
    left = budget - spent
    measured = {tuple(p) for p in result.experiment.points().tolist()}
    for s in advice.suggestions:
        if (s.point["p"], s.point["n"]) not in measured:
            assert s.core_hours_interval[1] > left * (1 + 1e-9)
