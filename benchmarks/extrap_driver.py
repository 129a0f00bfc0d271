"""Fit a data set with Extra-P; runs INSIDE Extra-P's own virtual environment.

Usage: ``<extrap-venv>/bin/python extrap_driver.py INPUT.npz OUTPUT.json [--negative-exponents]``

The input holds ``parameters`` (d names), ``kernels`` (K names), ``points`` (P, d),
``values`` (K, P, R) and ``eval_points`` (Q, d). The driver builds one Extra-P experiment with a
call path per kernel, fits it with Extra-P's default modeler (single-parameter for one parameter,
multi-parameter otherwise) and writes, per kernel, the model's constant, its terms (each factor's
exponent and log exponent), the model string and its predictions at ``eval_points``, plus the wall
and CPU time of the modeling alone (building the experiment and a warm-up fit of the first two
kernels are not timed).

This file imports only numpy and extrap: perfcast cannot be installed next to Extra-P (numpy < 2).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from fractions import Fraction

import numpy as np
from extrap.entities.callpath import Callpath
from extrap.entities.coordinate import Coordinate
from extrap.entities.experiment import Experiment
from extrap.entities.measurement import Measure, Measurement
from extrap.entities.metric import Metric
from extrap.entities.parameter import Parameter
from extrap.modelers.model_generator import ModelGenerator

WARM_UP_KERNELS = 2


def build_experiment(data) -> tuple[Experiment, list[Callpath], Metric]:
    """An Extra-P experiment holding every repetition of every kernel."""
    experiment = Experiment()
    for name in data["parameters"]:
        experiment.add_parameter(Parameter(str(name)))
    metric = Metric("time")
    experiment.add_metric(metric)
    coordinates = [Coordinate(*(float(x) for x in point)) for point in data["points"]]
    for coordinate in coordinates:
        experiment.add_coordinate(coordinate)
    callpaths = [Callpath(str(name)) for name in data["kernels"]]
    values = data["values"]
    for kernel, callpath in enumerate(callpaths):
        experiment.add_callpath(callpath)
        for point, coordinate in enumerate(coordinates):
            repetitions = values[kernel, point]
            repetitions = repetitions[~np.isnan(repetitions)]
            experiment.add_measurement(Measurement(coordinate, callpath, metric, repetitions))
    return experiment, callpaths, metric


def configure(generator: ModelGenerator, negative_exponents: bool, median: bool) -> None:
    """Allow negative exponents in the single-parameter search (also inside the multi-parameter
    modeler) when asked to; model the medians of the repetitions when asked to.

    ``ModelGenerator(use_median=True)`` reaches only the multi-parameter modeler in Extra-P
    4.2.5 (the single-parameter branch of ``_choose_modeler`` never sets ``use_measure``), so
    the measure is set on the modeler itself.
    """
    modeler = generator.modeler
    single = getattr(modeler, "single_parameter_modeler", modeler)
    single.allow_negative_exponents = negative_exponents
    modeler.use_measure = Measure.MEDIAN if median else Measure.MEAN


def describe_term(term, parameter_index: int | None) -> list[dict]:
    """Factors of one Extra-P term as ``{parameter, exponent, log_exponent}`` (index-based)."""
    pairs = term.parameter_term_pairs if parameter_index is None else [(parameter_index, term)]
    factors = []
    for index, compound in pairs:
        exponent, log_exponent = Fraction(0), Fraction(0)
        for simple in compound.simple_terms:
            if simple.term_type == "polynomial":
                exponent += Fraction(simple.exponent)
            else:
                log_exponent += Fraction(simple.exponent)
        factors.append(
            {"parameter": int(index), "exponent": str(exponent), "log_exponent": str(log_exponent)}
        )
    return factors


def coefficient_of(term) -> float:
    """Extra-P keeps the coefficient on the outer term; inner compound terms carry 1."""
    coefficient = float(term.coefficient)
    for _, compound in getattr(term, "parameter_term_pairs", []):
        coefficient *= float(compound.coefficient)
    return coefficient


def describe_model(model, parameter_names: list[str], eval_points: np.ndarray) -> dict:
    """Constant, terms, string and predictions of one fitted Extra-P model."""
    function = model.hypothesis.function
    single = len(parameter_names) == 1
    terms = [
        {
            "coefficient": coefficient_of(term),
            "factors": describe_term(term, 0 if single else None),
        }
        for term in function.compound_terms
    ]
    if single:
        predictions = function.evaluate(eval_points[:, 0])
    else:
        predictions = function.evaluate(eval_points.T.copy())
    predictions = np.broadcast_to(np.asarray(predictions, dtype=float), (len(eval_points),))
    return {
        "constant": float(function.constant_coefficient),
        "terms": terms,
        "model": function.to_string(*parameter_names),
        "predictions": [float(x) for x in predictions],
    }


def warm_up(data, negative_exponents: bool, median: bool) -> None:
    """Model the first kernels once, untimed, so lazy imports and caches do not count."""
    first = dict(
        data, kernels=data["kernels"][:WARM_UP_KERNELS], values=data["values"][:WARM_UP_KERNELS]
    )
    generator = ModelGenerator(build_experiment(first)[0])
    configure(generator, negative_exponents, median)
    generator.model_all()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--negative-exponents", action="store_true")
    parser.add_argument("--median", action="store_true", help="model the medians, not the means")
    args = parser.parse_args(argv)

    with np.load(args.input, allow_pickle=False) as archive:
        data = {key: archive[key] for key in archive.files}
    parameter_names = [str(name) for name in data["parameters"]]
    experiment, callpaths, metric = build_experiment(data)
    generator = ModelGenerator(experiment)
    configure(generator, args.negative_exponents, args.median)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm_up(data, args.negative_exponents, args.median)
        start, start_cpu = time.perf_counter(), time.process_time()
        generator.model_all()
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - start_cpu

    models = {
        str(callpath.name): describe_model(
            generator.models[(callpath, metric)], parameter_names, data["eval_points"]
        )
        for callpath in callpaths
    }
    result = {
        "modeler": type(generator.modeler).__name__,
        "negative_exponents": bool(args.negative_exponents),
        "median": bool(args.median),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "models": models,
    }
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
