"""Configuration search (Marcus, *Techniques for Automated Performance Analysis*, section 2.3).

Configuration parameters are the knobs that are not scales: threads per rank, ranks per node, a
flag level, a launcher option (role ``threads``/``configuration``, recognizable names, or named
with ``config_params``). The other parameters are fixed (``fix``; by default at their largest
measured value). The search is exhaustive over a grid: each configuration parameter takes its
measured values plus, between its smallest and largest measured value, every whole number (at
most 64, else 16 geometrically spaced whole numbers) or 16 evenly spaced values for real-valued
ones. The models are not trusted outside the measured range of a configuration parameter, so
the grid does not extend beyond it. Constraints such as ``p*threads<=64`` remove grid points.

Objectives (smaller is better):

* ``time`` -- the sum of all kernel models at the configuration;
* ``divergence`` -- the mean efficiency loss ``1 - efficiency`` of the summed models from the
  smallest measured scale to the fixed scale (:class:`perfcast.analyze.scaling.Scaling`'s
  ``mean_efficiency_loss``). The paper's ``-corr`` divergence is reported alongside but not
  minimized: it rewards steadily growing error over flat noisy error, so it does not order
  configurations by scaling quality.

Which variables matter, two ways:

* *range*: the spread (max - min) of the objective when one variable moves over its grid and
  the others stay at the optimum (feasible points only);
* *variance share*: a first-order Sobol-like index over the feasible grid with equal weights,
  ``Var(E[objective | variable]) / Var(objective)``. Shares need not sum to 1 when variables
  interact or constraints couple them.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from perfcast.analyze.points import doubling_grid, largest_point, point_matrix
from perfcast.analyze.scaling import STRONG, WEAK, scaling_from_times
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model

MAX_GRID = 250_000
TIME, DIVERGENCE = "time", "divergence"

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


@dataclass(frozen=True)
class Constraint:
    """A condition on parameters such as ``p*threads <= 64`` or ``threads in (1, 2, 4)``."""

    text: str
    tree: ast.Expression

    def __call__(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Boolean mask of the points satisfying the condition."""
        return np.asarray(_evaluate(self.tree.body, columns, self.text), dtype=bool)


def _evaluate(node: ast.AST, columns: Mapping[str, np.ndarray], text: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name):
        return columns[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, columns, text)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, columns, text)
        return _BINARY[type(node.op)](left, _evaluate(node.right, columns, text))
    if isinstance(node, ast.BoolOp):
        parts = [_evaluate(v, columns, text) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        result = parts[0]
        for part in parts[1:]:
            result = combine(result, part)
        return result
    if isinstance(node, ast.Compare):
        result, left = True, _evaluate(node.left, columns, text)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn) and isinstance(
                comparator, ast.Tuple | ast.Set | ast.List
            ):
                values = [_evaluate(e, columns, text) for e in comparator.elts]
                inside = np.isin(left, values)
                result = np.logical_and(result, inside if isinstance(op, ast.In) else ~inside)
                continue
            if type(op) not in _COMPARE:
                raise _bad_constraint(text, "unsupported comparison")
            right = _evaluate(comparator, columns, text)
            result = np.logical_and(result, _COMPARE[type(op)](left, right))
            left = right
        return result
    raise _bad_constraint(text, "only numbers, parameters, + - * / ** % and comparisons")


def _bad_constraint(text: str, problem: str) -> InputError:
    return InputError(f"constraint '{text}': {problem}", reason="bad-constraint", value=text)


