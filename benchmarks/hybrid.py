"""Hybrid against purely empirical modeling: hypothesis-space size and cross-validated error.

Two data sets, both modeled twice in one run (``perfcast.model.fit`` and
:class:`~perfcast.model.hybrid.HybridModeler` on the clang analysis of the source):

- synthetic: the kernels of ``tests/model/programs/hybrid.c`` (``stencil`` ~ n^2 + n, ``sweep`` ~
  m, ``lookup`` with a data-dependent loop reached by n only) measured on a 5 x 5 grid with 5
  repetitions and uniform multiplicative noise, 20 seeds per noise level;
- the Jacobi example: each function's largest per-rank instruction count under valgrind
  (``instructions.rank_max``) at p = 1..4 ranks and five grid sizes, with the static analysis of
  ``examples/jacobi/jacobi.c`` (annotated with ``#pragma perfcast`` where the row count depends
  on the rank), ``p`` standing for the source's ``size`` and ``iterations`` fixed at 4.

Run from the repository root: ``.venv/bin/python -m benchmarks.hybrid [--quick]``.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.core.experiment import Experiment
from perfcast.model import fit
from perfcast.model.hybrid import HybridModeler
from perfcast.static import analyze

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "model" / "programs" / "hybrid.c"
GRID = {"n": [16, 32, 64, 128, 256], "m": [10, 20, 40, 80, 160]}
TARGET = {"n": 1024.0, "m": 640.0}
TRUTH = {
    "main->stencil": lambda n, m: 2e-6 * n**2 + 3e-5 * n + 0 * m,
    "main->sweep": lambda n, m: 0.01 + 2e-4 * m + 0 * n,
    "main->lookup": lambda n, m: 1e-3 * np.sqrt(n) + 0 * m,
}


def measure(noise: float, seed: int) -> Experiment:
    """The synthetic kernels on the grid, five noisy repetitions each."""
    rng = np.random.default_rng(seed)
    n, m = (a.ravel() for a in np.meshgrid(GRID["n"], GRID["m"], indexing="ij"))
    rows = []
    for kernel, truth in TRUTH.items():
        exact = truth(n.astype(float), m.astype(float))
        for repetition in range(5):
            values = exact * (1 + rng.uniform(-noise, noise, exact.shape))
            rows.append(pd.DataFrame({"kernel": kernel, "metric": "time", "n": n, "m": m,
                                      "repetition": repetition, "value": values}))  # fmt: skip
    return Experiment.from_frame(pd.concat(rows, ignore_index=True), parameters=["n", "m"])


def compare(experiment: Experiment, modeler: HybridModeler) -> dict[str, dict[str, float]]:
    """Per kernel: candidate terms, CV SMAPE and (synthetic) 4x error of both approaches."""
    hybrid = {m.kernel: m for m in modeler.fit(experiment).models_}
    empirical = {m.kernel: m for m in fit(experiment)}
    result = {}
    for kernel in experiment.kernels:
        row = {
            "hybrid terms": modeler.predictors_[kernel][0],
            "empirical terms": modeler.predictors_[kernel][1],
            "hybrid CV SMAPE": hybrid[kernel].quality.cv_smape,
            "empirical CV SMAPE": empirical[kernel].quality.cv_smape,
        }
        if kernel in TRUTH:
            truth = TRUTH[kernel](TARGET["n"], TARGET["m"])
            for name, models in (("hybrid", hybrid), ("empirical", empirical)):
                prediction = models[kernel].evaluate({k: [v] for k, v in TARGET.items()})[0]
                row[f"{name} 4x error %"] = 100 * abs(prediction - truth) / truth
        result[kernel] = row
    return result


def synthetic_table(seeds: int) -> str:
    report = analyze([PROGRAM], ["n", "m"])
    lines = [
        "| noise | kernel | source | terms hybrid / empirical | median CV SMAPE % hybrid / "
        "empirical | median 4x error % hybrid / empirical |",
        "|---|---|---|---|---|---|",
    ]
    for noise in (0.01, 0.05, 0.10):
        runs = [compare(measure(noise, seed), HybridModeler(report)) for seed in range(seeds)]
        modeler = HybridModeler(report).fit(measure(noise, 0))
        for kernel in TRUTH:
            rows = [run[kernel] for run in runs]

            def median(key: str, rows: list = rows) -> float:
                return float(np.median([r[key] for r in rows]))

            lines.append(
                f"| ±{100 * noise:g} % | {kernel} | {modeler.provenance_[kernel]} | "
                f"{rows[0]['hybrid terms']} / {rows[0]['empirical terms']} | "
                f"{median('hybrid CV SMAPE'):.2f} / {median('empirical CV SMAPE'):.2f} | "
                f"{median('hybrid 4x error %'):.2f} / {median('empirical 4x error %'):.2f} |"
            )
    return "\n".join(lines)


def jacobi_table() -> str:
    """Critical-path instructions of the Jacobi functions, hybrid against empirical."""
    from perfcast.measure.campaign import run_campaign
    from perfcast.measure.spec import load_campaign

    example = ROOT / "examples" / "jacobi"
    subprocess.run(["make", "-s", "-C", str(example)], check=True)
    flags = shlex.split(
        subprocess.run(["mpicc", "--showme:compile"], capture_output=True, text=True).stdout
    )
    report = analyze(
        [example / "jacobi.c"],
        ["n", "size", "iterations"],
        [*flags, f"-I{ROOT / 'src/perfcast/measure/c'}"],
    )
    with tempfile.TemporaryDirectory() as scratch:
        campaign = Path(scratch) / "jacobi.toml"
        campaign.write_text(
            f'command = "{example}/build/jacobi {{n}} 4"\n'
            'launcher = "mpirun --oversubscribe -np {p}"\nmetrics = ["instructions"]\n'
            "timeout = 300\n[parameters]\np = [1, 2, 3, 4]\nn = [48, 96, 144, 192, 240]\n"
            "[environment]\nOMPI_ALLOW_RUN_AS_ROOT = '1'\n"
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = '1'\n"
        )
        experiment = run_campaign(load_campaign(campaign)).experiment
    experiment = experiment.select(kernels="jacobi_*", metric="instructions.rank_max")
    modeler = HybridModeler(report, {"p": "size"}, {"iterations": 4})
    rows = compare(experiment, modeler)
    lines = [
        "| kernel | source | terms hybrid / empirical | CV SMAPE % hybrid / empirical |",
        "|---|---|---|---|",
    ]
    for kernel, row in rows.items():
        lines.append(
            f"| {kernel} | {modeler.provenance_[kernel]} | {row['hybrid terms']} / "
            f"{row['empirical terms']} | {row['hybrid CV SMAPE']:.3g} / "
            f"{row['empirical CV SMAPE']:.3g} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print both tables as markdown with the command that produced them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 seeds instead of 20")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.hybrid" + (" --quick" if args.quick else "")
    print(f"Command: `{command}`\n")
    print("Synthetic kernels of tests/model/programs/hybrid.c (median over seeds):\n")
    print(synthetic_table(5 if args.quick else 20))
    print("\nJacobi example, largest per-rank instructions per function (valgrind, p = 1..4):\n")
    print(jacobi_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
