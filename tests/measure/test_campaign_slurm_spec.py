"""The ``executor`` key and ``[slurm]`` table of campaign files, and a Slurm-less machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_helpers import run_cli

from perfcast.core.errors import InputError, WorkError
from perfcast.io.campaign_results import RunKey, read_journal
from perfcast.measure.campaign import run_campaign
from perfcast.measure.slurm import SlurmExecutor, SubmittedJob
from perfcast.measure.spec import SlurmOptions, load_campaign


def campaign_file(tmp_path: Path, body: str) -> Path:
    program = tmp_path / "app"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    path = tmp_path / "c.toml"
    path.write_text(f'command = "./app {{p}}"\n{body}[parameters]\np = [1, 2, 4]\n')
    return path


def test_defaults_are_local_and_the_executor_changes_no_fingerprint(tmp_path):
    local = load_campaign(campaign_file(tmp_path, ""))
    assert local.executor == "local" and local.slurm == SlurmOptions()
    slurm = load_campaign(campaign_file(tmp_path, 'executor = "slurm"\n'))
    assert slurm.fingerprint == local.fingerprint  # the same runs, wherever they execute
    assert (local.to_dict()["executor"], slurm.to_dict()["executor"]) == ("local", "slurm")


def test_slurm_table_is_read(tmp_path):
    campaign = load_campaign(
        campaign_file(
            tmp_path,
            'executor = "slurm"\n[slurm]\npartition = "batch"\naccount = "proj1"\nnodes = 2\n'
            'tasks_per_node = "{p}"\ntime_limit = "0:30:00"\noptions = "--exclusive"\npoll = 5\n',
        )
    )
    assert campaign.slurm == SlurmOptions(
        partition="batch",
        account="proj1",
        nodes="2",
        tasks_per_node="{p}",
        time_limit="0:30:00",
        options=("--exclusive",),
        poll=5.0,
    )
    assert [campaign.slurm_shape(point) for point in campaign.points()] == [(2, 1), (2, 2), (2, 4)]


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ('executor = "pbs"\n', "executor must be one of local, slurm, not 'pbs'", 2),
        ('[slurm]\nqueue = "x"\n', "unknown key 'queue' in [slurm]", 3),
        ('[slurm]\ntime_limit = "ten"\n', "time_limit must be minutes, HH:MM:SS or D-HH:MM:SS", 3),
        ("[slurm]\nnodes = 0\n", "nodes must be a positive integer or a template", 3),
        ('[slurm]\ntasks_per_node = "{q}"\n', "uses {q} but no such parameter is defined", 3),
        ("[slurm]\npoll = -1\n", "poll must be seconds in [0.1, 3600]", 3),
        # Before: any positive poll was taken, so 1e-9 looked at the queue in a tight loop.
        ("[slurm]\npoll = 0.001\n", "poll must be seconds in [0.1, 3600], not 0.001", 3),
        ("[slurm]\npoll = 3601\n", "poll must be seconds in [0.1, 3600]", 3),
        ('[slurm]\npartition = ""\n', "partition must be a name", 3),
        # Before: no line and no table named ("options must be a string ...").
        ("[slurm]\noptions = 5\n", "[slurm] options must be a string or a list of strings", 3),
        ('[slurm]\npoll = 2\noptions = "--x \\"a"\n', "[slurm] options: No closing quotation", 4),
    ],
)
def test_bad_slurm_settings_name_file_and_line(tmp_path, body, message, line):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("[", r"\[")) as info:
        load_campaign(campaign_file(tmp_path, body))
    assert info.value.line == line


def test_a_template_giving_no_whole_number_is_refused(tmp_path):
    path = campaign_file(tmp_path, 'executor = "slurm"\n[slurm]\ntasks_per_node = "{p}0-9"\n')
    with pytest.raises(InputError, match="at p=1 they are '1' and '{p}0-9'"):
        load_campaign(path)


def test_without_sbatch_one_message_exit_1_and_nothing_lost(tmp_path, monkeypatch, capsys):
    path = campaign_file(tmp_path, "")
    assert run_cli(["run", str(path), "--seed", "1"]) == 0  # three runs measured locally
    capsys.readouterr()
    path.write_text(path.read_text().replace("p = [1, 2, 4]", "p = [1, 2, 4, 8]"))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(WorkError, match="sbatch was not found on PATH"):
        run_campaign(load_campaign(path, overrides={"executor": "slurm"}))
    assert run_cli(["run", str(path), "--executor", "slurm"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "perfcast: failed: cannot submit the run p=" in err
    journal = read_journal(tmp_path / "c.results.jsonl")
    assert len(journal.runs) == 3  # what was measured before is still there


def test_an_sbatch_that_cannot_be_started_is_one_message_exit_1(tmp_path, monkeypatch, capsys):
    # Before: a non-executable sbatch on PATH gave a PermissionError traceback.
    path = campaign_file(tmp_path, 'executor = "slurm"\n')
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "sbatch").write_text("#!/bin/sh\necho 1\n")  # not executable
    monkeypatch.setenv("PATH", str(tools))
    assert run_cli(["run", str(path)]) == 1
    err = capsys.readouterr().err
    assert "cannot start sbatch: Permission denied" in err and "Traceback" not in err


def test_a_file_where_the_job_directory_goes_is_one_message_exit_2(tmp_path, capsys):
    # Before: `<output>.slurm` being a file gave a FileExistsError traceback.
    path = campaign_file(tmp_path, 'executor = "slurm"\n')
    campaign = load_campaign(path)
    blocker = campaign.output.with_name(f"{campaign.output.stem}.slurm")
    blocker.write_text("not a directory")
    assert run_cli(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(blocker) in err and "cannot keep the Slurm job files" in err
    assert blocker.read_text() == "not a directory"


@pytest.mark.parametrize(
    ("record", "result"), [("[]", "[]"), ('{"job_id": 5}', "7"), (b"\xff\xfe", b"\xff\xfe")]
)
def test_damaged_job_records_and_results_are_read_as_absent(tmp_path, record, result):
    # Before: a job record or result that was JSON of the wrong shape, or not UTF-8, raised
    # KeyError/TypeError/UnicodeDecodeError out of the executor.
    campaign = load_campaign(campaign_file(tmp_path, 'executor = "slurm"\n'))
    executor = SlurmExecutor(campaign)
    executor.directory.mkdir()
    key = RunKey(next(iter(campaign.points())), 0, "time")
    stem = executor._stem(key)
    for suffix, text in ((".job", record), (".result.json", result)):
        stem.with_suffix(suffix).write_bytes(text if isinstance(text, bytes) else text.encode())
    assert executor._earlier_job(key) is None
    assert executor._result(SubmittedJob(key, "5", stem, "now", [])) is None
