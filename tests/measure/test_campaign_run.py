"""Running campaigns on a real compiled program: records, failures, timeouts, resume, journal."""

from __future__ import annotations

import io
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from campaign_helpers import RECORDING_PROGRAM, compile_c, processes_with, run_cli

from perfcast.core.errors import InputError, WorkError
from perfcast.core.progress import ProgressBar
from perfcast.io.campaign_results import JournalWarning, load_results, read_journal
from perfcast.measure.campaign import run_campaign
from perfcast.measure.journal import JournalWriter
from perfcast.measure.schedule import plan_runs
from perfcast.measure.spec import load_campaign


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_c(tmp_path_factory.mktemp("bin"), "solver", RECORDING_PROGRAM)


def campaign_file(
    directory: Path, program: Path, extra: str = "", params: str = "", repetitions: int = 2
) -> Path:
    path = directory / "solver.toml"
    path.write_text(
        f'command = "{program} {{n}}"\nrepetitions = {repetitions}\nseed = 3\n{extra}\n'
        f"[parameters]\n{params or 'n = [1, 2, 3, 4]'}\n"
    )
    return path


def test_campaign_records_wall_time_and_program_records(tmp_path: Path, program: Path) -> None:
    subprocess.run(["git", "init", "-q", str(program.parent)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(program.parent),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    campaign = load_campaign(campaign_file(tmp_path, program))
    result = run_campaign(campaign)
    assert (result.executed, result.skipped, result.failures) == (8, 0, [])

    experiment = result.experiment
    assert experiment.parameter_names == ("n",)
    frame = experiment.to_frame()
    visits = frame[frame.metric == "visits"].sort_values(["n", "repetition"])
    assert visits.kernel.unique().tolist() == ["main->solve"]
    assert visits.n.tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert visits.value.tolist() == [2, 2, 4, 4, 6, 6, 8, 8]
    assert visits.repetition.tolist() == [0, 1] * 4
    wall = frame[(frame.kernel == "solver") & (frame.metric == "time")]
    assert len(wall) == 8 and (wall.value > 0).all() and (wall.value < 5).all()
    assert experiment.metrics["time"].unit == "s"

    machine = experiment.metadata["machine"]
    assert machine["cores"] >= 1 and machine["hostname"] and machine["cpu_model"]
    assert machine["compilers"]["cc"] and "Open MPI" in machine["mpi"]
    assert len(machine["git"]["commit"]) == 40
    assert experiment.metadata["campaign"]["command"] == [str(program), "{n}"]
    assert experiment.metadata["runs"] == {
        "ok": 8,
        "failed": 0,
        "timeout": 0,
        "outside_campaign": 0,
    }

    written = pd.read_csv(campaign.output)
    assert list(written.columns) == ["kernel", "metric", "n", "repetition", "value"]
    assert len(written) == len(frame) == 8 * 3
    reloaded = load_results(campaign.results_path)
    pd.testing.assert_frame_equal(reloaded.to_frame(), frame)


def test_runs_follow_the_seeded_interleaved_plan(tmp_path: Path, program: Path) -> None:
    campaign = load_campaign(campaign_file(tmp_path, program))
    run_campaign(campaign)
    lines = [json.loads(x) for x in campaign.results_path.read_text().splitlines()]
    executed = [(line["point"]["n"], line["repetition"]) for line in lines if line["type"] == "run"]
    plan = plan_runs(campaign.points(), 2, ("time",), seed=3)
    assert executed == [(k.point[0], k.repetition) for k in plan]


def test_failing_run_is_recorded_not_fatal(
    tmp_path: Path, program: Path, capsys: pytest.CaptureFixture
) -> None:
    path = campaign_file(tmp_path, program, '[environment]\nFAIL_AT = "3"')
    assert run_cli(["run", str(path)]) == 0
    error = capsys.readouterr().err
    assert "6 runs done" not in error and "8 runs done" in error
    assert "2 runs failed" in error
    assert "n=3 rep 0 (time): exit status 1; stderr ends: cannot handle n=3" in error

    experiment = load_results(tmp_path / "solver.results.jsonl")
    assert sorted(experiment.frame.n.unique()) == [1, 2, 4]
    failures = experiment.metadata["failures"]
    assert len(failures) == 2
    assert {f["point"]["n"] for f in failures} == {3}
    assert all(f["status"] == "failed" and f["reason"] == "exit status 1" for f in failures)
    assert failures[0]["stderr_tail"] == "cannot handle n=3"


def test_every_run_failing_is_exit_status_1(
    tmp_path: Path, program: Path, capsys: pytest.CaptureFixture
) -> None:
    path = campaign_file(tmp_path, program, '[environment]\nFAIL_AT = "1"', "n = [1]")
    assert run_cli(["run", str(path)]) == 1
    assert "every run of the campaign failed; first: n=1 rep" in capsys.readouterr().err
    with pytest.raises(WorkError):
        run_campaign(load_campaign(path))


def test_malformed_records_fail_the_run_with_a_reason(tmp_path: Path, program: Path) -> None:
    path = campaign_file(tmp_path, program, '[environment]\nBAD_RECORD = "1"', "n = [1, 2]")
    with pytest.raises(WorkError, match="program records: line 2: 'value' is None"):
        run_campaign(load_campaign(path))
    journal = read_journal(tmp_path / "solver.results.jsonl")
    assert len(journal.runs) == 4
    assert all(line["status"] == "failed" for line in journal.runs.values())


def test_program_that_cannot_start_is_a_failed_run(tmp_path: Path) -> None:
    script = tmp_path / "broken"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    path = tmp_path / "broken.toml"
    path.write_text('command = "./broken {n}"\n[parameters]\nn = [1, 2]\n')
    expected = r"n=\d rep 0 \(time\): cannot start ./broken: No such file"
    with pytest.raises(WorkError, match=expected):
        run_campaign(load_campaign(path))
    assert len(read_journal(tmp_path / "broken.results.jsonl").runs) == 2


def test_timeout_kills_the_run(tmp_path: Path, program: Path) -> None:
    path = campaign_file(
        tmp_path, program, 'timeout = 0.5\n[environment]\nHANG_AT = "2"', "n = [1, 2]", 1
    )
    start = time.monotonic()
    result = run_campaign(load_campaign(path))
    assert time.monotonic() - start < 10
    (failure,) = result.failures
    assert failure["point"] == {"n": 2}
    assert failure["status"] == "timeout"
    assert failure["reason"] == "killed after the timeout of 0.5 s"
    assert result.experiment.frame.n.unique().tolist() == [1]
    assert processes_with(f"{program} 2") == []


def test_rerun_skips_recorded_runs_and_retries_failures_on_request(
    tmp_path: Path, program: Path
) -> None:
    path = campaign_file(tmp_path, program, '[environment]\nFAIL_AT = "3"')
    first = run_campaign(load_campaign(path))
    assert (first.executed, len(first.failures)) == (8, 2)
    again = run_campaign(load_campaign(path))
    assert (again.executed, again.skipped, len(again.failures)) == (0, 8, 2)

    fixed = tmp_path / "solver.toml"
    fixed.write_text(fixed.read_text().replace('FAIL_AT = "3"', 'FAIL_AT = "3"\nX = "1"'))
    with pytest.raises(InputError, match="measured with another command"):
        run_campaign(load_campaign(fixed))
    fixed.write_text(fixed.read_text().replace('\nX = "1"', ""))

    more = fixed.read_text().replace("repetitions = 2", "repetitions = 3")
    fixed.write_text(more)
    third = run_campaign(load_campaign(fixed))
    assert (third.executed, third.skipped) == (4, 8)
    retried = run_campaign(load_campaign(fixed), retry_failed=True)
    assert retried.executed == 3  # n=3, three repetitions, still failing
    journal = read_journal(tmp_path / "solver.results.jsonl")
    assert len(journal.runs) == 12


def test_narrowed_campaign_keeps_old_runs_out_of_the_experiment(
    tmp_path: Path, program: Path
) -> None:
    path = campaign_file(tmp_path, program)
    run_campaign(load_campaign(path))
    path.write_text(path.read_text().replace("n = [1, 2, 3, 4]", "n = [2, 3]"))
    narrowed = run_campaign(load_campaign(path))
    assert narrowed.executed == 0
    frame = pd.read_csv(tmp_path / "solver.csv")
    assert sorted(frame.n.unique()) == [2, 3]
    runs = load_results(tmp_path / "solver.results.jsonl").metadata["runs"]
    assert runs == {"ok": 4, "failed": 0, "timeout": 0, "outside_campaign": 4}
    sessions = read_journal(tmp_path / "solver.results.jsonl").sessions
    assert [s["runs_recorded"] for s in sessions[:1]] == [8] and len(sessions) == 2
    assert run_campaign(load_campaign(path)).executed == 0
    assert len(read_journal(tmp_path / "solver.results.jsonl").sessions) == 2  # nothing new


def test_torn_last_line_is_ignored_with_a_warning_and_cut_off(
    tmp_path: Path, program: Path
) -> None:
    path = campaign_file(tmp_path, program, "", "n = [1, 2]")
    run_campaign(load_campaign(path))
    results = tmp_path / "solver.results.jsonl"
    complete = results.read_bytes()
    with results.open("ab") as handle:
        handle.write(b'{"type":"run","fingerprint":"abc","point":{"n":')
    with pytest.warns(JournalWarning, match=r"solver.results.jsonl:6: ignoring an incomplete"):
        assert len(load_results(results).frame) == 4 * 3
    with pytest.warns(JournalWarning):
        again = run_campaign(load_campaign(path))
    assert again.executed == 0
    assert results.read_bytes() == complete


def test_corrupt_middle_line_is_an_input_error(tmp_path: Path, program: Path) -> None:
    path = campaign_file(tmp_path, program, "", "n = [1]")
    run_campaign(load_campaign(path))
    results = tmp_path / "solver.results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    lines.insert(1, "garbage\n")
    results.write_text("".join(lines))
    with pytest.raises(InputError, match=r"solver.results.jsonl:2: corrupt results line"):
        load_results(results)


def test_a_second_runner_on_the_same_results_is_refused(tmp_path: Path, program: Path) -> None:
    campaign = load_campaign(campaign_file(tmp_path, program, "", "n = [1]"))
    with (
        JournalWriter(campaign.results_path),
        pytest.raises(InputError, match="another perfcast run is writing these results"),
    ):
        run_campaign(campaign)


def test_launcher_parameters_get_the_processes_role(tmp_path: Path, program: Path) -> None:
    path = campaign_file(tmp_path, program, 'launcher = "env P={p:d}"', "n = [1]\np = [1, 2]")
    experiment = run_campaign(load_campaign(path)).experiment
    assert [(p.name, p.role) for p in experiment.parameters] == [("n", None), ("p", "processes")]


def test_dry_run_lists_the_runs_still_to_take(
    tmp_path: Path, program: Path, capsys: pytest.CaptureFixture
) -> None:
    path = campaign_file(tmp_path, program, "", "n = [1, 2]")
    assert run_cli(["run", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "4 of 4 runs to take, in this order:"
    assert sorted(out[1:]) == sorted(
        f"  n={n} rep {r} [time]: {program} {n}" for n in (1, 2) for r in (0, 1)
    )
    assert not (tmp_path / "solver.csv").exists()
    run_campaign(load_campaign(path))
    path.write_text(path.read_text().replace("repetitions = 2", "repetitions = 3"))
    assert run_cli(["run", str(path), "--dry-run", "--metric", "time", "--metric", "cache"]) == 2
    assert "measured with another command" in capsys.readouterr().err
    assert run_cli(["run", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 of 6 runs to take, in this order:"


def test_flags_form_runs_the_same(tmp_path: Path, program: Path) -> None:
    output = tmp_path / "flags.csv"
    status = run_cli(
        [
            "run",
            "--param",
            "n=1..4*2",
            "--reps",
            "1",
            "--seed",
            "5",
            "-o",
            str(output),
            "--env",
            "SLEEP_US=1000",
            "--",
            str(program),
            "{n}",
        ]
    )
    assert status == 0
    frame = pd.read_csv(output)
    assert sorted(frame[frame.metric == "visits"].value) == [2, 4, 8]
    assert (tmp_path / "flags.results.jsonl").exists()


def test_flags_override_the_campaign_file(tmp_path: Path, program: Path) -> None:
    path = campaign_file(tmp_path, program)
    assert run_cli(["run", str(path), "--param", "n=5", "--reps", "1"]) == 0
    frame = load_results(tmp_path / "solver.results.jsonl").frame
    assert frame.n.unique().tolist() == [5] and frame.repetition.unique().tolist() == [0]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_shows_eta_on_a_terminal_only() -> None:
    terminal, pipe = _Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = ProgressBar(4, stream)
        bar.start("n=1 rep 0")
        bar.advance(ok=True)
        bar.advance(ok=False)
        bar.close()
    assert pipe.getvalue() == ""
    text = terminal.getvalue()
    assert "0/4 runs  ETA ?  n=1 rep 0" in text
    assert "[############............] 2/4 runs, 1 failed  ETA 0:00" in text
    assert text.endswith("\n")


def test_results_journal_reader_module(tmp_path: Path, program: Path) -> None:
    from perfcast.io import campaign_results

    path = campaign_file(tmp_path, program, "", "n = [1, 2]")
    run_campaign(load_campaign(path))
    results = tmp_path / "solver.results.jsonl"
    head = results.read_text()[:8192]
    assert campaign_results.sniff(results, head)
    assert not campaign_results.sniff(path, path.read_text())
    assert not campaign_results.sniff(results, '{"params": {"n": 1}}\n')
    experiment = campaign_results.read(results)
    assert experiment.metadata["campaign"]["parameters"] == {"n": [1, 2]}
    assert len(experiment.frame) == 2 * 2 * 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda run: run.pop("records"), r":2: corrupt run line \(missing records\)"),
        (
            lambda run: run.update(status="exploded"),
            r":2: corrupt run line \(status 'exploded', not one of ok, failed, timeout\)",
        ),
    ],
)
def test_a_corrupt_run_line_says_what_is_wrong(
    tmp_path: Path, program: Path, change: Callable[[dict[str, Any]], object], message: str
) -> None:
    path = campaign_file(tmp_path, program, "", "n = [1]")
    run_campaign(load_campaign(path))
    results = tmp_path / "solver.results.jsonl"
    session, run, *rest = results.read_text().splitlines()
    fields = json.loads(run)
    change(fields)
    results.write_text("\n".join([session, json.dumps(fields), *rest]) + "\n")
    with pytest.raises(InputError, match=message):
        load_results(results)
