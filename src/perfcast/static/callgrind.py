"""Measured instruction mixes: per-instruction counts from callgrind, categorized like the model.

``valgrind --tool=callgrind --dump-instr=yes`` writes one cost line per executed instruction
address: the positions (``instr`` and, by default, ``line``) then the event counts (``Ir`` = times
the instruction ran). Positions may be absolute (decimal or ``0x`` hex), relative to the previous
cost line (``+N``, ``-N``) or the same (``*``). A ``calls=`` line makes the cost line after it the
inclusive cost of a call, which is not the caller's own cost and is skipped here.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from itertools import pairwise
from pathlib import Path

import pandas as pd

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment, Metric, Parameter
from perfcast.static.binary import Binary
from perfcast.static.control_flow import basic_blocks
from perfcast.static.instruction_mix import COUNT_KEYS
from perfcast.static.mix_output import metric_name
from perfcast.static.repeated_strings import is_repeated

_NAMED = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")


@dataclass(frozen=True)
class CallgrindProfile:
    """Self ``Ir`` counts per executed instruction.

    Attributes
    ----------
    counts : dict of (str, int) to int
        (object file, runtime address) -> times executed.
    total : int
        Sum of all self counts; equals the file's ``summary``/``totals`` Ir.
    declared_total : int or None
        The file's own ``summary:`` or ``totals:`` Ir figure.
    events : tuple of str
        The file's event names (``Ir`` and, with ``--cache-sim=yes``, ``Dr``, ``D1mr``, ...).
    costs : dict of (str, int) to list of int
        (object file, runtime address) -> self cost of every event, in ``events`` order.
    """

    counts: dict[tuple[str, int], int]
    total: int
    declared_total: int | None
    events: tuple[str, ...] = ()
    costs: dict[tuple[str, int], list[int]] = dataclass_field(default_factory=dict)


def read_callgrind(path: str | os.PathLike[str]) -> CallgrindProfile:
    """Parse a callgrind output file written with ``--dump-instr=yes``.

    Raises
    ------
    InputError
        Naming the file and line, when the file is not such a dump or a line is malformed;
        naming the file when its costs add up to less than its ``summary:`` (cut short).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(f"cannot read callgrind file: {error.strerror}", str(path)) from error
    parser = _Parser(str(path))
    for number, line in enumerate(text.splitlines(), start=1):
        parser.feed(line, number)
    return parser.result()


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.positions: list[str] | None = None
        self.events: list[str] | None = None
        self.names: dict[str, dict[str, str]] = defaultdict(dict)
        self.object = ""
        self.last: list[int] = []
        self.skip_next_cost = False
        self.counts: dict[tuple[str, int], int] = defaultdict(int)
        self.costs: dict[tuple[str, int], list[int]] = {}
        self.declared: int | None = None

    def fail(self, message: str, number: int) -> InputError:
        return InputError(message, self.source, number)

    def feed(self, line: str, number: int) -> None:
        line = line.strip()
        if not line or line.startswith("#"):
            return
        head = line[0]
        if head.isdigit() or head in "+-*":
            self.cost(line, number)
            return
        key, _, value = line.partition("=") if "=" in line.split(":", 1)[0] else ("", "", "")
        if key:
            self.assignment(key, value, number)
            return
        key, _, value = line.partition(":")
        if key == "positions":
            self.positions = value.split()
            if "instr" not in self.positions:
                raise self.fail("not an instruction-level dump: run with --dump-instr=yes", number)
        elif key == "events":
            self.events = value.split()
        elif key in ("summary", "totals") and self.events and "Ir" in self.events:
            self.declared = int(value.split()[self.events.index("Ir")])

    def assignment(self, key: str, value: str, number: int) -> None:
        if key in ("ob", "cob"):
            name = self.name("ob", value, number)
            if key == "ob":
                self.object = name
        elif key in ("fl", "fi", "fe", "cfi", "cfl"):
            self.name("fl", value, number)
        elif key in ("fn", "cfn"):
            self.name("fn", value, number)
        elif key == "calls":
            self.skip_next_cost = True
        elif key in ("jump", "jcnd"):
            raise self.fail("jump records are not supported: run without --collect-jumps", number)

    def name(self, kind: str, value: str, number: int) -> str:
        match = _NAMED.match(value.strip())
        if not match:
            return value.strip()
        ident, name = match.groups()
        if name is not None:
            self.names[kind][ident] = name
            return name
        if ident not in self.names[kind]:
            raise self.fail(f"name ({ident}) used before it is defined", number)
        return self.names[kind][ident]

    def cost(self, line: str, number: int) -> None:
        if self.positions is None or self.events is None:
            raise self.fail("cost line before the positions:/events: header", number)
        fields = line.split()
        count = len(self.positions)
        if len(fields) < count:
            raise self.fail(f"cost line with fewer than {count} positions", number)
        values = []
        for i, field in enumerate(fields[:count]):
            previous = self.last[i] if i < len(self.last) else 0
            try:
                if field == "*":
                    values.append(previous)
                elif field[0] in "+-":
                    values.append(previous + int(field, 0))
                else:
                    values.append(int(field, 0))
            except ValueError as error:
                raise self.fail(f"bad position {field!r}", number) from error
        self.last = values
        if self.skip_next_cost:
            self.skip_next_cost = False
            return
        try:
            costs = [int(v) for v in fields[count:]]
        except ValueError as error:
            raise self.fail(f"bad cost in {line!r}", number) from error
        ir_index = self.events.index("Ir") if "Ir" in self.events else None
        if ir_index is None:
            raise self.fail("the dump has no Ir event", number)
        if ir_index < len(costs):
            address = values[self.positions.index("instr")]
            self.counts[(self.object, address)] += costs[ir_index]
            known = self.costs.setdefault((self.object, address), [0] * len(self.events))
            for i, cost in enumerate(costs[: len(known)]):
                known[i] += cost

    def result(self) -> CallgrindProfile:
        if self.positions is None:
            raise InputError("not a callgrind file: no positions: header", self.source)
        total = sum(self.counts.values())
        if self.declared is not None and total < self.declared:
            raise InputError(
                f"truncated callgrind file: its instruction costs add up to {total:,}, its "
                f"summary says {self.declared:,}",
                self.source,
            )
        return CallgrindProfile(
            dict(self.counts),
            total,
            self.declared,
            tuple(self.events or ()),
            self.costs,
        )


