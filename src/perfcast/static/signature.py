"""Application signatures (PMaC): a feature vector per basic block, source line and function.

A signature joins two views of one program: the executable's disassembly (what each instruction
computes, how wide its memory operand is; :mod:`perfcast.static.binary`) and a callgrind profile
taken with ``--dump-instr=yes --cache-sim=yes`` (how often each instruction ran, its data reads
and writes, and the simulated first-level and last-level misses). Only the executable's own
instructions count: library code (MPI, libc) is not part of the signature.

Features (metric names) of every block, line and function:

``instructions``
    Executed instructions.
``loads`` / ``stores``
    Data reads and writes as valgrind counts them (``Dr``, ``Dw``; implicit stack accesses of
    ``push``, ``call`` and ``ret`` included).
``bytes.loaded`` / ``bytes.stored``
    Reads and writes times the width of the instruction's memory operand (8 bytes for an
    access without an explicit operand, such as ``push``).
``fp.<op>.<precision>.<shape>``
    Floating-point operations: ``op`` one of :data:`FP_OPERATIONS`, ``precision`` ``f32`` or
    ``f64``, ``shape`` ``scalar`` or ``vector``. A vector instruction counts one operation per
    lane (``mulpd xmm`` two, ``vaddps ymm`` eight).
``branches`` / ``branch.mispredictions``
    Executed conditional and indirect branches and those callgrind's branch predictor
    simulation mispredicted (``Bc + Bi``, ``Bcm + Bim``; profiles taken with
    ``--branch-sim=yes`` only).
``l1.misses`` / ``ll.misses``
    Simulated data misses of the first level (``D1mr + D1mw``) and of the last level
    (``DLmr + DLmw``), for elements with data accesses (0 included).
``l1.hit_rate``
    ``1 - l1.misses / (loads + stores)``, for elements with data accesses.
``ll.cumulative_hit_rate``
    ``1 - ll.misses / (loads + stores)``: the share of data accesses served at or above the
    last level, for elements with data accesses. Hit rates are cumulative, as PMaC and
    MultiMAPS index the bandwidth surface (a level's rate counts every access served by it or
    a level closer to the core, so ``l1.hit_rate <= ll.cumulative_hit_rate``). Signatures of
    earlier perfcast versions hold ``ll.hit_rate``, the share of first-level misses the last
    level serves; :func:`cumulative_hit_rates` converts them.

Kernel names say the level: ``bb:<function>+0x<offset>`` (a basic block at that offset into its
function), ``line:<file>:<line>`` and ``fn:<function>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment, Metric
from perfcast.static.binary import Binary, BinaryInstruction
from perfcast.static.callgrind import CallgrindProfile, binary_object
from perfcast.static.control_flow import basic_blocks

CACHE_EVENTS: Final = ("Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw")
"""The callgrind events a signature needs (``--cache-sim=yes``)."""

BRANCH_EVENTS: Final = ("Bc", "Bcm", "Bi", "Bim")
"""The callgrind events of ``--branch-sim=yes``, used when the profile has them."""

FP_OPERATIONS: Final = ("add", "mul", "div", "fma", "other")
"""Kinds of floating-point operation; ``other`` is square roots, minima, comparisons,
conversions and logic."""

L1_RATE: Final = "l1.hit_rate"
LL_RATE: Final = "ll.cumulative_hit_rate"
LEGACY_LL_RATE: Final = "ll.hit_rate"
"""The last-level rate of earlier signatures: the share of first-level misses it serves."""

BOUNDED_FEATURES: Final = (L1_RATE, LL_RATE)
"""Features that are rates between 0 and 1."""

RATE_MISSES: Final = {L1_RATE: "l1.misses", LL_RATE: "ll.misses"}
"""Each hit rate and the miss count it is computed from (``1 - misses / accesses``)."""

BLOCK_PREFIX, LINE_PREFIX, FUNCTION_PREFIX = "bb:", "line:", "fn:"

_OPERAND_BYTES = {
    "byte": 1,
    "word": 2,
    "dword": 4,
    "qword": 8,
    "tbyte": 10,
    "xmmword": 16,
    "ymmword": 32,
    "zmmword": 64,
}
_OPERAND_SIZE = re.compile(r"\b(byte|word|dword|qword|tbyte|xmmword|ymmword|zmmword) ptr\b")
_REGISTER_BYTES = {"xmm": 16, "ymm": 32, "zmm": 64}
_VECTOR_REGISTER = re.compile(r"\b([xyz]mm)\d+\b")
_FMA = re.compile(r"^v?f(n?m(add|sub)|maddsub|msubadd)")
_ADD = re.compile(r"^v?h?(add|sub|addsub)(s|p)[sd]$|^f(i?add|i?sub|i?subr)p?$")
_MUL = re.compile(r"^v?mul(s|p)[sd]$|^fi?mulp?$")
_DIV = re.compile(r"^v?div(s|p)[sd]$|^fi?divr?p?$")
_DEFAULT_ACCESS_BYTES = 8


def is_fp_feature(name: str) -> bool:
    """True for a floating-point operation feature (``fp.add.f64.scalar``, ...)."""
    return name.startswith("fp.")


def fp_kind(instruction: BinaryInstruction) -> tuple[str, str, str, int] | None:
    """The floating-point kind of an instruction: (operation, precision, shape, lanes).

    None for an instruction that is not floating-point arithmetic (category ``fp_scalar`` or
    ``fp_vector`` of :mod:`perfcast.static.x86_categories`).
    """
    if instruction.category not in ("fp_scalar", "fp_vector"):
        return None
    name = instruction.mnemonic
    if _FMA.match(name):
        operation = "fma"
    elif _ADD.match(name):
        operation = "add"
    elif _MUL.match(name):
        operation = "mul"
    elif _DIV.match(name):
        operation = "div"
    else:
        operation = "other"
    single = name.endswith(("ss", "ps"))
    precision = "f32" if single else "f64"
    if instruction.category == "fp_scalar":
        return operation, precision, "scalar", 1
    registers = _VECTOR_REGISTER.findall(instruction.operands)
    width = max((_REGISTER_BYTES[r] for r in registers), default=16)
    return operation, precision, "vector", width // (4 if single else 8)


def access_bytes(instruction: BinaryInstruction) -> int:
    """Bytes one data access of the instruction moves: its memory operand's width."""
    match = _OPERAND_SIZE.search(instruction.operands)
    return _OPERAND_BYTES[match.group(1)] if match else _DEFAULT_ACCESS_BYTES


