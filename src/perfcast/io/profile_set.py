"""Turn a set of profiles, one per run, into one :class:`~perfcast.core.experiment.Experiment`.

Profile importers (Caliper, CUBE, hatchet) read each run into a :class:`Run`: its measurements
(``kernel, metric, value``), its metadata and its name. This module finds every run's parameter
values -- from a name pattern, from named metadata keys, or by detection -- and joins the runs
into the long table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError
from perfcast.core.experiment import (
    KERNEL,
    METRIC,
    REPETITION,
    VALUE,
    Experiment,
    Metric,
    Parameter,
)
from perfcast.core.numbers import parse_number
from perfcast.io.patterns import REPETITION_GROUP, NamePattern, guess_role, infer_name_values

if TYPE_CHECKING:
    import pandas as pd

# Metadata keys that conventionally carry a run parameter, in order of preference, with the
# parameter name and role they get when detected.
KNOWN_KEYS: dict[str, tuple[str, str]] = {
    "mpi.world.size": ("p", "processes"),
    "jobsize": ("p", "processes"),
    "mpi.size": ("p", "processes"),
    "omp.num.threads": ("t", "threads"),
    "omp.max.threads": ("t", "threads"),
    "threads": ("t", "threads"),
    "problem_size": ("n", "problem_size"),
}
# Integer metadata that varies between runs without being a parameter: dates and clocks.
_NOT_PARAMETERS = re.compile(
    r"date|day|stamp|pid|seed|(^|[._])time($|[._])|^cali\.|^spot\.", re.IGNORECASE
)
_INTEGER = re.compile(r"\s*[-+]?\d+\s*")


@dataclass
class Run:
    """The measurements of one run, as read from one profile.

    Attributes
    ----------
    source : str or Path
        The profile file, named in error messages.
    rows : pandas.DataFrame
        Columns ``kernel, metric, value``.
    metadata : dict
        The run's metadata (Caliper globals, ...), candidates for parameters.
    name : str or Path, optional
        The path whose name carries the parameters (a cube set's run directory); defaults to
        ``source``.
    """

    source: str | Path
    rows: pd.DataFrame
    metadata: Mapping[str, Any] = field(default_factory=dict)
    name: str | Path | None = None

    @property
    def name_path(self) -> str | Path:
        """The path matched against name patterns."""
        return self.source if self.name is None else self.name


def parse_param_options(options: Iterable[str]) -> dict[str, str]:
    """Parse ``KEY=NAME`` options (``--param mpi.world.size=p``) into ``{KEY: NAME}``.

    ``KEY`` alone keeps the key as the name (dots become underscores); ``NAME`` ``rep`` makes
    the key the repetition number.

    Raises
    ------
    InputError
        When an option is empty or names a parameter twice.
    """
    mapping: dict[str, str] = {}
    for option in options:
        key, _, name = option.partition("=")
        key, name = key.strip(), name.strip()
        if not key:
            raise InputError(
                f"parameter key '{option}': expected KEY=NAME, e.g. mpi.world.size=p",
                reason="bad-parameter-key",
                value=option,
            )
        name = name or _identifier(key)
        if name in mapping.values():
            raise InputError(
                f"parameter keys: the name '{name}' is given to two keys",
                reason="duplicate-parameter-name",
                value=name,
            )
        mapping[key] = name
    return mapping


def build_experiment(
    runs: Sequence[Run],
    metrics: Mapping[str, Metric],
    *,
    where: str | Path,
    pattern: str | None = None,
    keys: Mapping[str, str] | None = None,
    default: str = "metadata",
    metadata: Mapping[str, Any] | None = None,
) -> Experiment:
    """Join runs into an experiment, one parameter column per run parameter.

    Parameters
    ----------
    runs : sequence of Run
        One per profile.
    metrics : mapping of str to Metric
        Units of the metrics found in the runs.
    where : str or Path
        The input as the user named it, used in messages about the whole set.
    pattern : str, optional
        A name pattern (see :mod:`perfcast.io.patterns`) giving parameters from run names.
    keys : mapping of str to str, optional
        Metadata key to parameter name (``{"mpi.world.size": "p"}``); name ``rep`` marks the
        repetition.
    default : {"metadata", "names"}
        Where parameters come from when neither ``pattern`` nor ``keys`` is given: integer
        metadata that varies across runs, or Extra-P-style run names (``mm.x10y2.r1``).
    metadata : mapping, optional
        Facts about the whole set, stored in the experiment's metadata.

    Returns
    -------
    Experiment
        With the runs' constant parameters dropped (recorded under ``constant_parameters``)
        unless every parameter is constant.

    Raises
    ------
    InputError
        No runs; a name that does not match; a metadata key missing from or not numeric in a
        profile; two profiles with the same parameters and repetition.
    """
    if not runs:
        raise InputError("no profiles found", where)
    notes: dict[str, Any] = dict(metadata or {})
    if pattern is None and keys is None and default == "metadata":
        keys, notes["dependent_keys"] = detect_parameter_keys(runs, where)
    values = [_run_values(run, pattern, keys, default) for run in runs]
    names = _parameter_names(runs, values, keys)
    constant = {
        n: values[0][n] for n in names if len({v[n] for v in values}) == 1 and len(runs) > 1
    }
    if len(constant) < len(names):
        names = [n for n in names if n not in constant]
        if constant:
            notes["constant_parameters"] = constant
    repetitions = _repetitions(runs, values, names)

    frames = []
    for run, point, repetition in zip(runs, values, repetitions, strict=True):
        frame = run.rows.loc[:, [KERNEL, METRIC, VALUE]].copy()
        for name in names:
            frame[name] = point[name]
        frame[REPETITION] = repetition
        frames.append(frame)
    import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

    table = pd.concat(frames, ignore_index=True)
    if table.empty:
        raise InputError("the profiles hold no measurements", where)
    roles = _roles(keys)
    parameters = [Parameter(n, roles.get(n) or guess_role(n)) for n in names]
    notes["runs"] = [
        {"source": str(run.source), **{n: point[n] for n in names}, REPETITION: repetition}
        for run, point, repetition in zip(runs, values, repetitions, strict=True)
    ]
    if keys:
        notes["parameter_keys"] = dict(keys)
    shared = _shared_metadata(runs)
    if shared:
        notes["profile_metadata"] = shared
    return Experiment.from_frame(
        table[[KERNEL, METRIC, *names, REPETITION, VALUE]],
        parameters=parameters,
        metrics=metrics,
        metadata=notes,
        source=str(where),
    )


def detect_parameter_keys(
    runs: Sequence[Run], where: str | Path
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Find the metadata keys that carry the run parameters.

    A key qualifies when every run has it, its values are integers, they are not all equal and
    it is not a date or clock. Conventional keys (``mpi.world.size``, ``threads``,
    ``problem_size``, ...) are taken first, the rest in alphabetical order; a key is skipped when
    its value follows from the keys already taken (``numhosts`` from ``mpi.world.size``).

    Returns
    -------
    keys : dict of str to str
        Key to parameter name.
    dependent : dict of str to list of str
        Skipped keys and the keys they follow from.

    Raises
    ------
    InputError
        When no key qualifies.
    """
    common = set.intersection(*(set(run.metadata) for run in runs))
    candidates = []
    for key in common:
        texts = [run.metadata[key] for run in runs]
        if _NOT_PARAMETERS.search(key) or not all(_is_integer(t) for t in texts):
            continue
        if len({int(str(t)) for t in texts}) > 1:
            candidates.append(key)
    known = [k for k in KNOWN_KEYS if k in candidates]
    ordered = known + sorted(k for k in candidates if k not in KNOWN_KEYS)

    chosen: dict[str, str] = {}
    dependent: dict[str, list[str]] = {}
    for key in ordered:
        groups: dict[tuple, set[int]] = {}
        for run in runs:
            groups.setdefault(tuple(int(str(run.metadata[k])) for k in chosen), set()).add(
                int(str(run.metadata[key]))
            )
        if all(len(group) == 1 for group in groups.values()):
            dependent[key] = list(chosen)
            continue
        name = KNOWN_KEYS.get(key, (_identifier(key), ""))[0]
        chosen[key] = name if name not in chosen.values() else _identifier(key)
    if not chosen:
        raise InputError(
            "no integer metadata varies across these profiles, so the run parameters are "
            "unknown; name their metadata keys or give a run-name pattern",
            where,
            reason="unknown-run-parameters",
        )
    return chosen, dependent


def _run_values(
    run: Run, pattern: str | None, keys: Mapping[str, str] | None, default: str
) -> dict[str, float]:
    values: dict[str, float] = {}
    if pattern is not None:
        values.update(NamePattern(pattern).match(run.name_path))
    for key, name in (keys or {}).items():
        if key not in run.metadata:
            raise InputError(f"the profile has no metadata key '{key}'", run.source)
        text = run.metadata[key]
        number = parse_number(str(text), f"metadata '{key}'", run.source, None)
        if name in values:
            raise InputError(f"parameter '{name}' comes both from the name and '{key}'", run.source)
        values[name] = number
    if pattern is None and keys is None:
        if default != "names":
            raise ValueError(f"unknown default parameter source {default!r}")
        values = infer_name_values(Path(run.name_path).name, run.source)
    return values


def _parameter_names(
    runs: Sequence[Run], values: Sequence[Mapping[str, float]], keys: Mapping[str, str] | None
) -> list[str]:
    first = [n for n in values[0] if n != REPETITION_GROUP]
    for run, point in zip(runs, values, strict=True):
        names = [n for n in point if n != REPETITION_GROUP]
        if names != first:
            raise InputError(
                f"the name gives parameters {names}, the first profile {first}; all runs must "
                "name the same parameters in the same order",
                run.name_path,
            )
    if not first:
        raise InputError("no run parameters given, only the repetition", runs[0].source)
    return first


def _repetitions(
    runs: Sequence[Run], values: Sequence[Mapping[str, float]], names: Sequence[str]
) -> list[int]:
    given = [REPETITION_GROUP in v for v in values]
    if any(given) and not all(given):
        missing = runs[given.index(False)]
        raise InputError("this profile has no repetition number, others have", missing.source)
    seen: dict[tuple, Run] = {}
    counters: dict[tuple, int] = {}
    repetitions = []
    for run, point in zip(runs, values, strict=True):
        coordinates = tuple(point[n] for n in names)
        if REPETITION_GROUP in point:
            number = point[REPETITION_GROUP]
            if number != int(number):
                raise InputError(f"repetition {number} is not a whole number", run.source)
            repetition = int(number)
        else:
            repetition = counters.get(coordinates, 0)
            counters[coordinates] = repetition + 1
        key = (*coordinates, repetition)
        if key in seen:
            described = ", ".join(f"{n}={point[n]:g}" for n in names)
            raise InputError(
                f"same parameters ({described}) and repetition {repetition} as {seen[key].source}",
                run.source,
            )
        seen[key] = run
        repetitions.append(repetition)
    return repetitions


def _roles(keys: Mapping[str, str] | None) -> dict[str, str]:
    return {name: KNOWN_KEYS[key][1] for key, name in (keys or {}).items() if key in KNOWN_KEYS}


def _shared_metadata(runs: Sequence[Run]) -> dict[str, str]:
    first = runs[0].metadata
    return {
        str(key): str(value)
        for key, value in first.items()
        if all(key in run.metadata and str(run.metadata[key]) == str(value) for run in runs)
    }


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or bool(_INTEGER.fullmatch(str(value)))


def _identifier(key: str) -> str:
    name = re.sub(r"\W+", "_", key).strip("_")
    return name or "param"
