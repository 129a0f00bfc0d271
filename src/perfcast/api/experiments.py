"""Measurements in and out: load and save experiments, import profile sets, formats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perfcast.core.experiment import Experiment
from perfcast.io import read_experiment, write_experiment

if TYPE_CHECKING:
    pass


def load(
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 - the documented keyword
    metric: str | None = None,
    kernels: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] = (),
) -> Experiment:
    """Read measurements from a file or directory of any supported format.

    Parameters
    ----------
    path : str or Path
        A perfcast JSON or table (CSV, Parquet), an Extra-P file, a campaign results journal,
        a Caliper ``.cali`` file or directory, or a Score-P CUBE set.
    format : str, optional
        The format's name (see :func:`formats`); detected from the content when None.
    metric : str, optional
        Keep only this metric.
    kernels : str or sequence of str, optional
        Keep only the kernels matching one of these glob patterns (each must match one).
    exclude : str or sequence of str
        Leave out the kernels matching one of these glob patterns.

    Returns
    -------
    Experiment

    Raises
    ------
    InputError
        When the file is missing, of unknown format or malformed, the metric is not measured,
        a pattern of ``kernels`` matches nothing or no kernel is left.
    """
    experiment = read_experiment(path, format)
    if metric is None and kernels is None and not exclude:
        return experiment
    return experiment.select(kernels=kernels, metric=metric, exclude=exclude)


def save(experiment: Experiment, path: str | Path, *, format: str | None = None) -> None:  # noqa: A002
    """Write measurements in any writable format (see :func:`formats`).

    Parameters
    ----------
    experiment : Experiment
    path : str or Path
    format : str, optional
        The format's name; from the file's suffix when None.

    Raises
    ------
    InputError
        When the format is unknown or the file cannot be written.
    """
    write_experiment(experiment, path, format)


def import_profiles(
    paths: Sequence[str | Path],
    *,
    profile_format: str | None = None,
    pattern: str | None = None,
    params: Mapping[str, str] | Sequence[str] | None = None,
    rank_statistic: str = "avg",
    location_statistic: str = "mean",
) -> Experiment:
    """Read profiles of one tool (Caliper ``.cali``, Score-P CUBE), one run each, as an experiment.

    Parameters
    ----------
    paths : sequence of str or Path
        Profiles or directories of profiles.
    profile_format : {"caliper", "cube"}, optional
        Detected from the first path when None.
    pattern : str, optional
        Run parameters from file or directory names, e.g. ``"mm.x{x}y{y}.r{rep}"``.
    params : mapping of str to str, or sequence of str, optional
        Caliper metadata key to parameter name (``rep`` marks the repetition), as a mapping
        or as ``"KEY=NAME"`` texts (``"KEY"`` alone keeps the key's name).
    rank_statistic : {"avg", "min", "max", "sum"}
        How Caliper records of several MPI ranks reduce.
    location_statistic : {"mean", "sum", "min", "max"}
        How CUBE values of several locations reduce.

    Returns
    -------
    Experiment
        Its metadata says which keys became parameters and which were dropped.
    """
    from perfcast.io.importers import import_profiles as read_profiles
    from perfcast.io.profile_set import parse_param_options

    if params is not None and not isinstance(params, Mapping):
        params = parse_param_options(params) or None
    return read_profiles(
        paths,
        profile_format=profile_format,
        pattern=pattern,
        params=params,
        rank_statistic=rank_statistic,
        location_statistic=location_statistic,
    )


def profile_options() -> dict[str, tuple[str, ...]]:
    """The values :func:`import_profiles` accepts for ``profile_format``, ``rank_statistic``
    and ``location_statistic``."""
    from perfcast.io.caliper import RANK_STATISTICS
    from perfcast.io.cube import LOCATION_STATISTICS
    from perfcast.io.importers import PROFILE_FORMATS

    return {
        "profile_format": tuple(sorted(PROFILE_FORMATS)),
        "rank_statistic": RANK_STATISTICS,
        "location_statistic": LOCATION_STATISTICS,
    }


def inclusive_metric(exclusive: str, metrics: Sequence[str]) -> str | None:
    """The inclusive counterpart of a metric among ``metrics`` (``time`` ->
    ``time_inclusive``), which :func:`render` with ``tree=True`` shows beside the exclusive
    values; None when there is none."""
    from perfcast.display.tables import inclusive_metric as counterpart

    return counterpart(exclusive, metrics)


def formats() -> dict[str, dict[str, bool]]:
    """Every data format by name, with whether perfcast can read and write it."""
    from perfcast.io import formats as format_modules

    return {
        name: {"read": hasattr(module, "read"), "write": hasattr(module, "write")}
        for name, module in format_modules().items()
    }


def output_format(path: str | Path) -> str:
    """The format :func:`save` writes to ``path`` (from its suffix).

    Raises
    ------
    InputError
        When no writer takes the file name.
    """
    from perfcast.io import output_format_for

    return output_format_for(path)
