"""Size and build time of the HTML report (and diagnose) for many kernels.

Run: .venv/bin/python benchmarks/report_scale.py [KERNELS]
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction

import numpy as np
import pandas as pd

from perfcast.analyze.diagnosis import diagnose
from perfcast.core.experiment import Experiment
from perfcast.core.function import Factor, Model, Term, Uncertainty
from perfcast.display.html import build_report


def main(kernels: int = 1000) -> None:
    rng = np.random.default_rng(0)
    p = np.array([2, 4, 8, 16, 32, 64], dtype=float)
    coefficients = rng.uniform(0.1, 100, kernels)
    exponents = rng.choice([-1.0, 0.5, 1.0], kernels)
    truth = coefficients[:, None] * p[None, :] ** exponents[:, None]
    values = truth[:, :, None] * np.exp(rng.normal(0, 0.03, (kernels, len(p), 3)))
    k, j, r = np.meshgrid(np.arange(kernels), np.arange(len(p)), np.arange(3), indexing="ij")
    frame = pd.DataFrame(
        {
            "kernel": np.char.add("main->k", k.ravel().astype(str)),
            "metric": "time",
            "p": p[j.ravel()],
            "repetition": r.ravel(),
            "value": values.ravel(),
        }
    )
    experiment = Experiment.from_frame(frame, ["p"], source="benchmark")
    models = [
        Model(
            f"main->k{i}",
            "time",
            ("p",),
            0.0,
            (Term(c, (Factor("p", Fraction(e)),)),),
            uncertainty=Uncertainty(np.diag([1e-6, (0.02 * c) ** 2]), 0.03**2, 12),
        )
        for i, (c, e) in enumerate(zip(coefficients, exponents, strict=True))
    ]
    start = time.perf_counter()
    result = diagnose(experiment, models)
    middle = time.perf_counter()
    html = build_report(experiment, models, result)
    end = time.perf_counter()
    print(f"kernels: {kernels}")
    print(f"report size: {len(html.encode()) / 2**20:.2f} MiB")
    print(f"diagnose: {middle - start:.2f} s, build_report: {end - middle:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
