"""Trace extrapolation (PMaC): signatures, their extrapolation, machine profiles, convolution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.jsonout import dumps
from perfcast.core.points import parse_point

if TYPE_CHECKING:
    from perfcast.analyze.convolve import Convolution
    from perfcast.analyze.extrapolate import Extrapolation
    from perfcast.io.machine_profile import MachineProfile


def collect_signature(
    command: Sequence[str],
    *,
    ranks: int = 1,
    point: Mapping[str, float] | None = None,
    machine: MachineProfile | None = None,
    cache: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Experiment:
    """Run a program under valgrind and return its application signature.

    The signature is an ordinary experiment at one point (``p`` = ``ranks`` by default):
    kernels are basic blocks (``bb:f+0x40``), source lines (``line:cg.c:42``) and functions
    (``fn:f``) of the program's own code; metrics are their features (instructions, loads,
    stores, bytes, floating-point operations by kind, branches and their mispredictions,
    simulated L1 and last-level misses and cumulative hit rates;
    see :mod:`perfcast.static.signature`). Under MPI it is the rank with the most instructions,
    with ``instructions.rank_spread`` per element.

    Parameters
    ----------
    command : sequence of str
        An executable built with ``-g`` and its arguments.
    ranks : int
        MPI processes (run under ``mpirun`` when above 1).
    point : mapping of str to float, optional
        The parameter values to record the signature at.
    machine : MachineProfile, optional
        Target machine whose cache geometry (``D1``, ``LL``) the simulation uses.
    cache : mapping, optional
        ``size,associativity,line`` per ``I1``/``D1``/``LL``, over the machine's.
    timeout : float, optional
        Seconds before the run is stopped.

    Raises
    ------
    InputError
        For a missing program or one without line information.
    WorkError
        When the run fails.
    """
    chosen, _every_rank = collect_rank_signatures(
        command, ranks=ranks, point=point, machine=machine, cache=cache, timeout=timeout
    )
    return chosen


def collect_rank_signatures(
    command: Sequence[str],
    *,
    ranks: int = 1,
    point: Mapping[str, float] | None = None,
    machine: MachineProfile | None = None,
    cache: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[Experiment, list[Experiment]]:
    """As :func:`collect_signature`, and every rank's own signature beside the chosen one.

    Returns
    -------
    (Experiment, list of Experiment)
        The busiest rank's signature and every rank's, in rank order (metadata
        ``signature.rank``; with another MPI than Open MPI, in process-id order, and
        ``signature.ranks_known`` is false).
    """
    from perfcast.measure.signature import collect_signature as collect

    geometry = {**(machine.cache_geometry() if machine else {}), **(cache or {})}
    chosen, run = collect(command, ranks=ranks, point=point, cache=geometry, timeout=timeout)
    return chosen, run.rank_signatures


def extrapolate_signature(
    signature: Experiment,
    target: Mapping[str, float] | str,
    *,
    forms: str = "pmac",
    holdouts: int = 1,
    relative: bool = False,
) -> Extrapolation:
    """Extrapolate signatures at three or more core counts to a larger one, element by element.

    Parameters
    ----------
    signature : Experiment
        Signatures at several values of one parameter (merged into one experiment).
    target : mapping or str
        ``{"p": 8192}`` or ``"p=8192"``.
    forms : {"pmac", "pmnf", "both"}
        Canonical forms (constant, linear, logarithmic, exponential, inverse, power), perfcast's
        PMNF search, or the better of both per element (:mod:`perfcast.analyze.extrapolate`).
    holdouts : int
        A canonical form is chosen by its worst error predicting each of this many largest
        core counts from the smaller ones (1: the largest alone; rolling-origin validation
        from 2 on).
    relative : bool
        Fit the canonical forms to relative residuals (every core count alike) rather than
        absolute ones.

    Returns
    -------
    Extrapolation
        ``signature`` (the experiment at the target, carrying each element's interval in its
        metadata), ``elements`` (form, formula, fit and validation error, ``low``/``high``
        interval and the reasons its extrapolation is ``ambiguous``, per element), ``skipped``
        and ``warnings`` (among them the ambiguous elements of influential blocks;
        :mod:`perfcast.analyze.extrapolate_interval`).
    """
    from perfcast.analyze.extrapolate import extrapolate

    if isinstance(target, str):
        target = parse_point(target, signature.parameter_names, source="target")
    return extrapolate(signature, target, forms, holdouts=holdouts, relative=relative)


def probe_machine(
    *, quick: bool = False, largest_working_set: int | None = None, name: str | None = None
) -> MachineProfile:
    """Measure this machine with perfcast's C probes (compiled at run time).

    Returns a machine profile: a bandwidth surface over working-set size, access pattern and
    loads/stores; level bandwidths; floating-point rates per kind; the cache geometry.
    ``quick`` takes well under a minute.

    Raises
    ------
    WorkError
        Without a C compiler, or when a probe fails.
    """
    from perfcast.measure.probe import probe_machine as probe

    return probe(quick=quick, largest_working_set=largest_working_set, name=name)


def load_machine(path: str | Path) -> MachineProfile:
    """Read a ``perfcast-machine`` JSON file (:mod:`perfcast.io.machine_profile`).

    Raises
    ------
    InputError
        Naming the file and the missing or malformed field.
    """
    from perfcast.io.machine_profile import read_machine

    return read_machine(path)


def save_machine(profile: MachineProfile, path: str | Path) -> None:
    """Write a machine profile as ``perfcast-machine`` JSON."""
    from perfcast.io.machine_profile import write_machine

    write_machine(profile, path)


def convolve(signature: Experiment, machine: MachineProfile) -> Convolution:
    """Predicted computation time of a signature (one point) on a machine.

    Each block's floating-point time (operations over the machine's rates), memory time (bytes
    at the bandwidth of the cache levels its cumulative hit rates say serve them, streams at
    the stream bandwidths) and instruction time overlap as the machine's ``overlap`` says, and
    its branch mispredictions add their penalty; summed per function and in total
    (:mod:`perfcast.analyze.convolve`). An extrapolated signature's element intervals give the
    total's ``interval`` (each block at its costly and its cheap corner, added up), with a
    warning when it reaches more than 5 % from the prediction.

    Raises
    ------
    InputError
        When the signature has several points or lacks features, or the machine lacks a rate
        the signature needs (naming file and field).
    """
    from perfcast.analyze.convolve import convolve as convolve_blocks

    return convolve_blocks(signature, machine)


def render_pmac(
    value: Convolution | Extrapolation | MachineProfile,
    format: str = "text",  # noqa: A002 - as render's
) -> str:
    """A convolution, extrapolation or machine profile as text or strict JSON."""
    from perfcast.analyze.convolve import Convolution
    from perfcast.display.pmac import convolution_text, extrapolation_text, machine_text
    from perfcast.io.machine_profile import MachineProfile

    if format not in ("text", "json"):
        raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
    if isinstance(value, MachineProfile):
        return value.to_json() if format == "json" else machine_text(value)
    if format == "json":
        return dumps(value.to_dict()) + "\n"
    if isinstance(value, Convolution):
        return convolution_text(value)
    return extrapolation_text(value)


def merge_signatures(signatures: Sequence[Experiment]) -> Experiment:
    """One experiment holding signatures taken at different points (for extrapolation).

    Raises
    ------
    InputError
        When the signatures have different parameters or two hold the same point.
    """
    import pandas as pd

    if not signatures:
        raise InputError("no signature to merge")
    first = signatures[0]
    for other in signatures[1:]:
        if other.parameter_names != first.parameter_names:
            raise InputError(
                f"signatures with different parameters: {first.parameter_names} and "
                f"{other.parameter_names}",
                other.source,
                reason="signature-parameters",
            )
    frame = pd.concat([s.frame for s in signatures], ignore_index=True)
    metrics = {name: m for s in signatures for name, m in s.metrics.items()}
    sources = ", ".join(str(s.source) for s in signatures)
    return Experiment.from_frame(
        frame,
        parameters=first.parameters,
        metrics=metrics,
        metadata=dict(first.metadata),
        source=sources if len(signatures) > 1 else first.source,
    )
