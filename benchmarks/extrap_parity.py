"""Compare what Extra-P's file readers and perfcast's readers make of every shared Extra-P file.

Usage::

    .venv/bin/python benchmarks/extrap_parity.py /work/extrap-venv/bin/python [--data DIR]

The first argument is the Python interpreter of an environment with Extra-P (PyPI ``extrap``)
installed; Extra-P runs there in a subprocess because it pins numpy < 2. For every file under
``tests/data/extrap`` (text, JSON, JSON Lines, Talpas) the script compares parameters,
points, kernels, metrics and every measured value (the repetitions where Extra-P keeps them, and
mean, median, minimum, maximum and repetition count everywhere) and prints one line per file. The
exit status is 1 when any difference was found. Cube file sets are listed as not compared:
perfcast.io has no Cube reader.

Then every file both tools read is written with perfcast's Extra-P writers (text, JSON Lines,
JSON) and read back with Extra-P, which must see what it saw in the original.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, VALUE
from perfcast.io import read_experiment, write_experiment
from perfcast.io.extrap_text import DEFAULT_KERNEL, DEFAULT_METRIC

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "extrap"
FOLDERS = ("text", "json", "jsonlines", "talpas")
# Extra-P's complaint about a kernel measured at fewer points than the file has; perfcast's data
# model allows that, so such files are read by perfcast only (not counted as a difference).
INCOMPLETE_GRID = "does not match the number of coordinates"

# Runs inside the Extra-P environment: reads each file given on the command line with the reader
# Extra-P's command line would pick for its folder and prints what Extra-P holds as JSON.
EXTRAP_DUMP = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader

READERS = {"text": TextFileReader, "json": JsonFileReader, "jsonlines": JsonFileReader,
           "talpas": TalpasFileReader}

def dump(folder, path):
    reader = READERS[folder]()
    reader.keep_values = True
    exp = reader.read_experiment(path)
    measurements = []
    for (callpath, metric), items in exp.measurements.items():
        for m in items:
            values = None if m.values is None else np.ma.compressed(m.values).tolist()
            measurements.append({
                "kernel": callpath.name, "metric": metric.name,
                "point": [float(c) for c in m.coordinate],
                "values": values, "mean": float(m.mean), "median": float(m.median),
                "minimum": float(m.minimum), "maximum": float(m.maximum),
                "repetitions": int(m.repetitions)})
    return {"parameters": [p.name for p in exp.parameters],
            "points": [[float(c) for c in coord] for coord in exp.coordinates],
            "kernels": [c.name for c in exp.callpaths],
            "metrics": [m.name for m in exp.metrics],
            "measurements": measurements}

result = {}
for item in sys.argv[1:]:
    folder, path = item.split("=", 1)
    try:
        result[path] = dump(folder, path)
    except Exception as error:
        result[path] = {"error": f"{type(error).__name__}: {error}"}
print(json.dumps(result))
"""


def extrap_view(python: str, files: list[tuple[str, Path]]) -> dict[str, dict]:
    """Run Extra-P's readers on ``files`` in the interpreter ``python``."""
    arguments = [f"{folder}={path}" for folder, path in files]
    done = subprocess.run(
        [python, "-c", EXTRAP_DUMP, *arguments], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"Extra-P's side failed:\n{done.stderr}")
    return json.loads(done.stdout)


def perfcast_view(path: Path) -> dict:
    """perfcast's reading of ``path`` in the shape :func:`extrap_view` produces."""
    experiment = read_experiment(path)
    names = list(experiment.parameter_names)
    frame = experiment.frame
    measurements = []
    for (kernel, metric, *point), group in frame.groupby([KERNEL, METRIC, *names], sort=False):
        values = group[VALUE].to_numpy()
        measurements.append(
            {
                "kernel": kernel,
                "metric": metric,
                "point": [float(c) for c in point],
                "values": values.tolist(),
                "mean": float(np.mean(values)),
                "median": float(np.median(values)),
                "minimum": float(np.min(values)),
                "maximum": float(np.max(values)),
                "repetitions": len(values),
            }
        )
    points = frame[names].drop_duplicates().to_numpy(dtype=float).tolist()
    return {
        "parameters": names,
        "points": points,
        "kernels": experiment.kernels,
        "metrics": experiment.metric_names,
        "measurements": measurements,
    }


def rename_defaults(view: dict) -> tuple[dict, list[str]]:
    """Apply perfcast's documented names for Extra-P's empty kernel and metric names.

    Extra-P's text reader calls the metric of DATA before any METRIC (and the kernel of DATA
    before any REGION) ``""``; perfcast names them ``<default>`` and ``<root>`` like Extra-P's
    JSON Lines reader does (see perfcast.io.extrap_text).
    """
    renames = {"kernel": DEFAULT_KERNEL, "metric": DEFAULT_METRIC}
    notes = [f"{key} '' is '{new}'" for key, new in renames.items() if "" in view[key + "s"]]
    if not notes:
        return view, []
    view = dict(view)
    for key, new in renames.items():
        view[key + "s"] = [name or new for name in view[key + "s"]]
    view["measurements"] = [
        {**m, **{key: m[key] or new for key, new in renames.items()}} for m in view["measurements"]
    ]
    return view, notes


