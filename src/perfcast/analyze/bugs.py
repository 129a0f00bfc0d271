"""Scalability bugs: kernels whose models grow faster than their parameters' roles allow.

Every kernel has an *expected* growth in each parameter whose role sets one (see
:mod:`perfcast.analyze.points` for roles):

* a ``processes`` or ``threads`` parameter ``x``: ``1/x`` under strong scaling (the work is divided)
  and ``1`` (constant) under weak scaling; collectives (call-path leaves such as
  ``MPI_Allreduce``, ``MPI_Bcast``, ``MPI_Reduce``, ``MPI_Barrier``, ``MPI_Allgather``,
  ``MPI_Alltoall``, ... or user patterns) ``log2 x``;
* a ``problem_size`` parameter ``n``: ``n`` (the work grows in proportion to the problem size), so a
  problem-size sweep flags kernels that grow faster than the problem, not "weak-scaling bugs";
* ``configuration`` parameters and parameters of unknown role: none (a knob has no expected order);
* user expectations ``KERNELGLOB:PARAM=GROWTH`` (or ``PARAM=GROWTH`` for every kernel) override
  these and may name any parameter; the last matching one wins. GROWTH is ``1``/``const``,
  ``log``, ``1/p``, ``p``, ``p^0.5``, ``p*log(p)``, ``p^2*log2(p)^2``, ...

A kernel is flagged in a parameter when all of these hold:

1. the model depends on the parameter and its lead order there exceeds the expectation
   (``Model.lead_order``). A constant offset, or a kernel constant in the parameter, is not
   growth and is never flagged: under strong scaling such serial parts show up in the ranking,
   the crossovers and the efficiency loss instead;
2. along the parameter from its smallest measured value to the target (others at the target)
   the model grows at least ``min_excess`` (default 2) times more than the expectation;
3. the measurements agree: the least-squares slope of ``log(mean / expected)`` over
   ``log(parameter)`` implies at least ``min_measured_excess`` (default 1.1) excess growth over
   the measured range -- this keeps a noisy fit's spurious ``p^0.25`` from raising alarms;
4. the kernel matters: at least ``min_share`` (default 5 %) of the total predicted at the target
   (for an inclusive metric, the total of exclusive values, see :mod:`perfcast.analyze.exclusive`);
5. the kernel is the program's own: system-library (*runtime*) kernels -- the dynamic linker
   (``_dl_*``, ``ld-linux``), the C library (``memcpy``, ``malloc``, ``__libc_*``, ...) and MPI
   internals (``PMPI_*``, ``MPID*``, ``ompi_*``, ``opal_*``, ...), see :func:`is_runtime` -- are
   grouped as runtime and flagged only when ``flag_runtime`` is set.

When a kernel and one of its call-path descendants are both flagged, the ancestor is reported as
*inherited* (its growth comes from the descendant), not as a separate bug.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from perfcast.analyze.exclusive import exclusive_values, is_inclusive_metric
from perfcast.analyze.points import point_matrix, smallest_point
from perfcast.analyze.scaling import PROBLEM_SIZE_SWEEP, STRONG, WEAK
from perfcast.core.errors import InputError
from perfcast.core.experiment import CALL_PATH_SEPARATOR, KERNEL, METRIC, VALUE, Experiment
from perfcast.core.function import Factor, Model

COLLECTIVE_LEAF = re.compile(
    r"^p?mpi_i?(allreduce|reduce_scatter(_block)?|reduce|bcast|barrier|allgatherv?|"
    r"alltoall[vw]?|gatherv?|scatterv?|exscan|scan)\b",
    re.IGNORECASE,
)
RUNTIME_LEAF = re.compile(
    r"^(?:_dl_|dl_main$|do_lookup|__libc_|__GI_|_IO_|_int_|__?pthread_|pthread_"
    r"|PMPI_|MPID|MPIR_|MPIU_|MPIC_|MPII_|MPL_|ompi_|opal_|orte_|prte_|pmix_|PMIx_|mca_"
    r"|ucp_|uct_|ucs_|psm2?_|hwloc_|ibv_)"
    r"|^_*(?:mem(?:cpy|move|set|cmp|chr)|str(?:len|n?cpy|n?cmp|chr|rchr|dup)|malloc|calloc"
    r"|realloc|free|malloc_consolidate|brk|sbrk|mmap|munmap|(?:v?[fs]n?)?printf|puts|fwrite"
    r"|fread|qsort|exit|atexit)(?:_(?:avx|evex|sse|ssse3|erms|unaligned|chk|generic)\w*)?"
    r"(?:@\w+)?$"
    r"|ld-linux|\bld\.so|\.so(?:\.\d+)*\b",
)


@dataclass(frozen=True)
class Expectation:
    """Expected growth ``parameter^exponent * log2(parameter)^log_exponent`` of some kernels."""

    pattern: str
    parameter: str
    exponent: Fraction
    log_exponent: int
    origin: str

    @property
    def order(self) -> tuple[Fraction, int]:
        """``(exponent, log_exponent)``, comparable with :meth:`Model.lead_order`."""
        return (self.exponent, self.log_exponent)

    def text(self) -> str:
        """E.g. ``p^(-1)`` or ``log2(p)``; ``1`` for constant."""
        return Factor(self.parameter, self.exponent, self.log_exponent).text() or "1"

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """The expected growth at ``x`` (``log2`` floored at 1 so that ``p = 1`` stays finite)."""
        x = np.asarray(x, dtype=float)
        return np.power(x, float(self.exponent)) * np.power(
            np.maximum(np.log2(x), 1.0), self.log_exponent
        )


_FACTOR = re.compile(
    r"^(?:(?P<name>[A-Za-z_]\w*)(?:\^\(?(?P<exp>-?\d+(?:[./]\d+)?)\)?)?"
    r"|log2?\((?P<logname>[A-Za-z_]\w*)\)(?:\^\(?(?P<logexp>\d+)\)?)?)$"
)


def parse_growth(text: str, parameter: str) -> tuple[Fraction, int]:
    """Parse a growth such as ``1``, ``log``, ``1/p``, ``p^0.5`` or ``p*log2(p)^2``.

    Raises
    ------
    InputError
        When the text is not a product of powers of ``parameter`` and ``log(parameter)``.
    """
    body = text.replace(" ", "")
    if body.lower() in ("1", "const", "constant"):
        return Fraction(0), 0
    sign = 1
    if body.startswith("1/"):
        sign, body = -1, body[2:]
        if body.startswith("(") and body.endswith(")"):
            body = body[1:-1]
    exponent, log_exponent = Fraction(0), 0
    for part in body.split("*"):
        match = _FACTOR.match(part)
        if match is None:
            raise InputError(
                f"cannot read growth '{text}' (try 1, log, 1/{parameter}, {parameter}^0.5)"
            )
        if match.group("name") in ("log", "log2"):
            try:
                log_exponent += int(match.group("exp") or 1)
            except ValueError:
                raise InputError(f"growth '{text}': a log power must be a whole number") from None
        elif match.group("name"):
            if match.group("name") != parameter:
                raise InputError(
                    f"growth '{text}' is about '{match.group('name')}', not '{parameter}'"
                )
            exponent += Fraction(match.group("exp") or "1")
        elif match.group("logname"):
            if match.group("logname") != parameter:
                raise InputError(
                    f"growth '{text}' is about '{match.group('logname')}', not '{parameter}'"
                )
            log_exponent += int(match.group("logexp") or 1)
    if sign < 0 and log_exponent:
        raise InputError(f"growth '{text}': logarithms cannot be in a denominator")
    return sign * exponent, log_exponent


def parse_expectation(
    text: str, parameters: Sequence[str], origin: str = "given by the user"
) -> Expectation:
    """Parse ``KERNELGLOB:PARAM=GROWTH`` (or ``PARAM=GROWTH`` for every kernel).

    Parameters
    ----------
    text : str
        The expectation.
    parameters : sequence of str
        The experiment's parameter names.
    origin : str
        Where the expectation came from, as findings report it.

    Raises
    ------
    InputError
        On a malformed expectation or an unknown parameter.
    """
    pattern, colon, rest = text.rpartition(":")
    if not colon:
        pattern, rest = "*", text
    name, equals, growth = rest.partition("=")
    name = name.strip()
    if not equals or not growth.strip():
        raise InputError(
            f"expectation '{text}': write KERNELGLOB:PARAM=GROWTH, e.g. '*MPI_*:p=log'",
            reason="bad-expectation",
            value=text,
        )
    if name not in parameters:
        raise InputError(
            f"expectation '{text}': '{name}' is not a parameter ({', '.join(parameters)})",
            reason="bad-expectation",
            value=text,
        )
    exponent, log_exponent = parse_growth(growth.strip(), name)
    return Expectation(pattern or "*", name, exponent, log_exponent, origin)


def is_collective(kernel: str, patterns: Sequence[str] = ()) -> bool:
    """Whether the call-path leaf is an MPI collective or the kernel matches a user pattern."""
    leaf = kernel.split(CALL_PATH_SEPARATOR)[-1].strip()
    return bool(COLLECTIVE_LEAF.match(leaf)) or any(
        fnmatch.fnmatchcase(kernel, p) or fnmatch.fnmatchcase(leaf, p) for p in patterns
    )


def is_runtime(kernel: str) -> bool:
    """Whether the call-path leaf is a system-library kernel: dynamic linker, C library or MPI
    internals (``_dl_relocate_object``, ``__memcpy_avx_unaligned_erms``, ``malloc``,
    ``PMPI_Allreduce``, ``MPIDI_CH3I_Progress``, ``ompi_coll_base_...``, ``opal_progress``,
    anything in a ``.so``)."""
    leaf = kernel.split(CALL_PATH_SEPARATOR)[-1].strip()
    return bool(RUNTIME_LEAF.search(leaf))


def expectations_for(
    kernel: str,
    scalings: Mapping[str, str],
    user: Sequence[Expectation] = (),
    collective_patterns: Sequence[str] = (),
) -> dict[str, Expectation]:
    """The expectation per parameter that applies to one kernel.

    Parameters
    ----------
    kernel : str
    scalings : mapping
        How each judged parameter scales: ``strong`` or ``weak`` (processes, threads) or
        :data:`~perfcast.analyze.scaling.PROBLEM_SIZE_SWEEP` (problem size). Parameters not in it
        get an expectation only from ``user``.
    user : sequence of Expectation
        Override the defaults; the last matching one wins.
    collective_patterns : sequence of str
        Extra glob patterns naming collectives.
    """
    collective = is_collective(kernel, collective_patterns)
    result: dict[str, Expectation] = {}
    for name, scaling in scalings.items():
        if scaling in (STRONG, WEAK) and collective:
            result[name] = Expectation(
                "collective", name, Fraction(0), 1, f"collective: log {name}"
            )
        elif scaling == STRONG:
            result[name] = Expectation(
                "*", name, Fraction(-1), 0, f"strong scaling in {name}: work shrinks like 1/{name}"
            )
        elif scaling == WEAK:
            result[name] = Expectation(
                "*", name, Fraction(0), 0, f"weak scaling in {name}: work stays constant"
            )
        elif scaling == PROBLEM_SIZE_SWEEP:
            result[name] = Expectation(
                "*",
                name,
                Fraction(1),
                0,
                f"problem size {name}: work grows in proportion to {name}",
            )
    for expectation in user:
        if fnmatch.fnmatchcase(kernel, expectation.pattern):
            result[expectation.parameter] = expectation
    return result


@dataclass
class BugFinding:
    """A kernel whose lead order in a parameter exceeds its expectation.

    Attributes
    ----------
    kernel, parameter : str
    lead, expected : str
        Lead-order factor of the model and the expected growth, as text.
    origin : str
        Where the expectation came from.
    excess_model : float
        Model growth over expected growth from the smallest measured value to the target.
    excess_measured : float or None
        The same over the measured range, from the measurements (None with one value).
    share : float
        The kernel's prediction at the target over the total (of exclusive predictions, for an
        inclusive metric).
    flagged : bool
        True for a reported scalability bug.
    reason : str
        Why it is (not) flagged.
    runtime : bool
        A system-library kernel (see :func:`is_runtime`).
    inherited_from : str or None
        The flagged descendant an ancestor's growth comes from.
    """

    kernel: str
    parameter: str
    lead: str
    expected: str
    origin: str
    excess_model: float
    excess_measured: float | None
    share: float
    flagged: bool
    reason: str
    runtime: bool = False
    inherited_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return asdict(self)


def kernel_means(experiment: Experiment, metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per kernel: the measured points (n, d) and the mean over repetitions at each."""
    names = list(experiment.parameter_names)
    table = experiment.frame[experiment.frame[METRIC] == metric]
    codes, kernels = pd.factorize(table[KERNEL])
    frame = pd.DataFrame(table[names].to_numpy(dtype=float), columns=names)
    frame["_k"] = codes
    frame["_v"] = table[VALUE].to_numpy(dtype=float)
    means = frame.groupby(["_k", *names], sort=True)["_v"].mean().reset_index()
    k = means["_k"].to_numpy()
    points = means[names].to_numpy(dtype=float)
    values = means["_v"].to_numpy()
    bounds = np.flatnonzero(np.diff(k)) + 1
    return {
        str(kernels[k[rows[0]]]): (points[rows], values[rows])
        for rows in np.split(np.arange(len(k)), bounds)
        if len(rows)
    }


