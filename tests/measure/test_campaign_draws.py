"""Campaigns with ``runs = N``: random draws from ranges and categories, seeded, resumable,
and their bad settings (one message naming file and line, exit status 2)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from campaign_helpers import run_cli

from perfcast.core.errors import InputError
from perfcast.io.campaign_results import load_results, read_journal
from perfcast.measure.campaign import run_campaign
from perfcast.measure.draws import DrawRange, draw_points, parse_draw_space
from perfcast.measure.ranges import RangeError
from perfcast.measure.spec import load_campaign

DRAWN = """\
runs = {runs}
seed = {seed}
command = ["sh", "-c", "echo {{n}} {{x}} {{algo}} {{p}}"]

[parameters]
n = {{min = 1, max = 1000, log = true}}
x = {{min = 0.5, max = 2.5}}
algo = ["tree", "direct"]
p = [1, 2, 4]
"""


def _write(tmp_path: Path, text: str, name: str = "drawn.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _drawn(tmp_path: Path, runs: int = 40, seed: int = 3) -> Path:
    return _write(tmp_path, DRAWN.format(runs=runs, seed=seed))


def test_draws_stay_in_their_spaces_and_have_the_right_kinds(tmp_path: Path) -> None:
    campaign = load_campaign(_drawn(tmp_path, runs=200))
    points = campaign.points()
    assert len(points) == 200 == len(set(points))
    assert campaign.run_count == 200
    n, x, algo, p = zip(*points, strict=True)
    assert all(isinstance(v, int) and 1 <= v <= 1000 for v in n)
    assert all(isinstance(v, float) and 0.5 <= v <= 2.5 for v in x)
    assert set(algo) == {"tree", "direct"} and set(p) == {1, 2, 4}
    # log-uniform: about a third of the draws in each decade, not 90 % in the last one
    decades = [sum(lo <= v < 10 * lo for v in n) for lo in (1, 10, 100)]
    assert all(40 <= count <= 95 for count in decades), decades
    assert all(float(f"{v:.6g}") == v for v in x)  # what the command receives is recorded
    assert sorted(campaign.parameters["p"]) == [1, 2, 4]


def test_the_same_seed_draws_the_same_points_and_more_runs_extend_them(tmp_path: Path) -> None:
    first = load_campaign(_drawn(tmp_path, runs=20, seed=7)).points()
    again = load_campaign(_drawn(tmp_path, runs=20, seed=7)).points()
    longer = load_campaign(_drawn(tmp_path, runs=30, seed=7)).points()
    other = load_campaign(_drawn(tmp_path, runs=20, seed=8)).points()
    assert first == again == longer[:20]
    assert first != other


def test_a_drawn_campaign_resumes_and_a_larger_one_only_adds_runs(tmp_path: Path) -> None:
    campaign = load_campaign(_drawn(tmp_path, runs=6))
    result = run_campaign(campaign)
    assert (result.executed, result.skipped) == (6, 0)
    assert run_campaign(campaign).executed == 0
    bigger = load_campaign(_drawn(tmp_path, runs=9))
    result = run_campaign(bigger)
    assert (result.executed, result.skipped) == (3, 6)
    journal = read_journal(bigger.results_path)
    recorded = {tuple(line["point"].values()) for line in journal.runs.values()}
    assert recorded == set(bigger.points())
    # a category is no coordinate of the experiment: it names the kernel's variant
    experiment = load_results(bigger.results_path)
    assert list(experiment.parameter_names) == ["n", "x", "p"]
    kernels = {k for k in experiment.to_frame()["kernel"]}
    assert kernels <= {"sh[algo=tree]", "sh[algo=direct]"} and len(kernels) == 2
    assert result.run_table is None


def test_draw_range_bounds_and_integer_log_weights() -> None:
    import random

    rng = random.Random(0)
    small = DrawRange(1, 3, log=True)
    counts = {k: 0 for k in (1, 2, 3)}
    for _ in range(6000):
        counts[small.draw(rng)] += 1
    # weights log(2/1) : log(3/2) : log(4/3)
    total = math.log(4)
    for k, count in counts.items():
        assert count / 6000 == pytest.approx(math.log((k + 1) / k) / total, abs=0.03)
    assert parse_draw_space({"min": 2.0, "max": 3}) == DrawRange(2.0, 3, False)
    assert not DrawRange(2.0, 3).integral


def test_a_space_too_small_for_the_runs_is_refused() -> None:
    with pytest.raises(RangeError, match="only 3 distinct points"):
        draw_points({"p": (1, 2, 3)}, 4, seed=0)


@pytest.mark.parametrize(
    ("parameters", "extra", "message", "line"),
    [
        ("n = {min = 10, max = 1}", "", "min (10) must be less than max (1)", 5),
        ("n = {min = 0, max = 8, log = true}", "", "a log range must have min above 0", 5),
        ("n = {min = 1, max = 8, step = 2}", "", "unknown key 'step' in a range", 5),
        ("n = {min = 1}", "", "a range needs both min and max", 5),
        ('n = {min = "a", max = 3}', "", "min must be a number", 5),
        ('n = {min = 1, max = 3, log = "yes"}', "", "log must be true or false", 5),
        ('n = ["a", "a"]', "", "category 'a' appears twice", 5),
        ('n = ["a", ""]', "", "an empty category name", 5),
        ('n = ["a", 2]', "", "'a' is not a number", 5),
        ("n = [1, 2]", "", "only 2 distinct points", 1),
        ('n = ["a", "b", "c", "d", "e"]', "", "every parameter is a category", 4),
        ("n = [1, 2]\nm = [1, 2]", "max_runs = 2\n", "runs = 5 is more than max_runs = 2", 1),
    ],
)
def test_bad_draw_settings_name_file_and_line(
    tmp_path: Path, parameters: str, extra: str, message: str, line: int,
    capsys: pytest.CaptureFixture,
) -> None:  # fmt: skip
    text = f'runs = 5\n{extra}command = ["echo", "{{n}}"]\n\n[parameters]\n{parameters}\n'
    if extra:
        text = text.replace('"{n}"]', '"{n}", "{m}"]')
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        load_campaign(path)
    assert info.value.line == line
    assert run_cli(["run", str(path)]) == 2
    error = capsys.readouterr().err
    assert f"{path}:{info.value.line}" in error and message in error
    assert "Traceback" not in error


@pytest.mark.parametrize(
    ("runs", "message"), [("0", "runs must be a positive integer"), ('"ten"', "runs must be")]
)
def test_bad_runs_name_its_line(tmp_path: Path, runs: str, message: str) -> None:
    path = _write(tmp_path, f'command = ["echo", "{{n}}"]\nruns = {runs}\n[parameters]\nn = [1]\n')
    with pytest.raises(InputError, match=message) as info:
        load_campaign(path)
    assert info.value.line == 2


@pytest.mark.parametrize(
    ("value", "kind"), [("{min = 1, max = 4}", "a {min, max} range"), ('["a", "b"]', "categories")]
)
def test_grid_campaigns_refuse_what_only_draws_can_take(
    tmp_path: Path, value: str, kind: str
) -> None:
    path = _write(tmp_path, f'command = ["echo", "{{n}}"]\n[parameters]\nn = {value}\n')
    with pytest.raises(InputError, match="set runs = N") as info:
        load_campaign(path)
    assert kind in info.value.message and info.value.line == 3


def test_a_template_that_fails_on_a_later_draw_is_refused_before_running(tmp_path: Path) -> None:
    text = 'runs = 20\ncommand = ["echo", "{x:d}"]\n[parameters]\nx = {min = 0.5, max = 9.5}\n'
    with pytest.raises(InputError, match="a template cannot be filled in"):
        load_campaign(_write(tmp_path, text))


def test_runs_flag_overrides_and_advise_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _drawn(tmp_path, runs=4)
    assert run_cli(["run", str(path), "--runs", "3", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("3 of 3 runs to take")
    assert run_cli(["run", str(path), "--advise", "--at", "n=10", "--budget", "3"]) == 2
    assert "does not go with drawn runs" in capsys.readouterr().err


def test_the_features_metric_implies_timed_runs(tmp_path: Path, capsys) -> None:
    path = _drawn(tmp_path, runs=2)
    assert run_cli(["run", str(path), "--metric", "features", "--dry-run"]) == 0
    plan = capsys.readouterr().out.splitlines()
    assert plan[0].startswith("2 of 2 runs to take")
    assert all(line.strip().split(" [")[1].startswith("time]") for line in plan[1:])
    campaign = load_campaign(path, overrides={"metrics": ["features", "instructions"]})
    assert campaign.metrics == ("time", "instructions") and campaign.collect_features
    assert campaign.identity()["features"] is True
    assert "features" not in load_campaign(path).identity()


def test_the_run_table_follows_a_parquet_output(tmp_path: Path) -> None:
    path = _drawn(tmp_path, runs=2)
    assert load_campaign(path).run_table_path == tmp_path / "drawn.runs.csv"
    parquet = load_campaign(path, overrides={"output": "drawn.parquet"})
    assert parquet.run_table_path == tmp_path / "drawn.runs.parquet"


def test_a_range_wider_than_a_double_draws_inside_it() -> None:
    # high - low overflowed to inf: every draw was +-inf clamped to a bound, and a campaign of
    # runs = 8 was refused as "only 2 distinct points turned up"
    space = parse_draw_space({"min": -1.7e308, "max": 1.7e308})
    points = draw_points({"x": space}, 50, seed=3)
    values = [point[0] for point in points]
    assert len(set(values)) == 50
    assert all(math.isfinite(v) and -1.7e308 < v < 1.7e308 for v in values)
    assert min(values) < 0 < max(values)


@pytest.mark.parametrize("limit", ['"x"', "true", "0"])
def test_a_bad_max_runs_is_refused_before_drawing(
    tmp_path: Path, limit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with max_runs = "x" the runs were drawn before max_runs was checked: runs = 10**8
    # drew for minutes instead of answering at once
    import perfcast.measure.spec as spec

    def no_drawing(*_: object) -> None:
        raise AssertionError("points drawn before max_runs was checked")

    monkeypatch.setattr(spec, "draw_points", no_drawing)
    path = _write(
        tmp_path,
        f'command = ["echo", "{{n}}"]\nruns = 100000000\nmax_runs = {limit}\n'
        "[parameters]\nn = {min = 1.0, max = 9.0}\n",
    )
    with pytest.raises(InputError, match="max_runs must be a positive integer") as info:
        load_campaign(path)
    assert info.value.line == 3
