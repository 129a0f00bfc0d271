"""Import sets of tool profiles (Caliper, CUBE) as one experiment, the format told or detected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.io import caliper, cube

PROFILE_FORMATS = {caliper.NAME: caliper, cube.NAME: cube}


def detect_profile_format(path: str | Path) -> str:
    """``caliper`` or ``cube``, judged from a file's suffix or a directory's content.

    Raises
    ------
    InputError
        When the path does not exist or holds neither kind of profile.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or directory", path)
    for name, module in PROFILE_FORMATS.items():
        if module.sniff(path, _head(path)):
            return name
    raise InputError(
        "no Caliper (.cali, json-split) or CUBE (.cubex) profiles here",
        path,
        reason="unknown-profile-format",
        value=str(path),
    )


def import_profiles(
    paths: Sequence[str | Path],
    *,
    profile_format: str | None = None,
    pattern: str | None = None,
    params: Mapping[str, str] | None = None,
    rank_statistic: str = "avg",
    location_statistic: str = "mean",
) -> Experiment:
    """Read profiles of one tool, one run each, into an experiment.

    Parameters
    ----------
    paths : sequence of paths
        Profiles or directories of profiles.
    profile_format : {"caliper", "cube"}, optional
        Detected from the first path when not given.
    pattern : str, optional
        Name pattern for run parameters, e.g. ``"mm.x{x}y{y}.r{rep}"``.
    params : mapping of str to str, optional
        Metadata key to parameter name (Caliper only).
    rank_statistic : {"avg", "min", "max", "sum"}
        How Caliper records of several MPI ranks reduce.
    location_statistic : {"mean", "sum", "min", "max"}
        How CUBE values of several locations (processes, threads) reduce.

    Raises
    ------
    InputError
        For an unknown format, paths of different formats and every bad profile.
    """
    if not paths:
        raise InputError("no profiles given")
    if profile_format is None:
        formats = {detect_profile_format(p) for p in paths}
        if len(formats) > 1:
            raise InputError(f"the paths hold profiles of different tools ({sorted(formats)})")
        profile_format = formats.pop()
    if profile_format == caliper.NAME:
        return caliper.read_caliper(
            list(paths), pattern=pattern, params=params, rank_statistic=rank_statistic
        )
    if profile_format == cube.NAME:
        return cube.read_cube(
            list(paths), pattern=pattern, params=params, location_statistic=location_statistic
        )
    raise InputError(f"unknown profile format '{profile_format}' ({', '.join(PROFILE_FORMATS)})")


def _head(path: Path) -> str:
    if path.is_dir():
        return ""
    with path.open("rb") as handle:
        return handle.read(8192).decode("utf-8", errors="replace")