def differences(extrap: dict, ours: dict) -> list[str]:
    """Human-readable differences between two views of one file (empty when they agree)."""
    found = []
    for key in ("parameters", "kernels", "metrics"):
        if extrap[key] != ours[key]:
            found.append(f"{key}: Extra-P {extrap[key]} perfcast {ours[key]}")
    if sorted(map(tuple, extrap["points"])) != sorted(map(tuple, ours["points"])):
        found.append(f"points: Extra-P {extrap['points']} perfcast {ours['points']}")
    theirs = {(m["kernel"], m["metric"], tuple(m["point"])): m for m in extrap["measurements"]}
    mine = {(m["kernel"], m["metric"], tuple(m["point"])): m for m in ours["measurements"]}
    for key in sorted(set(theirs) | set(mine), key=str):
        if key not in mine or key not in theirs:
            side = "perfcast" if key not in mine else "Extra-P"
            found.append(f"{key}: missing in {side}")
            continue
        a, b = theirs[key], mine[key]
        if None not in (a["values"], b["values"]) and a["values"] != b["values"]:
            found.append(f"{key}: values Extra-P {a['values']} perfcast {b['values']}")
        for stat in ("mean", "median", "minimum", "maximum"):
            if not np.isclose(a[stat], b[stat], rtol=1e-12, atol=0.0):
                found.append(f"{key}: {stat} Extra-P {a[stat]} perfcast {b[stat]}")
        if a["repetitions"] != b["repetitions"]:
            found.append(
                f"{key}: repetitions Extra-P {a['repetitions']} perfcast {b['repetitions']}"
            )
    return found


def compare_readers(python: str, data: Path) -> tuple[int, int, int, dict[Path, dict]]:
    """Print one verdict per file; returns agreeing, differing, perfcast-only and the files both
    read (with Extra-P's view of each)."""
    files = [
        (folder, path)
        for folder in FOLDERS
        for path in sorted((data / folder).rglob("*"))
        if path.is_file()
    ]
    theirs = extrap_view(python, files)
    agree = disagree = extended = 0
    both_read: dict[Path, dict] = {}
    for folder, path in files:
        name = path.relative_to(data)
        extrap = theirs[str(path)]
        try:
            ours = perfcast_view(path)
        except InputError as error:
            ours = {"error": str(error)}
        if "error" in extrap or "error" in ours:
            if "error" in extrap and "error" in ours:
                verdict = "both reject"
                agree += 1
            elif INCOMPLETE_GRID in extrap.get("error", ""):
                verdict = "perfcast only"
                extended += 1
            else:
                verdict = "DIFFERENT"
                disagree += 1
            print(
                f"{verdict:13} {name}: Extra-P {extrap.get('error', 'reads it')}; "
                f"perfcast {ours.get('error', 'reads it')}"
            )
            continue
        notes: list[str] = []
        if folder == "text":
            extrap, notes = rename_defaults(extrap)
        both_read[path] = extrap
        found = differences(extrap, ours)
        if found:
            disagree += 1
            print(f"{'DIFFERENT':13} {name}:")
            for line in found[:10]:
                print(f"    {line}")
        else:
            agree += 1
            kernels, points = len(ours["kernels"]), len(ours["points"])
            values = sum(m["repetitions"] for m in ours["measurements"])
            print(
                f"{'same':13} {name}: {kernels} kernels, {len(ours['metrics'])} metrics, "
                f"{points} points, {values} values" + "".join(f"; {n}" for n in notes)
            )
    return agree, disagree, extended, both_read


def compare_writers(python: str, both_read: dict[Path, dict], data: Path) -> int:
    """Write every file both tools read with perfcast's Extra-P writers, read the output with
    Extra-P and compare with Extra-P's reading of the original; returns the number of files
    that differ."""
    writers = {"extrap-text": ("text", ".txt"), "extrap-jsonlines": ("jsonlines", ".jsonl")}
    writers["extrap-json"] = ("json", ".json")
    with tempfile.TemporaryDirectory() as folder:
        written: list[tuple[str, Path]] = []
        origin: dict[Path, tuple[Path, str]] = {}
        for index, path in enumerate(both_read):
            experiment = read_experiment(path)
            for output_format, (reader, suffix) in writers.items():
                out = Path(folder) / f"{index}-{output_format}{suffix}"
                write_experiment(experiment, out, output_format)
                written.append((reader, out))
                origin[out] = (path, output_format)
        theirs = extrap_view(python, written)
    failures = 0
    for out, (path, output_format) in origin.items():
        view = theirs[str(out)]
        found = [view["error"]] if "error" in view else differences(both_read[path], view)
        if found:
            failures += 1
            print(f"{'DIFFERENT':13} {path.relative_to(data)} written as {output_format}:")
            for line in found[:10]:
                print(f"    {line}")
    print(
        f"perfcast's Extra-P writers: {len(origin) - failures} of {len(origin)} written files "
        f"({len(both_read)} inputs x {len(writers)} formats) read back by Extra-P unchanged"
    )
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("python", help="interpreter of an environment with Extra-P installed")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the Extra-P test files")
    args = parser.parse_args(argv)
    data = args.data.resolve()
    agree, disagree, extended, both_read = compare_readers(args.python, data)
    cube_sets = sorted(p for p in (data / "cubeset").glob("*") if p.is_dir())
    for path in cube_sets:
        print(f"{'not compared':13} {path.relative_to(data)}: perfcast.io has no Cube reader")
    print(
        f"readers: {agree} files agree, {disagree} differ, {extended} read only by perfcast "
        f"(kernels measured at a subset of the points), {len(cube_sets)} Cube sets not compared"
    )
    failures = compare_writers(args.python, both_read, data)
    return 1 if disagree or failures else 0


if __name__ == "__main__":
    sys.exit(main())