def measured_mix(binary: Binary, profile: CallgrindProfile) -> dict[str, dict[str, int]]:
    """Measured counts per function and key of :data:`COUNT_KEYS`, categorized like the model.

    The executable's own object is found in the profile by file name; its load offset (non-zero
    for position-independent executables) is found from where ``main`` (or the first function
    that ran) starts.

    Raises
    ------
    InputError
        When the profile holds no instruction of the binary or addresses do not line up.
    """
    obj, offset = binary_object(binary, profile)
    executed = {addr: n for (name, addr), n in profile.counts.items() if name == obj}
    result: dict[str, dict[str, int]] = {}
    for function in binary.functions.values():
        counts = dict.fromkeys(COUNT_KEYS, 0)
        for insn in function.instructions:
            n = executed.get(insn.address + offset, 0)
            counts[insn.category] += n
            counts["total"] += n
            counts["reads"] += n if insn.reads else 0
            counts["writes"] += n if insn.writes else 0
        result[function.name] = counts
    return result


def binary_object(binary: Binary, profile: CallgrindProfile) -> tuple[str, int]:
    """The profile's object file that is ``binary`` and its load offset (runtime minus
    link-time address).

    Raises
    ------
    InputError
        When the profile holds no single object for the binary or its addresses do not line up.
    """
    own = os.path.realpath(binary.path)
    objects = {obj for obj, _ in profile.counts}
    matches = [o for o in objects if os.path.realpath(o) == own] or [
        o for o in objects if os.path.basename(o) == os.path.basename(own)
    ]
    if len(matches) != 1:
        raise InputError(
            f"the callgrind profile has no single object for {binary.path}", str(binary.path)
        )
    executed = {addr: n for (obj, addr), n in profile.counts.items() if obj == matches[0]}
    return matches[0], _load_offset(binary, executed)


def measured_experiment(
    binary: Binary,
    runs: Mapping[tuple[float, ...], CallgrindProfile],
    parameters: Sequence[str],
) -> Experiment:
    """Measured instruction mixes of several runs as an :class:`Experiment`.

    Kernels are the functions, metrics those of the models (``instructions.<category>``,
    ``memory.reads``, ...), so measured and static models compare directly.

    Parameters
    ----------
    binary : Binary
        The executable the profiles were taken of.
    runs : mapping of parameter values to CallgrindProfile
        One profile per run, keyed by the parameter values in ``parameters`` order (several
        repetitions of a point are not distinguished: callgrind counts are deterministic).
    parameters : sequence of str
        Parameter names.
    """
    rows = []
    for point, profile in runs.items():
        if len(point) != len(parameters):
            raise InputError(f"run {point} does not give one value per parameter {parameters}")
        values = dict(zip(parameters, point, strict=True))
        for function, counts in measured_mix(binary, profile).items():
            for key in COUNT_KEYS:
                rows.append(
                    {"kernel": function, "metric": metric_name(key), **values,
                     "repetition": 0, "value": float(counts[key])}
                )  # fmt: skip
    metrics = [Metric(metric_name(key), "instructions") for key in COUNT_KEYS]
    return Experiment.from_frame(
        pd.DataFrame(rows),
        parameters=[Parameter(name) for name in parameters],
        metrics=metrics,
        metadata={"binary": str(binary.path), "measured_by": "valgrind --tool=callgrind"},
        source=str(binary.path),
    )