@dataclass
class _Tally:
    """Raw counts of one element, summed over its instructions."""

    counts: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, amount: float) -> None:
        if amount:
            self.counts[name] = self.counts.get(name, 0.0) + amount

    def merge(self, other: _Tally) -> None:
        for name, amount in other.counts.items():
            self.add(name, amount)

    def features(self) -> dict[str, float]:
        """Counts plus, for elements with data accesses, miss counts and cumulative hit rates."""
        counts = self.counts
        out = {k: v for k, v in counts.items() if k not in RATE_MISSES.values()}
        out = {"instructions": counts.get("instructions", 0.0), **out}
        accesses = counts.get("loads", 0.0) + counts.get("stores", 0.0)
        if accesses > 0:
            for rate, misses in RATE_MISSES.items():
                out[misses] = counts.get(misses, 0.0)
                out[rate] = 1.0 - out[misses] / accesses
        return out


def _instruction_tally(
    instruction: BinaryInstruction, costs: list[int], index: dict[str, int]
) -> _Tally:
    """Counts of one instruction; branch counts when ``index`` has the branch events."""
    tally = _Tally()
    runs = costs[index["Ir"]]
    tally.add("instructions", runs)
    reads, writes = costs[index["Dr"]], costs[index["Dw"]]
    width = access_bytes(instruction)
    tally.add("loads", reads)
    tally.add("stores", writes)
    tally.add("bytes.loaded", reads * width)
    tally.add("bytes.stored", writes * width)
    tally.add("l1.misses", costs[index["D1mr"]] + costs[index["D1mw"]])
    tally.add("ll.misses", costs[index["DLmr"]] + costs[index["DLmw"]])
    if "Bc" in index:
        tally.add("branches", costs[index["Bc"]] + costs[index["Bi"]])
        tally.add("branch.mispredictions", costs[index["Bcm"]] + costs[index["Bim"]])
    kind = fp_kind(instruction)
    if kind is not None:
        operation, precision, shape, lanes = kind
        tally.add(f"fp.{operation}.{precision}.{shape}", runs * lanes)
    return tally