def parse_constraint(text: str, parameters: Sequence[str]) -> Constraint:
    """Parse a constraint over parameter names (a safe subset of Python expressions).

    Raises
    ------
    InputError
        On a syntax error, an unknown name, or an expression that is not a condition.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise _bad_constraint(text, "not an expression") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in parameters:
            raise _bad_constraint(text, f"'{node.id}' is not a parameter ({', '.join(parameters)})")
    if not isinstance(tree.body, ast.Compare | ast.BoolOp):
        raise _bad_constraint(text, "write a condition such as 'p*threads<=64'")
    constraint = Constraint(text, tree)
    constraint({name: np.ones(1) for name in parameters})  # reject unsupported syntax now
    return constraint


def configuration_grid(measured: ArrayLike) -> np.ndarray:
    """Search values of one configuration parameter (see module doc)."""
    values = np.unique(np.asarray(measured, dtype=float))
    low, high = values[0], values[-1]
    if low == high:
        return values
    if np.all(values == np.round(values)):
        if high - low + 1 <= 64:
            extra = np.arange(low, high + 1)
        else:
            extra = np.unique(np.round(np.geomspace(max(low, 1.0), high, 16)))
    else:
        extra = np.linspace(low, high, 16)
    return np.unique(np.concatenate([values, extra]))


@dataclass(frozen=True)
class Importance:
    """How much one configuration variable moves the objective."""

    parameter: str
    best: float
    worst: float
    range: float
    relative_range: float
    variance_share: float


@dataclass
class Optimum:
    """Result of :func:`optimize_configuration`.

    Attributes
    ----------
    objective : str
    configuration : dict
        The best values of the configuration parameters.
    value : float
        The objective there.
    fixed : dict
        The other parameters.
    importance : list of Importance
        Most influential first (by variance share).
    ranking : pandas.DataFrame
        The best feasible configurations, best first (up to 10).
    evaluated, feasible : int
        Grid size and the number of points satisfying the constraints.
    paper_divergence : float or None
        The paper's ``-corr`` divergence at the optimum (divergence objective only).
    """

    objective: str
    configuration: dict[str, float]
    value: float
    fixed: dict[str, float]
    importance: list[Importance]
    ranking: pd.DataFrame
    evaluated: int
    feasible: int
    paper_divergence: float | None = None
    constraints: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON (``perfcast optimize --format json``)."""
        return {
            "objective": self.objective,
            "configuration": self.configuration,
            "value": self.value,
            "fixed": self.fixed,
            "constraints": self.constraints,
            "evaluated": self.evaluated,
            "feasible": self.feasible,
            "paper_divergence": self.paper_divergence,
            "importance": [vars(i) for i in self.importance],
            "best": self.ranking.to_dict(orient="records"),
        }


def optimize_configuration(
    experiment: Experiment,
    models: Sequence[Model],
    config_params: Sequence[str],
    objective: str = TIME,
    fix: Mapping[str, float] | None = None,
    constraints: Sequence[Constraint] = (),
    scale: str | None = None,
    mode: str = STRONG,
    size: str | None = None,
) -> Optimum:
    """Find the configuration minimizing ``objective`` using the models (see module doc).

    Parameters
    ----------
    experiment : Experiment
        Supplies the measured values of every parameter.
    models : sequence of Model
        One per kernel, all of one metric; the objective sums them.
    config_params : sequence of str
        The configuration parameters searched.
    objective : {"time", "divergence"}
    fix : mapping, optional
        Values of the other parameters (default: largest measured).
    constraints : sequence of Constraint
    scale : str, optional
        Scale parameter, needed by the divergence objective.
    mode : {"strong", "weak"}
        Scaling mode of the divergence objective.
    size : str, optional
        Problem-size parameter; under weak scaling it grows in proportion to the scale along
        the divergence path (``size = fixed size * n / fixed scale``).

    Raises
    ------
    InputError
        Without configuration parameters, with an impossible request or no feasible point.
    """
    if not models:
        raise InputError("no models to optimize with", experiment.source)
    if objective not in (TIME, DIVERGENCE):
        raise InputError(
            f"the objective must be 'time' or 'divergence', not {objective!r}",
            reason="unknown-objective",
            value=objective,
        )
    if not config_params:
        raise InputError(
            "the experiment has no configuration parameters (threads, ranks per node, ...) "
            "and none were named",
            experiment.source,
            reason="no-configuration-parameters",
        )
    parameters = list(models[0].parameters)
    fixed = largest_point(experiment)
    fixed.update(fix or {})
    for name in config_params:
        fixed.pop(name, None)
    if objective == DIVERGENCE:
        if scale is None or scale in config_params:
            raise InputError(
                "the divergence objective needs a scale parameter that is not searched",
                experiment.source,
                value=scale,
            )
        if mode not in (STRONG, WEAK):
            raise InputError(
                f"the scaling mode must be 'strong' or 'weak', not {mode!r}",
                reason="unknown-scaling-mode",
                value=mode,
            )
    points = experiment.points()
    grids = [configuration_grid(points[:, parameters.index(n)]) for n in config_params]
    grid_size = int(np.prod([len(g) for g in grids]))
    if grid_size > MAX_GRID:
        raise InputError(
            f"the configuration grid has {grid_size} points (limit {MAX_GRID}); fix some "
            "parameters or add constraints",
            experiment.source,
            reason="configuration-grid-too-large",
            value=grid_size,
        )
    combos = np.array(list(itertools.product(*grids)), dtype=float)
    columns = {n: combos[:, i] for i, n in enumerate(config_params)}
    for name, value in fixed.items():
        columns[name] = np.full(len(combos), value)
    feasible = np.ones(len(combos), dtype=bool)
    for constraint in constraints:
        feasible &= constraint(columns)
    if not feasible.any():
        raise InputError("no configuration satisfies the constraints", experiment.source)
    combos = combos[feasible]
    varying = {n: combos[:, i] for i, n in enumerate(config_params)}
    if objective == TIME:
        matrix = point_matrix(fixed, parameters, varying)
        values = np.sum([m.evaluate(matrix) for m in models], axis=0)
        paper = None
    else:
        assert scale is not None, "checked with the objective above"
        values, paper_values = _divergences(
            experiment, models, parameters, fixed, varying, scale, mode, size
        )
    best = int(np.nanargmin(values))
    configuration = {n: float(combos[best, i]) for i, n in enumerate(config_params)}
    if objective == DIVERGENCE:
        paper = paper_values[best]
    importance = _importance(combos, values, config_params, best)
    ranking = pd.DataFrame(combos, columns=list(config_params)).assign(objective=values)
    ranking = ranking.sort_values("objective", kind="stable").head(10).reset_index(drop=True)
    return Optimum(
        objective,
        configuration,
        float(values[best]),
        fixed,
        importance,
        ranking,
        grid_size,
        int(feasible.sum()),
        paper,
        [c.text for c in constraints],
    )