_PAGE = 0x1000


def _load_offset(binary: Binary, executed: dict[int, int]) -> int:
    """Runtime address minus link-time address of the binary's code in the profile.

    Callgrind writes addresses of a position-independent executable relative to its load
    address, so this is normally 0; otherwise it is the shift that lines up most executed
    addresses with instruction starts of the functions with line information.
    """
    starts = {insn.address for f in binary.functions.values() for insn in f.instructions}
    sample = sorted(executed)[:: max(1, len(executed) // 500)]

    def score(offset: int) -> int:
        return sum(1 for address in sample if address - offset in starts)

    hits = score(0)
    if hits * 10 >= len(sample) * 9:
        return 0
    # the load bias is page-aligned: a function entry and its runtime address share the low bits
    entries: dict[int, list[int]] = defaultdict(list)
    for function in binary.functions.values():
        entries[function.low % _PAGE].append(function.low)
    candidates = {a - low for a in executed for low in entries.get(a % _PAGE, ())}
    best = max(sorted(candidates), key=score, default=0)
    if score(best) <= hits:
        best = 0
    if score(best) == 0:
        raise InputError(
            "no executed address of the profile is an instruction of the binary", str(binary.path)
        )
    return best


MeasuredKey = tuple[str, str, int]
"""``("block", function, block address)``, ``("entry", function, entry address)`` or
``("rep", function, instruction address)`` (a ``rep``-prefixed instruction's executions, one per
repetition)."""


def measured_loop_counts(binary: Binary, profile: CallgrindProfile) -> dict[MeasuredKey, int]:
    """How often each basic block inside a machine loop, each block outside loops (for code
    under a guard no count can be given for) and each function ran in one run.

    A block runs as often as its first instruction that is no call and no ``rep``-prefixed
    instruction (which counts once per repetition; with callgrind's default
    ``--skip-plt=yes`` a call through the PLT is charged the stub's jump too, see
    :func:`plt_charged_to_calls`); a function is entered as often as its first instruction runs.
    Link-time addresses are the keys, so the counts of several runs line up.

    Parameters
    ----------
    binary : Binary
        The executable profiled.
    profile : CallgrindProfile
        A callgrind run of it with ``--dump-instr=yes``.

    Returns
    -------
    dict of MeasuredKey to int
    """
    obj, offset = binary_object(binary, profile)
    executed = {addr: n for (name, addr), n in profile.counts.items() if name == obj}
    counts: dict[MeasuredKey, int] = {}
    for function in binary.functions.values():
        counts["entry", function.name, function.low] = executed.get(function.low + offset, 0)
        blocks = basic_blocks(function)
        for block in blocks:
            first = next(
                (i for i in block.instructions if i.kind != "call" and not is_repeated(i)), None
            )
            address = first.address if first is not None else block.start
            counts["block", function.name, block.start] = executed.get(address + offset, 0)
            for insn in block.instructions:
                if is_repeated(insn):  # counted once per repetition
                    counts["rep", function.name, insn.address] = executed.get(
                        insn.address + offset, 0
                    )
    return counts


def plt_charged_to_calls(binary: Binary, profile: CallgrindProfile) -> bool:
    """True when the profile charges the PLT stubs' instructions to the calls that reach them
    (callgrind's default ``--skip-plt=yes``): a call ran more often than the instruction it
    returns to, which did run. The per-function totals of such a profile exceed what the
    functions execute by the stub's jump per call of a shared-library function (and a few
    instructions of lazy binding at a symbol's first call); ``--skip-plt=no`` keeps the stubs
    apart."""
    obj, offset = binary_object(binary, profile)
    executed = {addr: n for (name, addr), n in profile.counts.items() if name == obj}
    for function in binary.functions.values():
        for call, after in pairwise(function.instructions):
            if call.kind != "call":
                continue
            returned = executed.get(after.address + offset, 0)
            if returned and executed.get(call.address + offset, 0) > returned:
                return True
    return False
