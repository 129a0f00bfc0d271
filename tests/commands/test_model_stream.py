"""``perfcast model --stream-kernels N`` and ``perfcast.fit_stream``: inputs read in blocks of
kernels, each block's models written before the next block is read, one model document."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import perfcast
from perfcast import cli
from perfcast.io import read_experiment, write_experiment
from perfcast.io.kernel_blocks import read_blocks
from tests.model.test_distributed import mixed_experiment


@pytest.fixture(scope="module")
def measurements(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stream")
    experiment = mixed_experiment(25, {"p": [2, 4, 8, 16, 32]}, seed=2)
    for suffix in (".parquet", ".jsonl"):
        write_experiment(experiment, folder / f"runs{suffix}")
    return folder


def block_fits(path: Path, kernels: int, **options) -> list[dict]:
    """The models of a fit of every block on its own, in order."""
    name = "table" if path.suffix == ".parquet" else "extrap-jsonlines"
    return [
        m.to_dict()
        for block in read_blocks(path, kernels, name)
        for m in perfcast.fit(block, **options).models
    ]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_the_document_holds_the_models_of_every_block(tmp_path, measurements, suffix):
    path = measurements / f"runs{suffix}"
    out = tmp_path / "models.json"
    summary = perfcast.fit_stream(path, out, kernels=10, every_metric=True)
    document = json.loads(out.read_text())
    assert document["models"] == block_fits(path, 10)
    assert summary.models == 50 and summary.blocks == 3
    models = perfcast.ModelSet.from_json(document)
    assert models.ranges == {"p": (2.0, 32.0)}
    assert "read in 3 blocks of up to 10 kernels" in document["notes"][-1]
    assert not list(tmp_path.glob(".perfcast-*"))  # the temporary file was renamed


def test_one_block_is_the_fit_of_the_whole_file(tmp_path, measurements):
    path = measurements / "runs.parquet"
    out = tmp_path / "models.json"
    perfcast.fit_stream(path, out, metric="energy")
    whole = perfcast.fit(read_experiment(path), metric="energy")
    assert json.loads(out.read_text()) == json.loads(whole.to_json())


def test_the_command_streams_json_to_stdout(measurements, capsys):
    path = measurements / "runs.jsonl"
    argv = ["model", str(path), "--stream-kernels", "7", "--format", "json", "--metric", "time"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["models"] == block_fits(path, 7, metric="time")
    assert "read in 4 blocks of up to 7 kernels" in captured.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--stream-kernels writes the models as JSON: add --format json"),
        (["--format", "json", "--tree"], "--tree: needs the whole input at once"),
        (["--format", "json", "--exclude", "k1"], "--exclude: needs the whole input at once"),
    ],
)
def test_options_that_need_the_whole_input_are_refused(measurements, capsys, extra, message):
    argv = ["model", str(measurements / "runs.parquet"), "--stream-kernels", "5", *extra]
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_bad_input_keeps_the_existing_output_file(tmp_path, measurements, capsys):
    lines = (measurements / "runs.jsonl").read_text().splitlines()
    lines[400] = lines[400].replace('"value": ', '"value": "slow", "x": ')
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "models.json"
    out.write_text("earlier models\n")
    argv = ["model", str(path), "--stream-kernels", "5", "--format", "json", "--out", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}:401: unknown key 'x'" in err and err.count("\n") == 1 and "Traceback" not in err
    assert out.read_text() == "earlier models\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "models.json"]


def test_a_bad_block_size_is_a_usage_error(measurements, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["model", str(measurements / "runs.parquet"), "--stream-kernels", "0"])
    assert stop.value.code == 2
    assert "'0' is not a whole number of kernels >= 1" in capsys.readouterr().err


@pytest.mark.slow
def test_blocks_on_a_dask_cluster_give_the_models_of_one_process(tmp_path, measurements):
    path = measurements / "runs.parquet"
    alone, spread = tmp_path / "alone.json", tmp_path / "spread.json"
    perfcast.fit_stream(path, alone, kernels=10, every_metric=True)
    with perfcast.dask_client(workers=2) as client:
        perfcast.fit_stream(path, spread, kernels=10, every_metric=True, client=client)
    assert alone.read_text() == spread.read_text()


# VmHWM, the peak of this process's own memory: ru_maxrss would carry over the peak of the
# process it was forked from (the test runner, hundreds of MiB late in a full run).
PEAK_SCRIPT = """
import re, sys
from pathlib import Path
from perfcast import cli
status = cli.main(sys.argv[1:])
peak = re.search(r"VmHWM:\\s*(\\d+) kB", Path("/proc/self/status").read_text())
print(int(peak.group(1)) // 1024, status)
"""


def peak_mib(*argv: str) -> int:
    """Peak resident memory (MiB) of ``perfcast`` run with ``argv`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, *argv], capture_output=True, text=True, check=True
    )
    peak, status = done.stdout.split()[-2:]
    assert status == "0", done.stderr
    return int(peak)


def one_parameter_table(path: Path, kernels: int) -> None:
    """A Parquet table of ``kernels`` noisy one-parameter kernels, rows by kernel."""
    rng = np.random.default_rng(7)
    p = np.array([2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    exponents = rng.choice([0.5, 1.0, 1.5, 2.0], size=(kernels, 1))
    values = (
        rng.uniform(0.5, 5.0, (kernels, 1)) + rng.uniform(0.1, 2.0, (kernels, 1)) * p**exponents
    )
    repetitions = 5
    measured = values[:, :, None] * (1 + rng.uniform(-0.05, 0.05, (kernels, len(p), repetitions)))
    rows = kernels * len(p) * repetitions
    table = {
        "kernel": np.repeat([f"kernel{k}" for k in range(kernels)], len(p) * repetitions),
        "metric": np.full(rows, "time"),
        "p": np.tile(np.repeat(p, repetitions), kernels),
        "repetition": np.tile(np.arange(repetitions), kernels * len(p)),
        "value": measured.ravel(),
    }
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(table), path, row_group_size=50_000)


@pytest.mark.slow
def test_memory_grows_with_the_block_not_with_the_input(tmp_path):
    """The whole fit of 24,000 kernels needs far more memory than a small file; read 1,000
    kernels at a time, the same input needs about what the small file does."""
    small, large = tmp_path / "small.parquet", tmp_path / "large.parquet"
    one_parameter_table(small, 1_000)
    one_parameter_table(large, 24_000)
    out = str(tmp_path / "models.json")
    base = peak_mib("model", str(small), "--format", "json", "--out", out)
    whole = peak_mib("model", str(large), "--format", "json", "--out", out)
    streamed = peak_mib(
        "model", str(large), "--stream-kernels", "1000", "--format", "json", "--out", out
    )
    assert len(json.loads(Path(out).read_text())["models"]) == 24_000
    assert whole - base > 60  # the input's in-memory form and its models
    assert streamed - base < (whole - base) / 3, (base, whole, streamed)
