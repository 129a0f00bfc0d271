"""Parameter roles, target configurations and scaling paths shared by the diagnoses.

Every parameter has a *role*: ``processes``, ``threads``, ``problem_size``, ``configuration``, or
None when unknown. It is given by the user (``roles``), else read from the experiment
(:attr:`perfcast.core.experiment.Parameter.role`, which campaigns set to ``processes`` for launcher
parameters), else guessed from the name (:func:`parameter_roles`).

The diagnoses follow one parameter, chosen by :func:`scale_parameter`: the first ``processes``
parameter, else the first ``threads`` one, else a lone parameter whatever its role.

For :mod:`perfcast.analyze.optimize`, :func:`parameter_kinds` sorts parameters into *scale*
(processes), *size* (problem size), *configuration* (knobs it searches, threads included) and
*other*; a lone parameter of unknown role is a scale there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.points import name_value_items

SCALE, SIZE, CONFIGURATION, OTHER = "scale", "size", "configuration", "other"

_ROLE_KINDS = {
    "processes": SCALE,
    "ranks": SCALE,
    "nodes": SCALE,
    "problem_size": SIZE,
    "size": SIZE,
    "threads": CONFIGURATION,
    "configuration": CONFIGURATION,
}
_SCALE_NAMES = {"p", "np", "procs", "nprocs", "ranks", "nranks", "processes", "nodes", "n_procs"}
_SIZE_NAMES = {"n", "size", "problem_size", "nx", "grid", "elements", "s"}
_CONFIGURATION_NAMES = {
    "t",
    "threads",
    "nthreads",
    "omp",
    "ppn",
    "ranks_per_node",
    "opt",
    "flags",
    "level",
    "block",
    "bs",
}


PROCESSES, THREADS, PROBLEM_SIZE = "processes", "threads", "problem_size"
ROLES = (PROCESSES, THREADS, PROBLEM_SIZE, CONFIGURATION)
_ROLE_SYNONYMS = {
    "processes": PROCESSES,
    "process": PROCESSES,
    "procs": PROCESSES,
    "ranks": PROCESSES,
    "nodes": PROCESSES,
    "threads": THREADS,
    "thread": THREADS,
    "problem_size": PROBLEM_SIZE,
    "problem-size": PROBLEM_SIZE,
    "size": PROBLEM_SIZE,
    "configuration": CONFIGURATION,
    "config": CONFIGURATION,
}
_NAME_ROLES = {
    **{name: PROCESSES for name in _SCALE_NAMES},
    **{name: PROBLEM_SIZE for name in _SIZE_NAMES},
    **{name: CONFIGURATION for name in _CONFIGURATION_NAMES},
    "t": THREADS,
    "threads": THREADS,
    "nthreads": THREADS,
    "omp": THREADS,
}


@dataclass(frozen=True)
class ParameterRole:
    """What one parameter means and where that came from.

    Attributes
    ----------
    parameter : str
    role : str or None
        ``processes``, ``threads``, ``problem_size``, ``configuration``; None when unknown.
    source : str
        ``given`` (by the caller), ``experiment`` (stored with the measurements) or ``name``
        (guessed from the parameter's name); ``unknown`` when there is no role.
    """

    parameter: str
    role: str | None
    source: str


def normalize_role(text: str) -> str | None:
    """The canonical role of ``text`` (``procs`` -> ``processes``, ``size`` ->
    ``problem_size``, ...); None for a role perfcast does not know."""
    return _ROLE_SYNONYMS.get(text.strip().lower().replace(" ", "_"))


def parse_roles(text: str, parameters: Sequence[str]) -> dict[str, str]:
    """Parse roles such as ``p=processes,n=size`` into ``{parameter: canonical role}``.

    Raises
    ------
    InputError
        On a malformed item, an unknown parameter or an unknown role.
    """

    def bad(problem: str, item: str) -> InputError:
        return InputError(f"role '{item}': {problem}", reason="bad-role", value=item)

    roles: dict[str, str] = {}
    if not text.strip():
        return roles
    for name, value in name_value_items(
        text,
        lambda item: bad("write PARAMETER=ROLE, e.g. 'p=processes,n=size'", item),
        lambda name: bad(f"'{name}' is given twice", text),
    ):
        item = f"{name}={value}"
        if name not in parameters:
            raise bad(f"'{name}' is not a parameter ({', '.join(parameters)})", item)
        role = normalize_role(value)
        if role is None:
            raise bad(f"'{value}' is not a role (processes, threads, size, configuration)", item)
        roles[name] = role
    return roles


def parameter_roles(
    experiment: Experiment, given: Mapping[str, str] | None = None
) -> dict[str, ParameterRole]:
    """The role of every parameter: given, else stored in the experiment, else from its name.

    Parameters
    ----------
    experiment : Experiment
    given : mapping, optional
        Roles chosen by the caller (``{"p": "processes"}``; synonyms as in
        :func:`parse_roles`).

    Raises
    ------
    InputError
        When a given name is not a parameter or a given role is unknown.
    """
    given = dict(given or {})
    names = experiment.parameter_names
    for name, role in given.items():
        if name not in names:
            raise InputError(
                f"role for '{name}': not a parameter of the experiment ({', '.join(names)})",
                experiment.source,
                reason="bad-role",
                value=name,
            )
        if normalize_role(role) is None:
            raise InputError(
                f"role '{role}' of '{name}' is not a role "
                "(processes, threads, size, configuration)",
                experiment.source,
                reason="bad-role",
                value=role,
            )
    roles: dict[str, ParameterRole] = {}
    for parameter in experiment.parameters:
        name = parameter.name
        if name in given:
            roles[name] = ParameterRole(name, normalize_role(given[name]), "given")
        elif parameter.role is not None and normalize_role(parameter.role) is not None:
            roles[name] = ParameterRole(name, normalize_role(parameter.role), "experiment")
        elif name.lower() in _NAME_ROLES:
            roles[name] = ParameterRole(name, _NAME_ROLES[name.lower()], "name")
        else:
            roles[name] = ParameterRole(name, None, "unknown")
    return roles


def parameter_kinds(experiment: Experiment, config_params: Sequence[str] = ()) -> dict[str, str]:
    """Kind (``scale``, ``size``, ``configuration`` or ``other``) of every parameter.

    Parameters
    ----------
    experiment : Experiment
    config_params : sequence of str
        Names forced to be configuration parameters (``--config-params``).

    Raises
    ------
    InputError
        When a forced name is not a parameter of the experiment.
    """
    names = experiment.parameter_names
    for name in config_params:
        if name not in names:
            raise InputError(
                f"'{name}' is not a parameter of the experiment ({', '.join(names)})",
                experiment.source,
            )
    kinds: dict[str, str] = {}
    for parameter in experiment.parameters:
        name = parameter.name
        if name in config_params:
            kinds[name] = CONFIGURATION
        elif parameter.role is not None:
            kinds[name] = _ROLE_KINDS.get(parameter.role.lower(), OTHER)
        elif name.lower() in _SCALE_NAMES:
            kinds[name] = SCALE
        elif name.lower() in _SIZE_NAMES:
            kinds[name] = SIZE
        elif name.lower() in _CONFIGURATION_NAMES:
            kinds[name] = CONFIGURATION
        else:
            kinds[name] = OTHER
    if len(names) == 1 and kinds[names[0]] == OTHER:
        kinds[names[0]] = SCALE
    return kinds


def scale_parameter(
    experiment: Experiment,
    explicit: str | None = None,
    roles: Mapping[str, ParameterRole] | None = None,
) -> str:
    """The parameter the diagnoses scale along.

    ``explicit`` (``--scale``) when given; else the first parameter with role ``processes``,
    else the first with role ``threads``, else the only parameter, whatever its role (a lone
    ``n`` is a problem-size sweep).

    Raises
    ------
    InputError
        When ``explicit`` is unknown or no parameter is recognizably a scale.
    """
    names = experiment.parameter_names
    if explicit is not None:
        if explicit not in names:
            raise InputError(
                f"'{explicit}' is not a parameter of the experiment ({', '.join(names)})",
                experiment.source,
            )
        return explicit
    roles = roles if roles is not None else parameter_roles(experiment)
    for wanted in (PROCESSES, THREADS):
        found = [n for n in names if roles[n].role == wanted]
        if found:
            return found[0]
    if len(names) == 1:
        return names[0]
    raise InputError(
        f"no parameter is recognizably the scale (processes); choose one of {', '.join(names)}",
        experiment.source,
        reason="no-scale-parameter",
        value=names,
    )


def largest_point(experiment: Experiment) -> dict[str, float]:
    """The largest measured value of every parameter."""
    points = experiment.points()
    return {name: float(points[:, i].max()) for i, name in enumerate(experiment.parameter_names)}


def smallest_point(experiment: Experiment) -> dict[str, float]:
    """The smallest measured value of every parameter."""
    points = experiment.points()
    return {name: float(points[:, i].min()) for i, name in enumerate(experiment.parameter_names)}


DEFAULT_SCALE_FACTOR = 8.0


def target_point(
    experiment: Experiment, at: Mapping[str, float] | None, scale: str
) -> dict[str, float]:
    """The configuration to forecast: ``at`` completed with defaults.

    Parameters missing from ``at`` take their largest measured value, except the scale
    parameter which defaults to :data:`DEFAULT_SCALE_FACTOR` times its largest measured value.
    """
    target = largest_point(experiment)
    target[scale] *= DEFAULT_SCALE_FACTOR
    target.update(at or {})
    return target


def path(
    start: Mapping[str, float],
    end: Mapping[str, float],
    parameters: Sequence[str],
    steps: int = 257,
) -> np.ndarray:
    """Points on the geometric path from ``start`` to ``end``, shape (steps, len(parameters)).

    Each parameter moves as ``start^(1-s) * end^s`` for ``s`` from 0 to 1, so a doubling of
    processes is one equal step wherever it happens.
    """
    s = np.linspace(0.0, 1.0, steps)[:, None]
    a = np.log(np.array([start[name] for name in parameters], dtype=float))
    b = np.log(np.array([end[name] for name in parameters], dtype=float))
    return np.exp(a * (1 - s) + b * s)


def doubling_grid(measured: Iterable[float], target: float) -> np.ndarray:
    """The measured values followed by doublings of the largest one up to ``target`` (included)."""
    values = sorted({float(v) for v in measured})
    current = values[-1]
    while current * 2 < target * (1 - 1e-9):
        current *= 2
        values.append(current)
    if target > values[-1] * (1 + 1e-9):
        values.append(float(target))
    return np.array(values)


def point_matrix(
    base: Mapping[str, float], parameters: Sequence[str], varying: Mapping[str, np.ndarray]
) -> np.ndarray:
    """Rows of ``base`` with some parameters replaced by arrays of values (broadcast)."""
    length = max((len(np.atleast_1d(v)) for v in varying.values()), default=1)
    columns = []
    for name in parameters:
        value = varying[name] if name in varying else base[name]
        columns.append(np.broadcast_to(np.asarray(value, dtype=float), (length,)))
    return np.column_stack(columns)
