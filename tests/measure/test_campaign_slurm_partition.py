"""A campaign naming a partition the real one-node Slurm cluster (started here) lacks: one
message naming the campaign file and line, exit status 2, no job submitted."""

from __future__ import annotations

import subprocess

import pytest
from campaign_helpers import compile_c, run_cli
from slurm_cluster import missing_programs, running_cluster

from perfcast.measure.spec import campaign_line

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_programs()), reason=f"Slurm missing: {missing_programs()}"),
]

QUICK = "int main(void) { return 0; }\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    yield from running_cluster(tmp_path_factory)


def campaign(tmp_path, partition: str):
    compile_c(tmp_path, "quick", QUICK)
    path = tmp_path / "jobs.toml"
    path.write_text(
        f'workdir = "{tmp_path}"\nexecutor = "slurm"\ncommand = "./quick {{s}}"\ntimeout = 30\n'
        f'[parameters]\ns = [1]\n[slurm]\npoll = 0.5\npartition = "{partition}"\n'
    )
    return path


def test_an_unknown_partition_names_file_and_line(cluster, tmp_path, capsys):
    # Before: "perfcast: failed: cannot submit the run s=1 ...: sbatch failed: ... Invalid
    # partition name specified", exit status 1, naming neither the file nor the line.
    path = campaign(tmp_path, "nosuch")
    assert run_cli(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"perfcast: error: {path}:9: [slurm] partition 'nosuch' is not a partition of this "
        "Slurm cluster (it has debug)\n"
    )
    queue = subprocess.run(["squeue", "--noheader"], capture_output=True, text=True, check=True)
    assert queue.stdout == "" and list((tmp_path / "jobs.slurm").glob("run-*")) == []


def test_a_known_partition_is_taken(cluster, tmp_path, capsys):
    path = campaign(tmp_path, "debug")
    assert run_cli(["run", str(path)]) == 0, cluster.log()
    assert "1 runs done" in capsys.readouterr().err


def test_the_line_of_a_setting_in_a_campaign_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('command = "x"\n[slurm]\n# partition = "a"\npartition = "b"\n')
    assert campaign_line(str(path), "partition", "slurm") == 4
    assert campaign_line(str(path), "account", "slurm") is None
    assert campaign_line("command line", "partition", "slurm") is None
