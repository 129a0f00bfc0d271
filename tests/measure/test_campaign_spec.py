"""Campaign specifications: ranges, validation before anything runs, run order."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pytest
from campaign_helpers import run_cli

from perfcast.commands import run as run_command
from perfcast.core.errors import InputError
from perfcast.io.campaign_results import RunKey
from perfcast.measure.campaign import pending_runs
from perfcast.measure.ranges import RangeError, expand_range, parse_values
from perfcast.measure.schedule import plan_runs
from perfcast.measure.spec import (
    MAX_FIELD_WIDTH,
    MAX_RUNS,
    CampaignWarning,
    campaign_from_mapping,
    load_campaign,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2..64 *2", [2, 4, 8, 16, 32, 64]),
        ("64..512*2", [64, 128, 256, 512]),
        ("2..100 *3", [2, 6, 18, 54]),
        ("10..50 +10", [10, 20, 30, 40, 50]),
        ("10..45+10", [10, 20, 30, 40]),
        ("1..4", [1, 2, 3, 4]),
        ("5..5", [5]),
        ("0.5..2 *2", [0.5, 1.0, 2.0]),
        ("0.1..0.3 +0.1", [0.1, 0.2, 0.3]),
    ],
)
def test_ranges_expand(text: str, expected: list) -> None:
    values = expand_range(text)
    assert values == pytest.approx(expected)
    assert all(type(v) is type(e) for v, e in zip(values, expected, strict=True))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("64..2 *2", "empty range"),
        ("8..1", "empty range"),
        ("1..x", "bad range"),
        ("1..4..8", "bad range"),
        ("2..8 *1", "factor must be greater than 1"),
        ("0..8 *2", "must start above 0"),
        ("1..4 +0", "step must be positive"),
        ("1..4 -1", "bad range"),
        ([], "empty value list"),
        ("", "empty value list"),
        (["a", 2], "'a' is not a number"),
        ([True], "True is not a number"),
        ("1,2,x", "'x' is not a number"),
        ([1, 2, 1], "value 1 appears twice"),
        ({"a": 1}, "expected a list of numbers or a range string"),
    ],
)
def test_bad_values_are_rejected(raw: object, message: str) -> None:
    with pytest.raises(RangeError, match=message):
        parse_values(raw)


def test_value_lists() -> None:
    assert parse_values("1, 2,4") == [1, 2, 4]
    assert parse_values([64, 128.5]) == [64, 128.5]


def write_campaign(directory: Path, body: str, name: str = "c.toml") -> Path:
    path = directory / name
    path.write_text(body)
    return path


def test_campaign_file_is_loaded(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    path = write_campaign(
        tmp_path,
        'command = "echo {n} {m}"\n'
        'launcher = "env P={p}"\n'
        "repetitions = 3\ntimeout = 2.5\nseed = 7\n"
        'workdir = "bin"\nmetrics = ["time", "cache"]\n'
        '[parameters]\nn = [64, 128]\nm = "1..3"\np = "1..4 *2"\n'
        '[environment]\nOMP_NUM_THREADS = "{m}"\nFIXED = 1\n'
        '[cache]\nD1 = "1024,2,64"\n',
    )
    campaign = load_campaign(path)
    assert campaign.parameters == {"n": [64, 128], "m": [1, 2, 3], "p": [1, 2, 4]}
    assert campaign.command == ("echo", "{n}", "{m}")
    assert campaign.launcher == ("env", "P={p}")
    assert (campaign.repetitions, campaign.timeout, campaign.seed) == (3, 2.5, 7)
    assert campaign.workdir == (tmp_path / "bin").resolve()
    assert campaign.metrics == ("time", "cache")
    assert campaign.cache["D1"] == "1024,2,64" and campaign.cache["LL"] == "8388608,16,64"
    assert campaign.output == (tmp_path / "c.csv").resolve()
    assert campaign.results_path == (tmp_path / "c.results.jsonl").resolve()
    assert len(campaign.points()) == 2 * 3 * 3
    launcher, command, env = campaign.render((128, 2, 4))
    assert launcher == ["env", "P=4"]
    assert command == ["echo", "128", "2"]
    assert env == {"OMP_NUM_THREADS": "2", "FIXED": "1"}
    assert campaign.program_kernel == "echo"


def test_fingerprint_ignores_counts_but_not_the_command(tmp_path: Path) -> None:
    base = "[parameters]\nn = [1, 2]\n"
    first = load_campaign(write_campaign(tmp_path, f'command = "echo {{n}}"\n{base}'))
    more = load_campaign(
        write_campaign(tmp_path, f'command = "echo {{n}}"\nrepetitions = 5\n{base}', "d.toml")
    )
    other = load_campaign(write_campaign(tmp_path, f'command = "echo x{{n}}"\n{base}', "e.toml"))
    assert first.fingerprint == more.fingerprint
    assert first.fingerprint != other.fingerprint


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ('command = "echo {q}"\n[parameters]\nn = [1]\n', r"uses \{q\} but no such parameter", 1),
        (
            'command = "echo {n}"\nlauncher = "env {p}"\n[parameters]\nn = [1]\n',
            r"launcher uses \{p\}",
            2,
        ),
        ('command = "echo {n}"\n[parameters]\nn = "64..2 *2"\n', "parameter 'n': empty range", 3),
        ('command = "echo {n}"\n[parameters]\nn = []\n', "parameter 'n': empty value list", 3),
        ('command = "echo {n}"\n[parameters]\nn = "1..9 /2"\n', "parameter 'n': bad range", 3),
        (
            'command = "./no-such-program {n}"\n[parameters]\nn = [1]\n',
            "program './no-such-program' not found",
            1,
        ),
        (
            'command = "no-such-program-xyz {n}"\n[parameters]\nn = [1]\n',
            "program 'no-such-program-xyz' not found on PATH",
            1,
        ),
        (
            'command = "echo {n}"\nlauncher = "no-such-launcher"\n[parameters]\nn = [1]\n',
            "launcher: program 'no-such-launcher' not found",
            2,
        ),
        ('command = "echo {n}"\n[parameters]\nn = [1, 2\n', "not valid TOML: Unclosed array", 3),
        ('command = "echo {n}\n[parameters]\nn = [1]\n', "not valid TOML", 1),
        ('command = "echo {n}"\nrepeats = 3\n[parameters]\nn = [1]\n', "unknown key 'repeats'", 2),
        ('command = "echo {n}"\nrepetitions = 0\n[parameters]\nn = [1]\n', "repetitions", 2),
        ('command = "echo {n}"\ntimeout = -1\n[parameters]\nn = [1]\n', "timeout", 2),
        ('command = "echo {n}"\nmetrics = ["flops"]\n[parameters]\nn = [1]\n', "flops", 2),
        (
            'command = "echo {n}"\n[parameters]\nn = [1]\n[cache]\nD1 = "1000,2,64"\n',
            "cache D1",
            5,
        ),
        ('command = "echo {n}"\n[parameters]\nn = [1]\n[cache]\nL2 = "1024,2,64"\n', "L2", 5),
        (
            'command = "echo {n}"\n[parameters]\nn = [1]\n[environment]\nX = true\n',
            "must map names to strings",
            4,
        ),
        ('command = "echo {n}"\n[parameters]\n', "defines no \\[parameters\\]", 2),
        ('command = "echo {n}"\nworkdir = "nowhere"\n[parameters]\nn = [1]\n', "nowhere", 2),
        (
            'command = "echo {n}"\noutput = "x.xyz"\n[parameters]\nn = [1]\n',
            "output 'x.xyz': cannot tell the output format from the file name",
            2,
        ),
        ('command = "echo {n}"\noutput = "no/x.csv"\n[parameters]\nn = [1]\n', "output dir", 2),
        ('command = "echo {n"\n[parameters]\nn = [1]\n', "bad template", 1),
        ('command = ""\n[parameters]\nn = [1]\n', "no command", 1),
        ('command = "echo"\n', "no \\[parameters\\]", None),
        ('command = "echo {n}"\n[parameters]\n"n-1" = [1]\n', "not an identifier", 3),
        ('command = "echo {n:d}"\n[parameters]\nn = [1.5]\n', "cannot be filled in", 1),
        ('command = "echo {n:99999999999d}"\n[parameters]\nn = [1]\n', "99999999999, more", 1),
        ('command = "echo"\nlauncher = "env {n:.2000f}"\n[parameters]\nn = [1]\n', "2000", 2),
        ('command = "echo {n:{n}d}"\n[parameters]\nn = [1]\n', "nested field", 1),
        (
            'command = "echo {n} {m}"\n[parameters]\nn = "1..1000"\nm = "1..1000"\n',
            r"1000000 runs \(1000 x 1000 points x 1 repetitions x 1 metric modes\), more than "
            "max_runs = 100000",
            2,
        ),
        (
            'command = "echo {n}"\nmax_runs = 10\nrepetitions = 3\n[parameters]\nn = "1..4"\n',
            "12 runs",
            2,
        ),
        ('command = "echo {n}"\nmax_runs = 0\n[parameters]\nn = [1]\n', "max_runs must be", 2),
    ],
)
def test_bad_campaigns_are_rejected_with_file_and_line(
    tmp_path: Path, body: str, message: str, line: int | None
) -> None:
    path = write_campaign(tmp_path, body)
    with pytest.raises(InputError, match=message) as caught:
        load_campaign(path)
    assert caught.value.source == str(path)
    assert caught.value.line == line
    assert not (tmp_path / "c.results.jsonl").exists()


@pytest.mark.parametrize("name", ["x.CSV", "x.parquet", "x.perfcast.json", "x.jsonl", "x.txt"])
def test_output_may_have_any_suffix_a_writer_takes(tmp_path: Path, name: str) -> None:
    path = write_campaign(
        tmp_path, f'command = "echo {{n}}"\noutput = "{name}"\n[parameters]\nn = [1]\n'
    )
    assert load_campaign(path).output == (tmp_path / name).resolve()


def test_bare_program_name_in_workdir_gets_a_hint(tmp_path: Path) -> None:
    program = tmp_path / "app"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    path = write_campaign(tmp_path, 'command = "app {n}"\n[parameters]\nn = [1]\n')
    with pytest.raises(InputError, match="not found on PATH .*write './app'"):
        load_campaign(path)
    path.write_text('command = "./app {n}"\n[parameters]\nn = [1]\n')
    assert load_campaign(path).program_kernel == "app"


def test_unused_parameter_is_a_warning(tmp_path: Path) -> None:
    path = write_campaign(tmp_path, 'command = "echo {n}"\n[parameters]\nn = [1]\nq = [1, 2]\n')
    with pytest.warns(CampaignWarning, match="parameter 'q' is not used"):
        load_campaign(path)


def test_parameter_used_only_in_environment_is_used(tmp_path: Path) -> None:
    path = write_campaign(
        tmp_path, 'command = "echo"\n[parameters]\nt = [1, 2]\n[environment]\nT = "{t}"\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_campaign(path).parameters == {"t": [1, 2]}


def test_overrides_replace_single_table_entries(tmp_path: Path) -> None:
    path = write_campaign(
        tmp_path,
        'command = "echo {n} {m}"\nrepetitions = 3\n[parameters]\nn = [1]\nm = [5]\n'
        '[environment]\nA = "1"\n',
    )
    campaign = load_campaign(
        path,
        overrides={"parameters": {"n": "1..3"}, "repetitions": 1, "environment": {"B": "2"}},
    )
    assert campaign.parameters == {"n": [1, 2, 3], "m": [5]}
    assert campaign.repetitions == 1
    assert campaign.environment == {"A": "1", "B": "2"}


def test_campaign_from_flags_mapping(tmp_path: Path) -> None:
    campaign = campaign_from_mapping(
        {
            "parameters": {"p": "1,2,4", "n": "64..512*2"},
            "command": ["echo", "{p}", "{n}"],
            "output": "out.csv",
        },
        base=tmp_path,
    )
    assert campaign.parameters == {"p": [1, 2, 4], "n": [64, 128, 256, 512]}
    assert campaign.output == tmp_path / "out.csv"
    assert campaign.source == "command line"


def test_cli_rejects_before_running(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_campaign(tmp_path, 'command = "echo {x}"\n[parameters]\nn = [1]\n')
    assert run_cli(["run", str(path)]) == 2
    error = capsys.readouterr().err
    assert f"{path}:1: command uses {{x}} but no such parameter" in error
    assert "Traceback" not in error
    assert not (tmp_path / "c.results.jsonl").exists()


def test_cli_needs_a_campaign_or_command(capsys: pytest.CaptureFixture) -> None:
    assert run_cli(["run", "--param", "n=1,2"]) == 2
    assert "give a campaign file" in capsys.readouterr().err


def test_cli_bad_param_flag(capsys: pytest.CaptureFixture) -> None:
    assert run_cli(["run", "--param", "n", "--", "echo", "{n}"]) == 2
    assert "--param 'n': expected NAME=VALUE" in capsys.readouterr().err


def test_plan_covers_every_run_once_in_interleaved_rounds() -> None:
    points = [(n, p) for n in (1, 2, 3, 4, 5) for p in (1, 2)]
    modes = ("time", "instructions")
    plan = plan_runs(points, 3, modes, seed=42)
    # time 3 times per point, the deterministic valgrind count once
    assert len(plan) == len(set(plan)) == 10 * 3 + 10
    assert set(plan) == {RunKey(pt, r, "time") for pt in points for r in range(3)} | {
        RunKey(pt, 0, "instructions") for pt in points
    }
    assert {(k.point, k.mode) for k in plan[:20]} == {(pt, m) for pt in points for m in modes}
    for r in (1, 2):  # round r holds exactly repetition r of every timed run
        chunk = plan[10 + r * 10 : 20 + r * 10]
        assert {k.repetition for k in chunk} == {r}
        assert {(k.point, k.mode) for k in chunk} == {(pt, "time") for pt in points}


def test_plan_is_random_but_reproducible() -> None:
    points = [(n,) for n in range(20)]
    first = plan_runs(points, 2, ("time",), seed=1)
    assert first == plan_runs(points, 2, ("time",), seed=1)
    assert first != plan_runs(points, 2, ("time",), seed=2)
    assert [k.point for k in first[:20]] != points  # shuffled, not in declaration order
    assert [k.point for k in first[:20]] != [k.point for k in first[20:]]  # rounds differ


def test_every_flag_reaches_the_campaign(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="perfcast")
    run_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(
        [
            "run",
            "--param",
            "p=1,2",
            "--param",
            "n=8..32*2",
            "--reps",
            "4",
            "--timeout",
            "9",
            "--launcher",
            "env R={p}",
            "--env",
            "A=1",
            "--env",
            "B={n}",
            "--workdir",
            str(tmp_path),
            "--metric",
            "instructions",
            "--metric",
            "cache",
            "--I1",
            "16384,4,64",
            "--D1",
            "8192,2,64",
            "--LL",
            "1048576,8,64",
            "-o",
            str(tmp_path / "o.csv"),
            "--seed",
            "11",
            "--",
            "echo",
            "{n}",
        ]
    )
    settings = run_command.settings_from_flags(args, list(args.words))
    campaign = campaign_from_mapping(settings)
    assert campaign.parameters == {"p": [1, 2], "n": [8, 16, 32]}
    assert (campaign.repetitions, campaign.timeout, campaign.seed) == (4, 9.0, 11)
    assert campaign.launcher == ("env", "R={p}") and campaign.command == ("echo", "{n}")
    assert campaign.environment == {"A": "1", "B": "{n}"}
    assert campaign.workdir == tmp_path and campaign.output == tmp_path / "o.csv"
    assert campaign.metrics == ("instructions", "cache")
    assert campaign.cache == {"I1": "16384,4,64", "D1": "8192,2,64", "LL": "1048576,8,64"}


def test_an_output_that_is_a_directory_is_rejected_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "out.csv").mkdir()
    path = write_campaign(
        tmp_path, 'command = "echo {n}"\noutput = "out.csv"\n[parameters]\nn = [1]\n'
    )
    with pytest.raises(InputError, match="out.csv is a directory, not a file") as caught:
        load_campaign(path)
    assert caught.value.source == str(path) and caught.value.line == 2
    assert not (tmp_path / "c.results.jsonl").exists()


def test_field_width_up_to_the_limit_is_filled_in(tmp_path: Path) -> None:
    campaign = campaign_from_mapping(
        {"parameters": {"n": [7]}, "command": ["echo", f"{{n:0{MAX_FIELD_WIDTH}d}}"]},
        base=tmp_path,
    )
    assert campaign.render((7,))[1][1] == "7".rjust(MAX_FIELD_WIDTH, "0")


def test_max_runs_raises_the_limit(tmp_path: Path) -> None:
    mapping = {"parameters": {"n": "1..1000", "m": "1..1000"}, "command": ["echo", "{n}{m}"]}
    with pytest.raises(InputError, match="more than max_runs") as caught:
        campaign_from_mapping(mapping, base=tmp_path)
    assert caught.value.source == "command line"
    assert caught.value.reason == "campaign-too-large"
    campaign = campaign_from_mapping({**mapping, "max_runs": MAX_RUNS * 10}, base=tmp_path)
    assert campaign.run_count == 1_000_000


def test_dry_run_refuses_a_huge_campaign_before_expanding_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # 10^15 points: expanding them would never finish; the size is checked first.
    argv = ["run", "--dry-run", "-o", str(tmp_path / "o.csv")]
    argv += [f"--param={name}=1..100000" for name in "abc"]
    assert run_cli([*argv, "--", "echo", "{a}{b}{c}"]) == 2
    error = capsys.readouterr().err
    assert error.splitlines() == [
        "perfcast: error: command line: the campaign has 1000000000000000 runs (100000 x 100000 "
        "x 100000 points x 1 repetitions x 1 metric modes), more than max_runs = 100000; or raise "
        "the limit with --max-runs"
    ]
    assert run_cli([*argv, "--max-runs", str(10**15), "--", "echo", "{a:99999999999d}"]) == 2
    assert "more than 1000" in capsys.readouterr().err


def test_deterministic_modes_run_once_per_point(tmp_path: Path) -> None:
    mapping = {
        "parameters": {"n": [1, 2, 3, 4]},
        "command": ["echo", "{n}"],
        "repetitions": 5,
        "metrics": ["time", "instructions"],
    }
    campaign = campaign_from_mapping(mapping, base=tmp_path)
    assert campaign.run_count == 4 * 5 + 4
    runs = pending_runs(campaign)
    assert len(runs) == campaign.run_count
    counted = [r for r in runs if r["mode"] == "instructions"]
    assert sorted(r["point"]["n"] for r in counted) == [1, 2, 3, 4]
    assert {r["repetition"] for r in counted} == {0}
    with pytest.raises(InputError, match=r"4 points x 5 repetitions of time \+ 1 run of instr"):
        campaign_from_mapping({**mapping, "max_runs": 23}, base=tmp_path)