def _measured_excess(
    points: np.ndarray, means: np.ndarray, column: int, expectation: Expectation
) -> float | None:
    others = [c for c in range(points.shape[1]) if c != column]
    if others:
        settings, inverse = np.unique(points[:, others], axis=0, return_inverse=True)
        counts = [len(np.unique(points[inverse == s, column])) for s in range(len(settings))]
        best = len(counts) - 1 - int(np.argmax(counts[::-1]))
        keep = inverse.ravel() == best
        points, means = points[keep], means[keep]
    x, y = points[:, column], means
    positive = y > 0
    x, y = x[positive], y[positive]
    if len(np.unique(x)) < 2:
        return None
    slope = np.polyfit(np.log(x), np.log(y / expectation.evaluate(x)), 1)[0]
    return float((x.max() / x.min()) ** slope)


def find_scalability_bugs(
    experiment: Experiment,
    models: Sequence[Model],
    scalings: Mapping[str, str],
    target: Mapping[str, float],
    metric: str,
    expectations: Sequence[Expectation] = (),
    collective_patterns: Sequence[str] = (),
    min_share: float = 0.05,
    min_excess: float = 2.0,
    min_measured_excess: float = 1.1,
    flag_runtime: bool = False,
) -> list[BugFinding]:
    """Every kernel whose lead order exceeds its expectation, flagged or not (see module doc).

    Parameters
    ----------
    experiment : Experiment
        The measurements the models were fitted to.
    models : sequence of Model
    scalings : mapping
        How each parameter with an expected order scales (see :func:`expectations_for`).
    target : mapping
        The configuration forecast, one value per parameter.
    metric : str
    expectations : sequence of Expectation
        User expectations (override the defaults).
    collective_patterns : sequence of str
        Extra glob patterns naming collectives.
    min_share, min_excess, min_measured_excess : float
        Thresholds of rules 4, 2 and 3.
    flag_runtime : bool
        Judge system-library kernels like the program's own (rule 5).

    Returns
    -------
    list of BugFinding
        Flagged findings first, by decreasing model excess.
    """
    if not models:
        return []
    parameters = models[0].parameters
    smallest = smallest_point(experiment)
    target_points = point_matrix(target, parameters, {})
    predicted = np.array([float(m.evaluate(target_points)[0]) for m in models])
    if is_inclusive_metric(experiment, metric):  # count every callee once in the total
        predicted_exclusive = exclusive_values([m.kernel for m in models], predicted)
    else:
        predicted_exclusive = predicted
    total = float(np.sum(np.maximum(predicted_exclusive, 0.0)))
    measurements = kernel_means(experiment, metric)
    findings: list[BugFinding] = []
    for model, at_target in zip(models, predicted, strict=True):
        expected = expectations_for(model.kernel, scalings, expectations, collective_patterns)
        runtime = is_runtime(model.kernel)
        for parameter, expectation in expected.items():
            if not any(f.parameter == parameter for t in model.terms for f in t.factors):
                continue  # constant in the parameter: no growth to judge
            lead = model.lead_order(parameter)
            if lead <= expectation.order:
                continue
            start = point_matrix(target, parameters, {parameter: np.array([smallest[parameter]])})
            at_start = float(model.evaluate(start)[0])
            wanted = float(
                expectation.evaluate(np.array(target[parameter]))
                / expectation.evaluate(np.array(smallest[parameter]))
            )
            grown = at_target / at_start if at_start > 0 else np.inf
            excess = float(grown / wanted) if at_target > 0 else 0.0
            measured = None
            if model.kernel in measurements:
                kernel_points, kernel_values = measurements[model.kernel]
                measured = _measured_excess(
                    kernel_points, kernel_values, parameters.index(parameter), expectation
                )
            share = max(float(at_target), 0.0) / total if total > 0 else 0.0
            reasons = []
            if excess < min_excess:
                reasons.append(f"grows only {excess:.3g}x more than expected up to the target")
            if measured is not None and measured < min_measured_excess:
                reasons.append(f"measurements grow only {measured:.3g}x more than expected")
            if share < min_share:
                reasons.append(
                    f"only {100 * share:.2g} % of the total at the target "
                    f"(below {100 * min_share:.3g} %)"
                )
            if runtime and not flag_runtime:
                reasons.append("a system-library (runtime) kernel, not judged as the program's")
            flagged = not reasons
            reason = (
                f"grows like {model.lead_term(parameter)}, expected at most {expectation.text()} "
                f"({expectation.origin}); {excess:.3g}x the expected growth up to the target"
                if flagged
                else "; ".join(reasons)
            )
            findings.append(
                BugFinding(
                    model.kernel,
                    parameter,
                    model.lead_term(parameter),
                    expectation.text(),
                    expectation.origin,
                    excess,
                    measured,
                    share,
                    flagged,
                    reason,
                    runtime,
                )
            )
    _mark_inherited(findings)
    findings.sort(key=lambda f: (not f.flagged, -f.excess_model))
    return findings


def _mark_inherited(findings: list[BugFinding]) -> None:
    flagged = [f for f in findings if f.flagged]
    for finding in flagged:
        prefix = finding.kernel + CALL_PATH_SEPARATOR
        for other in flagged:
            if other.parameter == finding.parameter and other.kernel.startswith(prefix):
                finding.flagged = False
                finding.inherited_from = other.kernel
                finding.reason = f"inherits the growth of its callee {other.kernel}"
                break
