"""Collect an application signature: run a program under callgrind with cache simulation.

Every rank runs under ``valgrind --tool=callgrind --dump-instr=yes --cache-sim=yes
--branch-sim=yes`` with the cache geometry of the target machine, writing its own profile. Each
rank's profile becomes feature vectors (:mod:`perfcast.static.signature`); the signature is the
rank with the most computation (most executed instructions of the program's own code, PMaC's
choice), and the spread over ranks is kept: ``instructions.rank_spread`` per element is
``(max - min) / max`` of its instructions over the ranks, and the metadata lists every rank's
total. With Open MPI's ``mpirun`` the profiles are named by MPI rank, so ``chosen_rank`` is the
rank; otherwise it is the position of the process in process-id order (``ranks_known`` false). Every
rank's own signature is kept in :class:`SignatureRun`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfcast.core.errors import InputError, WorkError
from perfcast.core.experiment import Experiment, Metric, Parameter
from perfcast.measure.process import run_process
from perfcast.measure.spec import DEFAULT_CACHE
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import read_callgrind
from perfcast.static.signature import (
    BOUNDED_FEATURES,
    FUNCTION_PREFIX,
    signature_features,
    total_instructions,
)

SPREAD_METRIC = "instructions.rank_spread"
_ROOT_ENVIRONMENT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@dataclass(frozen=True)
class SignatureRun:
    """How a signature was taken: the program's wall time under valgrind, every rank's
    instructions, the chosen rank and every rank's own signature."""

    wall_time: float
    rank_totals: list[float]
    chosen_rank: int
    rank_signatures: list[Experiment]


