"""Fit one-parameter data with Extra-P's segmented modeler; runs INSIDE Extra-P's environment.

Usage: ``<extrap-venv>/bin/python extrap_segmented_driver.py INPUT.npz OUTPUT.json``

The input is that of ``extrap_driver.py`` (one parameter). For every kernel the output gives the
number of segments Extra-P found (1 or 2), the coordinate(s) of its change point (one common
point of both segments, or the last point of the first and the first of the second) and the
lead order ``[exponent, log_exponent]`` of its last segment, plus the wall time of modeling.

This file imports only numpy, extrap and its sibling driver (for building the experiment).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from fractions import Fraction

import numpy as np
from extrap.entities.model import SegmentedModel
from extrap.modelers.model_generator import ModelGenerator
from extrap_driver import build_experiment


def lead_order(function) -> list[str]:
    """``[exponent, log_exponent]`` of the fastest-growing term of a single-parameter function."""
    orders = [(Fraction(0), Fraction(0))]
    for term in function.compound_terms:
        exponent, log_exponent = Fraction(0), Fraction(0)
        for simple in term.simple_terms:
            if simple.term_type == "polynomial":
                exponent += Fraction(simple.exponent)
            else:
                log_exponent += Fraction(simple.exponent)
        orders.append((exponent, log_exponent))
    best = max(orders)
    return [str(best[0]), str(best[1])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args(argv)
    with np.load(args.input, allow_pickle=False) as archive:
        data = {key: archive[key] for key in archive.files}
    experiment, callpaths, metric = build_experiment(data)
    generator = ModelGenerator(experiment, modeler="Segmented")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        generator.model_all()
        seconds = time.perf_counter() - start
    models = {}
    for callpath in callpaths:
        model = generator.models[(callpath, metric)]
        if isinstance(model, SegmentedModel):
            models[str(callpath.name)] = {
                "segments": len(model.segment_models),
                "change_points": [float(m.coordinate[0]) for m in model.changing_points],
                "lead": lead_order(model.segment_models[-1].hypothesis.function),
            }
        else:
            models[str(callpath.name)] = {
                "segments": 1,
                "change_points": [],
                "lead": lead_order(model.hypothesis.function),
            }
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump({"seconds": seconds, "models": models}, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
