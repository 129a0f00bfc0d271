"""The example MPI applications: campaign files, builds, runs under mpirun with 1-4 ranks."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from region_helpers import MPI_ENV, REPO, by_key, read_records, require, run

from perfcast.measure.instrument import library_dir

EXAMPLES = REPO / "examples"
CAMPAIGN_KEYS = {"command", "launcher", "repetitions", "timeout", "parameters", "environment"}

# app -> (arguments for a quick run, visits of every region, line rank 0 prints)
APPS = {
    "jacobi": (
        ["96"],
        {"halo": 100, "compute": 100, "residual": 10},
        r"jacobi n=96 p={p} iterations=100 residual=1\.649914e\+00",
    ),
    "cg": (
        ["64"],
        {
            "setup": 1,
            "solve": 1,
            "solve->dot": 51,
            "solve->exchange": 50,
            "solve->spmv": 50,
            "solve->axpy": 50,
        },
        r"cg n=64 p={p} iterations=50 relative_residual=\d\.\d+e[-+]\d+",
    ),
    "samplesort": (
        ["100000"],
        {
            "generate": 1,
            "local_sort": 1,
            "splitters": 1,
            "partition": 1,
            "exchange": 1,
            "merge": 1,
            "verify": 1,
        },
        r"samplesort n=100000 p={p} sorted=yes",
    ),
    "histogram": (
        ["200000", "4096"],
        {"sample": 1, "local_histogram": 1, "wait": 1, "serial_reduce": 1, "statistics": 1},
        r"histogram n=200000 p={p} bins=4096 mean=(1\.99|2\.00)\d\d median=\d\.\d+",
    ),
}


def test_every_example_is_listed():
    # examples/data holds measured profiles for the README's Python examples, not an application
    applications = [p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "data"]
    assert sorted(applications) == sorted(APPS)


@pytest.mark.parametrize("app", sorted(APPS))
def test_campaign_file(app):
    campaign = tomllib.loads((EXAMPLES / app / "campaign.toml").read_text())
    assert set(campaign) == CAMPAIGN_KEYS
    parameters = campaign["parameters"]
    assert set(parameters) == {"p", "n"}
    for values in parameters.values():
        assert len(values) >= 3 and all(isinstance(v, int) and v > 0 for v in values)
    assert campaign["command"].split()[0] == f"./build/{app}"
    assert campaign["launcher"] == "mpirun --oversubscribe -np {p}"
    placeholders = set(re.findall(r"{(\w+)}", campaign["command"] + campaign["launcher"]))
    assert placeholders == set(parameters)
    assert campaign["repetitions"] >= 3 and 0 < campaign["timeout"] <= 120
    assert campaign["environment"] == MPI_ENV
    assert f"APP := {app}\n" in (EXAMPLES / app / "Makefile").read_text()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples copied to a temporary directory and built there with their Makefiles."""
    require("mpicc")
    root = tmp_path_factory.mktemp("examples")
    shutil.copy(EXAMPLES / "common.mk", root)
    for app in APPS:
        shutil.copytree(EXAMPLES / app, root / app, ignore=shutil.ignore_patterns("build"))
        subprocess.run(
            ["make", "-s", "-C", str(root / app), f"PERFCAST_DIR={library_dir()}"],
            check=True,
            capture_output=True,
        )
    return root


@pytest.mark.slow
@pytest.mark.parametrize("app", sorted(APPS))
def test_example_runs_with_one_to_four_ranks(built, app, tmp_path):
    arguments, visits, printed = APPS[app]
    for ranks in (1, 2, 3, 4):
        out = tmp_path / f"{ranks}.jsonl"
        command = ["mpirun", "--oversubscribe", "-np", str(ranks), str(built / app / "build" / app)]
        result = run([*command, *arguments], out)
        assert re.fullmatch(printed.format(p=ranks), result.stdout.strip()), result.stdout
        table = by_key(read_records(out))
        assert table.pop((app, "ranks")) == ranks
        assert {k: v for (k, m), v in table.items() if m == "visits"} == visits
        assert set(table) == {(k, m) for k in visits for m in ("time", "time.mean", "visits")}
        for kernel in visits:
            assert 0 <= table[(kernel, "time.mean")] <= table[(kernel, "time")] < 60


@pytest.mark.slow
def test_examples_without_regions_write_nothing(built, tmp_path):
    out = tmp_path / "out.jsonl"
    for app, (arguments, _, printed) in APPS.items():
        binary = built / app / "build" / f"{app}-noregions"
        result = run(["mpirun", "--oversubscribe", "-np", "2", str(binary), *arguments], out)
        assert re.fullmatch(printed.format(p=2), result.stdout.strip())
    assert not out.exists()


def inclusive_instructions(binary: Path, *arguments: str) -> dict[str, int]:
    """Inclusive instruction counts per function of one run under callgrind."""
    profile = binary.parent / "callgrind.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", str(binary)]
        + list(arguments),
        check=True,
        capture_output=True,
        env={**MPI_ENV, "PATH": "/usr/bin:/bin"},
    )
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(profile)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    counts = {}
    for match in re.finditer(r"^\s*([\d,]+) \([^)]*\)\s+\S+:(\w+) \[", annotated, re.MULTILINE):
        counts.setdefault(match.group(2), int(match.group(1).replace(",", "")))
    return counts


def differences(values: list[int], order: int) -> list[int]:
    """The ``order``-th finite differences of a sequence."""
    for _ in range(order):
        values = [b - a for a, b in zip(values, values[1:], strict=False)]
    return values


@pytest.mark.slow
def test_jacobi_instruction_counts_are_exact_polynomials_in_n(built):
    """compute is exactly quadratic and halo exactly linear in n (p = 1), the runner's premise."""
    require("valgrind")
    sizes = (17, 24, 31, 38)  # equally spaced, not multiples of a vector width
    binary = built / "jacobi" / "build" / "jacobi"
    counts = [inclusive_instructions(binary, str(n), "10") for n in sizes]
    compute = [c["jacobi_compute"] for c in counts]
    halo = [c["jacobi_halo"] for c in counts]
    assert differences(compute, 3) == [0] and differences(compute, 2)[0] > 0
    assert differences(halo, 2) == [0, 0] and differences(halo, 1)[0] > 0