def _open_mpi() -> bool:
    """Whether ``mpirun`` is Open MPI's (which tells each process its rank)."""
    try:
        done = subprocess.run(
            ["mpirun", "--version"], capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in done.stdout + done.stderr


def _profile_order(path: Path) -> tuple[int, str]:
    suffix = path.name.rpartition(".")[2]
    return (int(suffix), "") if suffix.isdigit() else (0, path.name)


def callgrind_command(
    profile_dir: Path, cache: Mapping[str, str], process: str = "%p"
) -> list[str]:
    """The ``valgrind`` words that go before the program (one profile per process, named by
    ``process``: valgrind's ``%p`` process id or ``%q{OMPI_COMM_WORLD_RANK}``)."""
    geometry = [f"--{level}={cache[level]}" for level in ("I1", "D1", "LL")]
    return [
        "valgrind",
        "-q",
        "--tool=callgrind",
        "--dump-instr=yes",
        "--cache-sim=yes",
        "--branch-sim=yes",
        *geometry,
        f"--callgrind-out-file={profile_dir / ('callgrind.out.' + process)}",
    ]


def collect_signature(
    command: Sequence[str],
    *,
    ranks: int = 1,
    point: Mapping[str, float] | None = None,
    cache: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[Experiment, SignatureRun]:
    """Run ``command`` under callgrind and return its signature as an experiment.

    Parameters
    ----------
    command : sequence of str
        The program (an ELF executable built with ``-g``) and its arguments.
    ranks : int
        MPI processes; above 1 the program runs under ``mpirun --oversubscribe -np ranks``.
    point : mapping of str to float, optional
        Parameter values the signature is recorded at; ``{"p": ranks}`` by default.
    cache : mapping, optional
        ``size,associativity,line`` for ``I1``, ``D1`` and ``LL``
        (default: the campaigns', :data:`perfcast.measure.spec.DEFAULT_CACHE`).
    timeout : float, optional
        Seconds before the run is stopped.

    Returns
    -------
    (Experiment, SignatureRun)
        Kernels are the blocks, lines and functions, metrics their features.

    Raises
    ------
    InputError
        When the program is missing or not an executable with line information.
    WorkError
        When valgrind (or, for several ranks, mpirun) is not installed, the run fails or it
        writes no profile.
    """
    if not command:
        raise InputError("no program to run")
    if ranks < 1:
        raise InputError(f"ranks must be at least 1, not {ranks}", value=ranks)
    for tool in ("valgrind", "mpirun") if ranks > 1 else ("valgrind",):
        if shutil.which(tool) is None:
            raise WorkError(f"{tool} is not installed: a signature runs the program under it")
    program = shutil.which(command[0]) or command[0]
    if not Path(program).is_file():
        raise InputError("no such program", command[0])
    binary = read_binary(program)
    geometry = {**DEFAULT_CACHE, **(cache or {})}
    at = dict(point) if point else {"p": float(ranks)}
    with tempfile.TemporaryDirectory(prefix="perfcast-signature-") as scratch:
        profile_dir = Path(scratch)
        by_rank = ranks > 1 and _open_mpi()
        process = "%q{OMPI_COMM_WORLD_RANK}" if by_rank else "%p"
        argv = [*callgrind_command(profile_dir, geometry, process), program, *command[1:]]
        if ranks > 1:
            argv = ["mpirun", "--oversubscribe", "-np", str(ranks), *argv]
        env = {**os.environ, **_ROOT_ENVIRONMENT}
        start = time.perf_counter()
        outcome = run_process(argv, Path.cwd(), env, timeout)
        wall = time.perf_counter() - start
        if outcome.timed_out or outcome.returncode != 0:
            ending = "timed out" if outcome.timed_out else f"exited with {outcome.returncode}"
            raise WorkError(f"{' '.join(command)} {ending} under valgrind: {outcome.stderr_tail}")
        paths = sorted(profile_dir.glob("callgrind.out.*"), key=_profile_order)
        if len(paths) != ranks:
            raise WorkError(f"valgrind wrote {len(paths)} profiles for {ranks} ranks")
        per_rank = [
            signature_features(binary, read_callgrind(path), source=str(path)) for path in paths
        ]
    totals = [total_instructions(features.items()) for features in per_rank]
    chosen = max(range(len(totals)), key=lambda i: totals[i])
    description = {
        "command": list(command),
        "ranks": ranks,
        "chosen_rank": chosen,
        "ranks_known": by_rank or ranks == 1,
        "rank_instructions": totals,
        "cache": dict(geometry),
        "collected_by": "valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes",
    }
    signatures = []
    for rank in range(len(per_rank)):
        signature = signature_experiment(per_rank, rank, at, source=" ".join(command))
        signature.metadata["signature"] = {**description, "rank": rank}
        signatures.append(signature)
    return signatures[chosen], SignatureRun(wall, totals, chosen, signatures)


def signature_records(program: str, paths: Sequence[Path]) -> list[dict[str, object]]:
    """Campaign records (``kernel``, ``metric``, ``value``) of the busiest rank's signature.

    Parameters
    ----------
    program : str
        The executable that ran.
    paths : sequence of Path
        One callgrind profile per rank.

    Raises
    ------
    InputError
        When the program or a profile cannot be read as a signature.
    """
    binary = read_binary(program)
    per_rank = [
        signature_features(binary, read_callgrind(path), source=str(path)) for path in paths
    ]
    totals = [total_instructions(features.items()) for features in per_rank]
    chosen = max(range(len(totals)), key=lambda i: totals[i])
    kernels, metrics, values = _signature_columns(per_rank, chosen)
    return [
        {"kernel": k, "metric": m, "value": v}
        for k, m, v in zip(kernels, metrics, values, strict=True)
    ]


def _signature_columns(
    per_rank: Sequence[Mapping[str, Mapping[str, float]]], chosen: int
) -> tuple[list[str], list[str], list[float]]:
    kernels: list[str] = []
    metrics: list[str] = []
    values: list[float] = []
    for kernel, features in per_rank[chosen].items():
        for metric, value in features.items():
            kernels.append(kernel)
            metrics.append(metric)
            values.append(value)
        counts = [rank.get(kernel, {}).get("instructions", 0.0) for rank in per_rank]
        largest = max(counts)
        if largest > 0:  # 0 on one rank, so every core count has it
            kernels.append(kernel)
            metrics.append(SPREAD_METRIC)
            values.append((largest - min(counts)) / largest)
    return kernels, metrics, values


def signature_experiment(
    per_rank: Sequence[Mapping[str, Mapping[str, float]]],
    chosen: int,
    point: Mapping[str, float],
    *,
    source: str,
) -> Experiment:
    """The chosen rank's features at ``point``, with the instruction spread over the ranks."""
    kernels, metrics, values = _signature_columns(per_rank, chosen)
    units = [Metric(name, "rate") for name in BOUNDED_FEATURES]
    coordinates = {name: [float(value)] * len(values) for name, value in point.items()}
    return Experiment.from_columns(
        kernels,
        metrics,
        coordinates,
        values,
        parameters=[Parameter(name) for name in point],
        metrics=units,
        metadata={"signature_levels": ["bb", "line", FUNCTION_PREFIX.rstrip(":")]},
        source=source,
    )