def _divergences(
    experiment: Experiment,
    models: Sequence[Model],
    parameters: list[str],
    fixed: Mapping[str, float],
    varying: Mapping[str, np.ndarray],
    scale: str,
    mode: str,
    size: str | None,
) -> tuple[np.ndarray, list[float | None]]:
    measured = experiment.points()[:, parameters.index(scale)]
    scales = doubling_grid(measured, fixed[scale])
    scales = scales[scales <= fixed[scale]]
    count = len(next(iter(varying.values())))
    repeated = {n: np.repeat(v, len(scales)) for n, v in varying.items()}
    repeated[scale] = np.tile(scales, count)
    if mode == WEAK and size is not None and size not in varying:
        repeated[size] = fixed[size] * repeated[scale] / fixed[scale]
    matrix = point_matrix(fixed, parameters, repeated)
    totals = np.sum([m.evaluate(matrix) for m in models], axis=0).reshape(count, len(scales))
    losses, paper = np.empty(count), []
    for i in range(count):
        scaling = scaling_from_times(scales, totals[i], mode, "models")
        losses[i] = scaling.mean_efficiency_loss
        paper.append(scaling.paper_divergence)
    return losses, paper


def _importance(
    combos: np.ndarray, values: np.ndarray, names: Sequence[str], best: int
) -> list[Importance]:
    total_variance = float(np.var(values))
    result = []
    for i, name in enumerate(names):
        others = np.delete(np.arange(len(names)), i)
        alone = np.all(combos[:, others] == combos[best, others], axis=1)
        line = values[alone]
        spread = float(np.max(line) - np.min(line))
        groups = pd.Series(values).groupby(combos[:, i]).agg(["mean", "count"])
        between = np.sum(groups["count"] * (groups["mean"] - values.mean()) ** 2) / len(values)
        share = float(between) / total_variance if total_variance > 0 else 0.0
        result.append(
            Importance(
                name,
                float(combos[alone][np.argmin(line), i]),
                float(combos[alone][np.argmax(line), i]),
                spread,
                spread / abs(values[best]) if values[best] != 0 else float("inf"),
                share,
            )
        )
    return sorted(result, key=lambda imp: -imp.variance_share)
