"""``perfcast model --workers N`` and ``--scheduler ADDRESS`` on real Dask clusters."""

from __future__ import annotations

import json
import socket

import pytest

import perfcast
import perfcast.api
from perfcast import cli
from perfcast.io import write_experiment
from tests.model.test_distributed import mixed_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def measurements(tmp_path_factory):
    path = tmp_path_factory.mktemp("cluster") / "runs.csv"
    write_experiment(mixed_experiment(40, {"p": [2, 4, 8, 16, 32]}, seed=2), path)
    return path


def model_json(capsys, *argv: str) -> dict:
    assert cli.main(["model", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_local_workers_give_the_models_of_one_process(measurements, capsys):
    alone = model_json(capsys, str(measurements), "--metric", "all")
    on_workers = model_json(capsys, str(measurements), "--metric", "all", "--workers", "2")
    assert on_workers["models"] == alone["models"]
    assert len(alone["models"]) == 80


def test_a_running_scheduler_is_used(measurements, capsys):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = model_json(capsys, str(measurements), "--scheduler", cluster.scheduler_address)
        with distributed.Client(cluster) as client:
            assert client.scheduler_info(n_workers=-1)["workers"]  # the worker is still there
    assert remote["models"] == model_json(capsys, str(measurements))["models"]


def test_an_unreachable_scheduler_fails_with_one_line(measurements, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    assert cli.main(["model", str(measurements), "--scheduler", address]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(
        f"perfcast: failed: cannot reach the Dask scheduler at {address}"
    )
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("garbage", "scheduler address 'garbage' is not PROTOCOL://HOST:PORT"),
        ("tcp://", "scheduler address 'tcp://' is not PROTOCOL://HOST:PORT"),
        ("tcp://host", "scheduler address 'tcp://host' is not PROTOCOL://HOST:PORT"),
        ("tcp://host:port", "scheduler address 'tcp://host:port' is not PROTOCOL://HOST:PORT"),
        ("tcp://127.0.0.1:99999", "'tcp://127.0.0.1:99999': port 99999 is not in 1..65535"),
        ("foo://127.0.0.1:8786", "'foo' is not a protocol of dask.distributed"),
    ],
)
def test_a_malformed_scheduler_address_is_a_usage_error(measurements, capsys, address, message):
    # Before: exit status 1 after a failed connection, as for an unreachable scheduler.
    with pytest.raises(SystemExit) as stop:
        cli.main(["model", str(measurements), "--scheduler", address])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --scheduler: scheduler address" in err and message in err
    assert "Traceback" not in err


def test_a_scheduler_address_without_protocol_is_tcp():
    assert perfcast.api.scheduler_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert perfcast.api.scheduler_address("tls://[::1]:1") == "tls://[::1]:1"
    with pytest.raises(ValueError, match="is not PROTOCOL://HOST:PORT"):
        perfcast.dask_client(scheduler="tcp://:1").__enter__()


@pytest.mark.parametrize("workers", ["0", "two"])
def test_a_bad_worker_count_is_a_usage_error(measurements, capsys, workers):
    with pytest.raises(SystemExit) as stop:
        cli.main(["model", str(measurements), "--workers", workers])
    assert stop.value.code == 2
    assert f"'{workers}' is not a whole number of workers >= 1" in capsys.readouterr().err


def test_workers_and_scheduler_exclude_each_other(measurements, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["model", str(measurements), "--workers", "2", "--scheduler", "tcp://x:1"])
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_worker_count_far_beyond_the_cores_is_a_usage_error(measurements, capsys):
    # Before: --workers 100000 started worker processes until the machine gave out.
    with pytest.raises(SystemExit) as stop:
        cli.main(["model", str(measurements), "--workers", "100000"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "'100000' workers: a local cluster takes at most" in err and "--scheduler" in err