def signature_features(
    binary: Binary, profile: CallgrindProfile, *, source: str = "<profile>"
) -> dict[str, dict[str, float]]:
    """Feature vectors of every executed basic block, source line and function.

    Parameters
    ----------
    binary : Binary
        The executable the profile was taken of (:func:`perfcast.static.binary.read_binary`).
    profile : CallgrindProfile
        A callgrind profile with per-instruction costs and cache simulation.
    source : str
        Name of the profile, used in error messages.

    Returns
    -------
    dict of str to dict of str to float
        Kernel name (``bb:``, ``line:``, ``fn:`` prefixed) -> feature -> value; elements that
        never ran are left out.

    Raises
    ------
    InputError
        When the profile lacks the cache-simulation events or holds no instruction of the binary.
    """
    missing = [e for e in ("Ir", *CACHE_EVENTS) if e not in profile.events]
    if missing:
        raise InputError(
            f"the profile has no {', '.join(missing)} events: a signature needs callgrind's "
            "cache simulation",
            source,
            reason="no-cache-simulation",
        )
    wanted = ["Ir", *CACHE_EVENTS]
    if all(e in profile.events for e in BRANCH_EVENTS):
        wanted += BRANCH_EVENTS
    index = {e: profile.events.index(e) for e in wanted}
    obj, offset = binary_object(binary, profile)
    elements: dict[str, _Tally] = {}
    for function in binary.functions.values():
        for block in basic_blocks(function):
            block_tally = _Tally()
            for instruction in block.instructions:
                costs = profile.costs.get((obj, instruction.address + offset))
                if costs is None or costs[index["Ir"]] == 0:
                    continue
                tally = _instruction_tally(instruction, costs, index)
                block_tally.merge(tally)
                if instruction.file is not None and instruction.line:
                    line_key = f"{LINE_PREFIX}{Path(instruction.file).name}:{instruction.line}"
                    elements.setdefault(line_key, _Tally()).merge(tally)
            if block_tally.counts.get("instructions"):
                name = f"{BLOCK_PREFIX}{function.name}+{block.start - function.low:#x}"
                elements[name] = block_tally
                function_key = f"{FUNCTION_PREFIX}{function.name}"
                elements.setdefault(function_key, _Tally()).merge(block_tally)
    if not elements:
        raise InputError("the profile holds no executed instruction of the program", source)
    return {name: tally.features() for name, tally in sorted(elements.items())}


def total_instructions(features: Iterable[tuple[str, dict[str, float]]]) -> float:
    """Instructions over the function-level elements of a signature (its computation)."""
    return sum(
        values.get("instructions", 0.0)
        for name, values in features
        if name.startswith(FUNCTION_PREFIX)
    )


