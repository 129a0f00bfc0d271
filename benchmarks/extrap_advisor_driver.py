"""Ask Extra-P's measurement point advisor for points; runs INSIDE Extra-P's environment.

Usage: ``<extrap-venv>/bin/python extrap_advisor_driver.py INPUT.npz OUTPUT.json``

The input holds ``parameters`` (d names, the first the number of processes), ``points`` (P, d),
``values`` (F, P, R: one kernel per case), ``budgets`` (F, B: total core time per case and
budget, the measurements already taken included, as Extra-P counts it) and ``series`` (d
comma-separated value lists: the search space, given to the advisor as its manual parameter
value series). For every case and budget the driver models the kernel with Extra-P's default
modeler, runs ``MeasurementPointAdvisor.suggest_points`` and writes the suggested coordinates
with the repetition count Extra-P asks for at each (it suggests one repetition at a time).

This file imports only numpy, extrap and its sibling driver (for building the experiment).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from extrap.modelers.model_generator import ModelGenerator
from extrap.mpa.measurement_point_advisor import MeasurementPointAdvisor
from extrap_driver import build_experiment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args(argv)
    with np.load(args.input, allow_pickle=False) as archive:
        data = {key: archive[key] for key in archive.files}
    series = [str(s) for s in data["series"]]
    cases = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case, values in enumerate(data["values"]):
            one = dict(data, kernels=np.array(["kernel"]), values=values[None])
            experiment, callpaths, metric = build_experiment(one)
            generator = ModelGenerator(experiment)
            generator.model_all()
            suggestions = []
            for budget in data["budgets"][case]:
                advisor = MeasurementPointAdvisor(
                    float(budget), 0, experiment, True, series, False, None, generator
                )
                points, repetitions = advisor.suggest_points(callpaths, metric)
                counts: dict[tuple[float, ...], int] = {}
                for index, point in enumerate(points):
                    key = tuple(float(v) for v in point.as_tuple())
                    wanted = int(repetitions[index]) if repetitions is not None else 5
                    counts[key] = max(counts.get(key, 0), wanted)
                suggestions.append([[list(k), n] for k, n in counts.items()])
            cases.append(suggestions)
            # Written after every case: a long run shows its progress and keeps what it did.
            seconds = time.perf_counter() - start
            with open(args.output, "w", encoding="utf-8") as handle:
                json.dump({"seconds": seconds, "cases": cases}, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
