"""Compare perfcast's cube-set importer with Extra-P's cube reader on the shared cube sets.

Extra-P pins numpy < 2, so it runs in its own virtual environment (``--extrap-python``,
default ``benchmarks/.extrap-venv/bin/python``; create it with
``python3 -m venv benchmarks/.extrap-venv && benchmarks/.extrap-venv/bin/pip install extrap``).
Prints, per cube set, the parameters, call paths and metrics both tools find and the largest
relative difference of the per-point mean values (Extra-P's exclusive values against perfcast's
``<metric>``).

    .venv/bin/python benchmarks/cube_parity.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from perfcast.io.cube import read_cube

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "tests" / "data" / "extrap" / "cubeset"

EXTRAP_DUMP = """
import json, sys, warnings
warnings.simplefilter("ignore")
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2
experiment = CubeFileReader2().read_experiment(sys.argv[1])
values = {}
for (callpath, metric), measurements in experiment.measurements.items():
    for m in measurements:
        point = json.dumps(list(m.coordinate.as_tuple()))
        values["|".join([str(callpath), str(metric), point])] = m.mean
print(json.dumps({
    "parameters": [p.name for p in experiment.parameters],
    "callpaths": [str(c) for c in experiment.callpaths],
    "metrics": [str(m) for m in experiment.metrics],
    "values": values,
}))
"""


def compare(cube_set: Path, extrap_python: str) -> dict:
    """Read ``cube_set`` with both tools; return what each found and the largest difference."""
    output = subprocess.run(
        [extrap_python, "-c", EXTRAP_DUMP, str(cube_set)], capture_output=True, text=True,
        check=True,
    ).stdout  # fmt: skip
    extrap = json.loads(output)
    ours = read_cube(cube_set)
    names = list(ours.parameter_names)
    means = ours.frame.groupby(["kernel", "metric", *names])["value"].mean()
    differences = []
    for key, value in extrap["values"].items():
        callpath, metric, point = key.split("|")
        mine = means[(callpath, metric, *json.loads(point))]
        scale = max(abs(value), abs(mine), 1e-300)
        differences.append(abs(mine - value) / scale)
    return {
        "set": cube_set.name,
        "parameters": (extrap["parameters"], names),
        "callpaths": (extrap["callpaths"], ours.kernels),
        "metrics": (extrap["metrics"], [m for m in ours.metric_names]),
        "values compared": len(differences),
        "max relative difference": float(np.max(differences)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extrap-python", default=str(ROOT / "benchmarks/.extrap-venv/bin/python"))
    args = parser.parse_args()
    for name in ("single_parameter", "multi_parameter"):
        result = compare(SETS / name, args.extrap_python)
        print(f"== {result['set']}")
        for what in ("parameters", "callpaths", "metrics"):
            extrap, ours = result[what]
            print(f"{what:>10}: Extra-P {extrap}")
            print(f"{'':>10}  perfcast {ours}")
        print(f"values compared: {result['values compared']}, "
              f"max relative difference: {result['max relative difference']:.3g}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