def cumulative_hit_rates(signature: Experiment) -> tuple[Experiment, int]:
    """A signature with earlier perfcast versions' last-level rates made cumulative.

    An earlier signature's ``ll.hit_rate`` ``hl`` is the share of first-level misses the last
    level serves; the cumulative rate is ``h1 + (1 - h1) * hl`` with the element's
    ``l1.hit_rate`` ``h1`` at the same point and repetition (exact: both are shares of the same
    accesses). A signature without ``ll.hit_rate`` is returned as it is.

    Parameters
    ----------
    signature : Experiment
        Any signature (collected, merged, extrapolated or hand-written).

    Returns
    -------
    (Experiment, int)
        The signature with ``ll.cumulative_hit_rate`` in place of every ``ll.hit_rate``, and how
        many values were converted.

    Raises
    ------
    InputError
        When an element holds both rates, or ``ll.hit_rate`` without the ``l1.hit_rate`` it
        needs (naming the kernel).
    """
    frame = signature.frame
    legacy = frame["metric"] == LEGACY_LL_RATE
    if not legacy.any():
        return signature, 0
    keys = ["kernel", *signature.parameter_names, "repetition"]
    old = frame[legacy]
    if (frame["metric"] == LL_RATE).any():
        kernel = old["kernel"].iloc[0]
        raise InputError(
            f"kernel '{kernel}': the signature mixes '{LEGACY_LL_RATE}' (share of first-level "
            f"misses, earlier versions) with '{LL_RATE}'; re-collect or convert it whole",
            signature.source,
            reason="mixed-hit-rates",
        )
    first = frame[frame["metric"] == L1_RATE].set_index(keys)["value"]
    joined = old.join(first.rename("l1"), on=keys)
    lacking = joined["l1"].isna()
    if lacking.any():
        kernel = joined.loc[lacking, "kernel"].iloc[0]
        raise InputError(
            f"kernel '{kernel}' has '{LEGACY_LL_RATE}' (share of first-level misses) but no "
            f"'{L1_RATE}' to make it cumulative",
            signature.source,
            reason="missing-feature",
            value=L1_RATE,
        )
    converted = frame.copy()
    h1 = joined["l1"].clip(0.0, 1.0)
    converted.loc[legacy, "value"] = h1 + (1.0 - h1) * joined["value"].clip(0.0, 1.0)
    converted.loc[legacy, "metric"] = LL_RATE
    metrics = {n: m for n, m in signature.metrics.items() if n != LEGACY_LL_RATE}
    metrics[LL_RATE] = Metric(LL_RATE, "rate")
    upgraded = Experiment.from_frame(
        converted,
        parameters=signature.parameters,
        metrics=metrics,
        metadata=signature.metadata,
        source=signature.source,
    )
    return upgraded, int(legacy.sum())


SIGNATURE_PREFIXES: Final = (BLOCK_PREFIX, LINE_PREFIX, FUNCTION_PREFIX)
"""Kernel name prefixes of signature elements."""


def is_count_feature(name: str) -> bool:
    """True for a feature that counts events (instructions, accesses, bytes, operations,
    branches, misses): not a rate and not a spread over ranks (``*_spread``)."""
    return name not in (*BOUNDED_FEATURES, LEGACY_LL_RATE) and not name.endswith("_spread")


def fill_unexecuted(signature: Experiment) -> tuple[Experiment, int]:
    """A signature series with the counts of elements that did not run made explicit zeros.

    A signature lists only the blocks, lines and functions that ran, and of those only the
    counts that are not zero (:func:`signature_features`). Across core counts, a block may run
    at some of them only (the reduction loop of rank 0 runs from ``p = 2`` on; a set-up branch
    at ``p = 1`` only): its counts at the other points are 0, not unknown. This function adds
    those zeros for every count feature (:func:`is_count_feature`) of every signature element
    (kernel names ``bb:``, ``line:``, ``fn:``), at every point where the signature records that
    feature for some element (a point collected without branch simulation gets no branch zeros).
    Rates and other kernels are left as they are: they have no value where nothing ran.

    Parameters
    ----------
    signature : Experiment
        Signatures at several points, merged into one experiment.

    Returns
    -------
    (Experiment, int)
        The series with the zeros added, and how many were added.
    """
    import pandas as pd

    frame = signature.frame
    names = signature.parameter_names
    elements = frame[
        frame["kernel"].str.startswith(SIGNATURE_PREFIXES) & frame["metric"].map(is_count_feature)
    ]
    if elements.empty:
        return signature, 0
    recorded = elements[[*names, "metric"]].drop_duplicates()
    series = elements[["kernel", "metric"]].drop_duplicates()
    wanted = series.merge(recorded, on="metric")
    present = elements[["kernel", "metric", *names]].drop_duplicates()
    marked = wanted.merge(present, on=["kernel", "metric", *names], how="left", indicator=True)
    absent = marked[marked["_merge"] == "left_only"].drop(columns="_merge")
    if absent.empty:
        return signature, 0
    zeros = absent.assign(repetition=0, value=0.0)[list(frame.columns)]
    filled = pd.concat([frame, zeros], ignore_index=True)
    return (
        Experiment.from_frame(
            filled,
            parameters=signature.parameters,
            metrics=signature.metrics,
            metadata=signature.metadata,
            source=signature.source,
        ),
        len(zeros),
    )
