"""``metrics = ["time", "features"]`` end to end: a real C program instrumented by
``perfcast features``, built with its original command, run by a drawn campaign, its feature
records collected into the run table, and ``perfcast learn`` / ``predict --runs`` on that table."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.io.campaign_results import read_journal
from perfcast.io.campaign_runs import campaign_run_table
from perfcast.io.run_table import read_run_table

PROGRAM = Path(__file__).with_name("feature_campaign") / "sweep.c"
RUNS = 24
CAMPAIGN = """\
runs = {runs}
seed = 5
command = ["./sweep", "{{n}}", "{{algo}}", "{{x}}"]
workdir = "{workdir}"
metrics = ["time", "features"]
output = "sweep.csv"

[parameters]
n = {{min = 16, max = 1500, log = true}}
algo = ["quick", "slow"]
x = {{min = 0.5, max = 3.0}}
"""


def _build(source: Path, binary: Path) -> None:
    subprocess.run(["gcc", "-O0", "-o", str(binary), str(source)], check=True)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("features-campaign")
    shutil.copy(PROGRAM, folder / "sweep.c")
    assert main(["features", str(folder / "sweep.c"), "-o", str(folder / "out"),
                 "--param", "n"]) == 0  # fmt: skip
    _build(folder / "out" / "sweep.c", folder / "out" / "sweep")
    campaign = folder / "sweep.toml"
    campaign.write_text(CAMPAIGN.format(runs=RUNS, workdir=folder / "out"))
    assert main(["run", str(campaign)]) == 0
    return folder, campaign


def _loop_trips(n: int, algo: str, x: float) -> int:
    """The inner loop's trips as sweep.c computes them."""
    steps = n if algo == "quick" else n * (n // 8) + 1
    return int(x * 4) * steps


def test_the_run_table_holds_parameters_features_and_targets(measured) -> None:
    folder, _ = measured
    path = folder / "sweep.runs.csv"
    table = read_run_table(path)
    assert table.rows == RUNS
    header = next(csv.reader(path.open()))
    assert header[:4] == ["n", "algo", "x", "repetition"]
    assert header.index("time") < header.index("launch_time") < header.index("cost:feature:n")
    assert set(table.column("algo")) == {"quick", "slow"}
    # the program's own record of n, named like the parameter, is kept apart and agrees
    assert list(table.column("feature:n")) == list(table.column("n"))
    trips = table.column("sweep.c:10:loop:for")
    for n, algo, x, counted in zip(
        table.column("n"), table.column("algo"), table.column("x"), trips, strict=True
    ):
        assert counted == _loop_trips(int(n), str(algo), float(x))
    assert (table.column("time") > 0).all() and (table.column("cpu") > 0).all()
    # the program's own time runs inside the launch the campaign timed
    assert (table.column("time") < table.column("launch_time")).all()
    assert table.costs["sweep.c:10:loop:for"].max() > 0
    # the experiment is written too: the program's wall time per drawn point
    experiment = (folder / "sweep.csv").read_text()
    assert experiment.startswith("kernel,metric,n,x,repetition,value")
    assert "sweep[algo=quick],time" in experiment


def test_rerunning_resumes_and_rewrites_the_same_table(measured, capsys) -> None:
    folder, campaign = measured
    before = (folder / "sweep.runs.csv").read_text()
    capsys.readouterr()
    assert main(["run", str(campaign)]) == 0
    err = capsys.readouterr().err
    assert f"0 runs done, {RUNS} already recorded" in err
    assert f"run table written to {folder / 'sweep.runs.csv'}" in err
    assert (folder / "sweep.runs.csv").read_text() == before


@pytest.mark.slow
def test_learn_and_predict_on_the_campaign_table(measured, capsys) -> None:
    folder, _ = measured
    table = folder / "sweep.runs.csv"
    model = folder / "model.json"
    capsys.readouterr()
    assert main(["learn", str(table), "--target", "cpu", "--trees", "40",
                 "--format", "json", "-o", str(model)]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] == RUNS
    importance = {feature["name"]: feature["importance"] for feature in summary["features"]}
    assert {"n", "algo", "x", "sweep.c:10:loop:for"} <= set(importance)
    assert not {"repetition", "time", "launch_time"} & set(importance)
    # the counters of the hot loop explain the work better than the inputs themselves
    counters = sum(v for k, v in importance.items() if k.startswith(("sweep.c:10:", "sweep.c:11:")))
    assert counters > importance["n"] + importance["algo"] + importance["x"]
    assert main(["predict", str(model), "--runs", str(table), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["predictions"]
    assert [row["row"] for row in rows] == list(range(RUNS))
    cpu = read_run_table(table).column("cpu")
    # the work spans three orders of magnitude; the features carry it
    slowest, fastest = int(cpu.argmax()), int(cpu.argmin())
    assert rows[slowest]["prediction"] > 10 * rows[fastest]["prediction"]


def test_a_program_without_instrumentation_fails_every_run_with_the_reason(
    tmp_path: Path, capsys
) -> None:
    _build(PROGRAM, tmp_path / "sweep")
    campaign = tmp_path / "plain.toml"
    campaign.write_text(CAMPAIGN.format(runs=2, workdir=tmp_path))
    assert main(["run", str(campaign)]) == 1
    err = capsys.readouterr().err
    assert "feature records: the program wrote none" in err
    assert not (tmp_path / "sweep.runs.csv").exists()


def test_the_run_table_of_a_campaign_without_features_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "grid.results.jsonl"
    session = {"type": "session", "fingerprint": "f", "campaign": {"parameters": {"n": [1]}}}
    journal.write_text(json.dumps(session) + "\n")
    with pytest.raises(InputError, match="collects no features") as info:
        campaign_run_table(journal)
    assert info.value.source == str(journal) or str(journal) in str(info.value)


MPI_CAMPAIGN = """\
runs = 4
seed = 2
launcher = "mpirun --oversubscribe -np {{p}}"
command = ["./ring", "{{n}}"]
workdir = "{workdir}"
metrics = ["time", "features"]
output = "ring.csv"

[parameters]
p = [1, 2, 3]
n = {{min = 10, max = 5000, log = true}}
"""


@pytest.mark.slow
def test_an_mpi_campaign_collects_traffic_reduced_over_its_ranks(tmp_path: Path) -> None:
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("needs mpicc and mpirun")
    ring = Path(__file__).parents[1] / "static" / "feature_programs" / "ring.c"
    shutil.copy(ring, tmp_path / "ring.c")
    assert main(["features", str(tmp_path / "ring.c"), "-o", str(tmp_path / "out")]) == 0
    build = ["mpicc", "-O1", "-o", str(tmp_path / "out" / "ring"), str(tmp_path / "out" / "ring.c")]
    subprocess.run(build, check=True)
    campaign = tmp_path / "ring.toml"
    campaign.write_text(MPI_CAMPAIGN.format(workdir=tmp_path / "out"))
    assert main(["run", str(campaign)]) == 0
    table = read_run_table(tmp_path / "ring.runs.csv")
    assert table.rows == 4
    column = {name.split(":", 2)[-1]: name for name in table.columns}
    for p, n, sent, trips in zip(
        table.column("p"),
        table.column("n"),
        table.column(column["mpi_bytes:MPI_Sendrecv_replace"]),
        table.column(column["loop:for"]),
        strict=True,
    ):
        assert trips == 3 * p  # 3 steps on every rank, summed over the ranks
        assert sent == 3 * p * n * 8


SCRIPT_CAMPAIGN = """\
runs = 4
seed = 1
command = ["{program}", "{{n}}"]
metrics = ["time", "features"]
output = "{output}"

[parameters]
n = {{min = 1, max = 9}}
"""


def _script_campaign(tmp_path: Path, fields: str, elapsed: str = "0.5") -> Path:
    """A campaign of a shell program writing one exit record with ``fields`` (JSON members)."""
    program = tmp_path / "prog.sh"
    program.write_text(
        "#!/bin/sh\n"
        f'echo "{{\\"phase\\": \\"exit\\", {fields}, \\"elapsed\\": {elapsed}}}" '
        '>> "$PERFCAST_FEATURES_FILE"\n'
    )
    program.chmod(0o755)
    campaign = tmp_path / "c.toml"
    campaign.write_text(SCRIPT_CAMPAIGN.format(program=program, output=tmp_path / "app.csv"))
    return campaign


def test_features_named_like_a_parameter_or_column_do_not_overwrite_it(tmp_path: Path) -> None:
    # The features 'n', 'repetition' and 'launch_time' used to overwrite the run's parameter
    # n, its repetition and the feature 'launch_time' took the launch's wall time.
    campaign = _script_campaign(
        tmp_path, '\\"n\\": 1000, \\"repetition\\": 7, \\"launch_time\\": 3, \\"x\\": $1'
    )
    assert main(["run", str(campaign)]) == 0
    with (tmp_path / "app.runs.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4
    for row in rows:
        assert float(row["n"]) == float(row["x"]) <= 9
        assert row["repetition"] == "0"
        assert float(row["feature:n"]) == 1000
        assert float(row["feature:repetition"]) == 7
        assert float(row["feature:launch_time"]) == 3
        assert float(row["launch_time"]) != 3


def test_two_features_that_would_share_a_column_are_refused(tmp_path: Path, capsys) -> None:
    campaign = _script_campaign(tmp_path, '\\"n\\": 2, \\"feature:n\\": 5')
    assert main(["run", str(campaign)]) == 2
    err = capsys.readouterr().err
    assert "the feature 'feature:n' and another one would both be column 'feature:n'" in err
    assert not (tmp_path / "app.runs.csv").exists()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e400"])
def test_a_record_with_a_number_that_is_not_finite_fails_its_run(
    tmp_path: Path, capsys, number: str
) -> None:
    # it used to crash the campaign with "ValueError: Out of range float values are not JSON
    # compliant" while journaling the run, a traceback with the run lost
    campaign = _script_campaign(tmp_path, f'\\"x\\": {number}')
    assert main(["run", str(campaign)]) == 1
    err = capsys.readouterr().err
    assert "line 1 holds a number that is not finite" in err
    assert "Traceback" not in err
    journal = read_journal(tmp_path / "app.results.jsonl")
    assert [line["status"] for line in journal.runs.values()] == ["failed"] * 4


def test_a_negative_elapsed_time_is_refused(tmp_path: Path, capsys) -> None:
    # "elapsed": -1 used to become a run of -1 s in the run table
    campaign = _script_campaign(tmp_path, '\\"x\\": 1', elapsed="-1")
    assert main(["run", str(campaign)]) == 2
    assert "elapsed is -1, not a number of seconds >= 0" in capsys.readouterr().err
    assert not (tmp_path / "app.runs.csv").exists()
