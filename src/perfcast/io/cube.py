"""Score-P / Scalasca CUBE4 profiles (``.cubex``), read with pycubexr.

A cube set is a directory with one sub-directory per run, each holding a ``.cubex`` profile;
the sub-directory's name carries the run's parameters and repetition (``mm.x10y1z1.r1``). Without
a pattern the name is read the way Extra-P reads cube sets (``<prefix>.<name><value>...``,
``.r<rep>``); parameters that are the same in every run are dropped (and recorded).

Kernels are the call paths of the call tree (region names joined by ``->``). Every cube metric
with data becomes two metrics: ``<name>`` holds exclusive values and ``<name>_inclusive`` the
inclusive ones, whichever way the cube stores them (``time`` is stored inclusive, ``visits``
exclusive; pycubexr converts). Minimum and maximum metrics (``min_time``, ``max_time``: the
shortest and longest single visit) are kept as stored under their own name. Values of several
locations (processes, threads) reduce to one per run by ``location_statistic`` (default
``mean``). Units: ``sec`` becomes ``s``, ``occ`` and ``#`` become ``count``.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import CALL_PATH_SEPARATOR, KERNEL, METRIC, VALUE, Experiment, Metric
from perfcast.io.profile_set import Run, build_experiment

NAME = "cube"
SUFFIX = ".cubex"
INCLUSIVE_SUFFIX = "_inclusive"
LOCATION_STATISTICS = ("mean", "sum", "min", "max")
_UNITS = {"sec": "s", "occ": "count", "#": "count"}


def sniff(path: Path, head: str) -> bool:
    """True for a ``.cubex`` file or a directory holding a cube set."""
    if path.is_dir():
        return bool(profile_files(path, strict=False))
    return path.suffix == SUFFIX


def read(path: Path) -> Experiment:
    """Read a cube set (or one profile) with default settings."""
    return read_cube(path)


def read_cube(
    paths: str | Path | Sequence[str | Path],
    *,
    pattern: str | None = None,
    params: Mapping[str, str] | None = None,
    location_statistic: str = "mean",
) -> Experiment:
    """Read CUBE4 profiles, one run each, into an experiment.

    Parameters
    ----------
    paths : path or sequence of paths
        A cube-set directory, run directories, or ``.cubex`` files.
    pattern : str, optional
        Pattern for the run directory names, e.g. ``"mm.x{x}y{y}z{z}.r{rep}"``.
    params : mapping of str to str, optional
        Not supported by cube files (they hold no run metadata); rejected when given.
    location_statistic : {"mean", "sum", "min", "max"}
        How values of several locations (processes, threads) become one per run.

    Returns
    -------
    Experiment

    Raises
    ------
    InputError
        For corrupt profiles, directories without profiles and run names that do not match.
    """
    if params:
        raise InputError(
            "cube profiles carry no run metadata, so the metadata keys "
            f"{', '.join(params)} cannot name parameters; read them from the run names instead",
            reason="cube-has-no-metadata",
            value=dict(params),
        )
    if location_statistic not in LOCATION_STATISTICS:
        raise InputError(
            f"location statistic '{location_statistic}' is not one of {LOCATION_STATISTICS}"
        )
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    files = _expand(items)
    where = items[0] if len(items) == 1 else ", ".join(str(p) for p in items)
    runs: list[Run] = []
    metrics: dict[str, Metric] = {}
    skipped: dict[str, int] = {}
    for file in files:
        run, found, empty = read_profile(file, location_statistic)
        runs.append(run)
        metrics.update(found)
        for metric in empty:
            skipped[metric] = skipped.get(metric, 0) + 1
    notes: dict[str, Any] = {"format": NAME, "location_statistic": location_statistic}
    if skipped:
        notes["metrics_without_data"] = skipped  # metric -> number of profiles
    return build_experiment(
        runs, metrics, where=where, pattern=pattern, keys=None, default="names", metadata=notes
    )


def read_profile(
    path: str | Path, location_statistic: str = "mean"
) -> tuple[Run, dict[str, Metric], list[str]]:
    """Read one ``.cubex`` profile.

    Returns
    -------
    run : Run
        Its measurements; its name path is the directory holding the file.
    metrics : dict of str to Metric
        The metrics found.
    empty : list of str
        Cube metrics declared in the file but without data.
    """
    from pycubexr import CubexParser
    from pycubexr.utils.exceptions import MissingMetricError

    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", path)
    kernels: list[str] = []
    names: list[str] = []
    values: list[float] = []
    metrics: dict[str, Metric] = {}
    empty: list[str] = []
    try:
        with _without_checksum_warning(), CubexParser(str(path)) as cube:
            call_paths = _call_paths(cube.get_root_cnodes())
            for cube_metric in cube.get_metrics():
                try:
                    metric_values = cube.get_metric_values(cube_metric, cache=False)
                except MissingMetricError:
                    empty.append(cube_metric.name)
                    continue
                unit = _UNITS.get(cube_metric.units, cube_metric.units)
                kind = str(cube_metric.data_type).upper()
                extreme = (
                    "min" if kind.startswith("MIN") else "max" if kind.startswith("MAX") else ""
                )
                variants = (
                    [(cube_metric.name, {})]
                    if extreme
                    else [
                        (cube_metric.name, {"convert_to_exclusive": True}),
                        (cube_metric.name + INCLUSIVE_SUFFIX, {"convert_to_inclusive": True}),
                    ]
                )
                reduce = extreme or location_statistic
                for name, conversion in variants:
                    metrics[name] = Metric(name, unit)
                    for cnode_id in metric_values.cnode_indices:
                        cnode = cube.get_cnode(cnode_id)
                        per_location = metric_values.cnode_values(cnode, **conversion)
                        value = _reduce(per_location, reduce)
                        if not math.isfinite(value):
                            raise InputError(
                                f"metric {name}, call path {call_paths[cnode_id]}: the value "
                                f"is {value}, not a finite number",
                                path,
                            )
                        kernels.append(call_paths[cnode_id])
                        names.append(name)
                        values.append(value)
    except InputError:
        raise
    except Exception as error:  # pycubexr raises tarfile, XML and struct errors on bad input
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        raise InputError(
            f"not a readable CUBE4 .cubex file ({reason.rstrip(': ')})", path
        ) from None
    if not values:
        raise InputError("the profile holds no measurements", path)
    import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

    rows = pd.DataFrame({KERNEL: kernels, METRIC: names, VALUE: values})
    return Run(path, rows, {}, name=path.parent), metrics, empty


def profile_files(directory: Path, strict: bool = True) -> list[Path]:
    """The ``.cubex`` profiles of a cube set: one per run sub-directory (or in ``directory``).

    Raises
    ------
    InputError
        When ``strict`` and there are none.
    """
    for depth in ("*/[!.]*" + SUFFIX, "[!.]*" + SUFFIX):
        found = sorted(p for p in directory.glob(depth) if p.is_file())
        if found:
            return found
    if strict:
        raise InputError("no .cubex profiles in this directory or its sub-directories", directory)
    return []


def _expand(items: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for item in items:
        if item.is_dir():
            files.extend(profile_files(item))
        elif item.exists():
            files.append(item)
        else:
            raise InputError("no such file or directory", item)
    return files


def _call_paths(roots: Iterable[Any]) -> dict[int, str]:
    paths: dict[int, str] = {}
    stack = [(root, "") for root in roots]
    while stack:
        cnode, prefix = stack.pop()
        name = cnode.region.name
        path = f"{prefix}{CALL_PATH_SEPARATOR}{name}" if prefix else name
        paths[cnode.id] = path
        stack.extend((child, path) for child in cnode.get_children())
    return paths


@contextlib.contextmanager
def _without_checksum_warning() -> Iterator[None]:
    """Silence pycubexr's warning about a tar header with a wrong checksum: CubeWriter 4.8
    writes such headers, pycubexr reads on, and a damaged file fails later with a message."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Detected invalid checksum", UserWarning)
        yield


def _reduce(per_location: Any, statistic: str) -> float:
    # pycubexr returns ndarrays or its own value classes; both convert with astype.
    array = np.asarray(per_location.astype(float), dtype=float)
    if statistic == "mean":
        return float(array.mean())
    return float(getattr(array, statistic)())
