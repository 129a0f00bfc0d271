"""Flow conservation: predicted block counts that no run of the machine code can produce.

In every run of a function, each basic block is entered as often as control reaches it and left
as often as it is entered (Kirchhoff's law on the control-flow graph)::

    count(B) = sum of the edges into B   (+ calls, for the entry block)
             = sum of the edges out of B (+ returns, tail jumps, calls that end the program)

The edge counts are unknown, but they are non-negative. Given predicted counts of the blocks at
concrete parameter values, the prediction is impossible when no non-negative edge counts satisfy
these equations: a linear feasibility problem, solved with HiGHS (``scipy.optimize.linprog``) in
the form that also says where it fails: the conserving block counts nearest the predicted ones,
each block's distance weighed by its instructions. The distance is a lower bound of the
instruction executions the prediction misplaces; the blocks off by more than the tolerance, or
better the blocks that alone, counted otherwise, would make every count fit, are named.

Besides conservation, these predictions are impossible and named the same way:

- a negative count;
- instructions of one basic block with different counts (a block runs as a whole; a
  ``rep``-prefixed string instruction is compared by its block's count, since callgrind counts
  it once per repetition);
- a loop of the machine code (a strongly connected set of blocks) predicted to run while every
  way into it is predicted to run 0 times (edge counts alone would let a cycle carry flow that
  nothing entered).

A count that is not a whole number at whole parameter values is an average (a probability
share) rather than an impossibility: it is noted, not refused.

What the check cannot see: a trip count wrong by the same factor for every block of a loop
(the back edge carries any surplus: a loop predicted to run 100 times per entry that runs 50 is
as consistent as the truth), and a wrong count of a block whose neighbours are wrong alike.

Where it is decided:

- **Edges** are the direct jumps and fall-throughs inside the function
  (:func:`perfcast.static.control_flow.basic_blocks`). A block leaves the function when it ends
  in a return, a call that does not return, or a jump or branch to another function (a tail
  call); such blocks may send any part of their count out. Code of another function (gcc's
  ``f.cold``) may jump into the function: those places may be entered from outside.
- **Calls** may fail to return (a function that ends the program without saying so): blocks
  holding calls may let their count out, at most once per program run in total.
- **Indirect jumps** (a ``switch`` table) have successors the binary does not name: a function
  holding one is not checked (its notes say so).
- **Unknown counts** (an expression that cannot be evaluated at the point) are free variables.
- **Tolerance**: an equation holds within half a run plus 0.1 % of the block's count (counts are
  expected values over runs; measured counts of several runs are fitted models).
- **Points**: the parameter values of the profiled runs, else those of the build (macro
  parameters' ``-D`` flags and ``#define``s), where every prediction, static or measured, must
  hold; a function whose counts hold no parameter is checked as it is. A failure there is an
  error of the prediction. For a function whose counts need a value that is not known (a size
  read at run time) two points stand in: those parameters at 7 (a few iterations: remainder and
  peeled code and zero-trip guards all run) and at 61 (per-iteration and per-entry code differ
  by a wide margin, so a block counted per call among blocks counted per iteration shows); both
  are odd, so the remainders of loops unrolled by 2, 4 or 8 are not empty. A failure there is a
  note (counts read from the binary hold at the built values only), or a ``warning:`` when no
  count of the function is read from the binary (then every count holds at any values, and
  the failure is an error of the prediction); measured counts (which hold at the profiled
  values only) are free variables.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sympy
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from perfcast.core.errors import WorkError
from perfcast.static.binary import Binary, BinaryFunction, BinaryInstruction
from perfcast.static.control_flow import Block, basic_blocks, natural_loops
from perfcast.static.repeated_strings import is_repeated
from perfcast.static.source_shares import UndefinedCount

STAND_IN_VALUES: tuple[int, ...] = (7, 61)
"""Values every parameter takes at the check's points when no profiled run gives them."""

ABSOLUTE_TOLERANCE = 0.5
"""Runs by which an equation may miss (counts are expected values)."""

RELATIVE_TOLERANCE = 1e-3
"""Share of a block's count by which an equation may miss."""

PROGRAM_ENDS = 1.0
"""Runs per program run in which a call may not come back (the program ends once)."""

_NAMED_BLOCKS = 3  # blocks a reason names
_TRIED_BLOCKS = 40  # blocks near a discrepancy tried as the one wrong count


@dataclass(frozen=True)
class FlowViolation:
    """Why predicted block counts cannot come from any run.

    Attributes
    ----------
    starts : tuple of int
        Addresses of the blocks where it shows, the largest discrepancy first.
    reason : str
        A sentence naming the blocks, their source lines and the counts.
    misplaced : float
        Instruction executions the prediction is off at least (the distance, weighed by
        instructions, to the nearest counts a run could give); infinite for an impossibility
        no count fixes (a negative count, instructions of one block counted apart).
    """

    starts: tuple[int, ...]
    reason: str
    misplaced: float = float("inf")


@dataclass(frozen=True)
class _Graph:
    """The function's blocks with the ways in and out of the function."""

    blocks: list[Block]
    leaves: frozenset[int]  # blocks that may send runs out of the function
    calls: frozenset[int]  # blocks holding a call that may not come back
    entered_at_start: frozenset[int]  # blocks entered at their start from outside (entry too)
    entered_inside: frozenset[int]  # blocks entered from outside after their first instruction


def has_indirect_jump(function: BinaryFunction) -> bool:
    """True when the function holds a jump whose target the binary does not name."""
    return any(i.kind == "jump" and i.target is None for i in function.instructions)


def outside_entries(binary: Binary) -> dict[str, frozenset[int]]:
    """Per function, the addresses that code of other functions jumps or branches to (not
    their entry: gcc's ``f.cold`` part jumping back into ``f``).

    Parameters
    ----------
    binary : Binary
        The executable.

    Returns
    -------
    dict of str to frozenset of int
        Only functions that have such addresses.
    """
    by_range = sorted((f.low, f.high, f.name) for f in binary.functions.values())
    found: dict[str, set[int]] = {}
    for function in binary.functions.values():
        for insn in function.instructions:
            target = insn.target
            if insn.kind not in ("jump", "branch") or target is None:
                continue
            if function.low <= target < function.high:
                continue
            for low, high, name in by_range:
                if low < target < high:
                    found.setdefault(name, set()).add(target)
    return {name: frozenset(addresses) for name, addresses in found.items()}


def flow_violation(
    function: BinaryFunction,
    counts: Mapping[int, float | None],
    *,
    blocks: list[Block] | None = None,
    entries: Collection[int] = (),
    where: str = "",
) -> FlowViolation | None:
    """Whether counts of a function's blocks at one point can come from a run of its code.

    Parameters
    ----------
    function : BinaryFunction
        The function.
    counts : mapping of int to float or None
        Block start address -> predicted runs (None or absent: unknown, any value).
    blocks : list of Block, optional
        ``basic_blocks(function)``, when the caller has them.
    entries : collection of int
        Addresses inside the function that other functions jump to
        (:func:`outside_entries`).
    where : str
        The point, for the reason (``"n=61"``).

    Returns
    -------
    FlowViolation or None
        None when some non-negative edge counts fit every block's count within the
        tolerance, or when the function has an indirect jump (not checked).
    """
    if has_indirect_jump(function):
        return None
    graph = _graph(function, blocks if blocks is not None else basic_blocks(function), entries)
    known = [counts.get(block.start) for block in graph.blocks]
    at = f" at {where}" if where else ""
    negative = [
        (value, b) for b, value in zip(graph.blocks, known, strict=True)
        if value is not None and value < -_tolerance(0.0)
    ]  # fmt: skip
    if negative:
        value, block = min(negative, key=lambda pair: pair[0])
        return FlowViolation(
            (block.start,),
            f"predicted block counts are impossible{at}: the block at {block.start:#x}"
            f"{_line_of(block)} is predicted to run {_number(value)} times",
        )
    found = _conservation(graph, known, at)
    return found if found is not None else _unentered_loop(graph, known, at)


@dataclass
class FlowCheck:
    """The flow-conservation check of every function of one binary (see the module text).

    Attributes
    ----------
    actual : tuple of dict of str to float
        Parameter values the program was built and run with (the profiled runs', else the
        build's), possibly none or only some parameters'. A function whose counts need no
        other value (or none at all) is checked there: a failure makes its counts undefined,
        or measured. Another is checked with its other parameters at :data:`STAND_IN_VALUES`,
        and a failure is a note (counts specialized to the build, such as a trip count read
        from the binary, fail at other values), measured counts there being free (they hold
        at the profiled values only).
    entries : dict of str to frozenset of int
        :func:`outside_entries` of the binary.
    enabled : bool
        False passes every prediction unchecked.
    """

    actual: tuple[dict[str, float], ...]
    entries: dict[str, frozenset[int]] = field(default_factory=dict)
    enabled: bool = True

    @classmethod
    def for_binary(
        cls,
        binary: Binary,
        actual: Sequence[Mapping[str, float]] = (),
        *,
        enabled: bool = True,
    ) -> FlowCheck:
        """The check for a binary.

        Parameters
        ----------
        binary : Binary
            The executable.
        actual : sequence of mapping of str to float
            Parameter values the program was built and run with (those of profiled runs, else
            those of the build), if known.
        enabled : bool
            False for a check that passes everything.

        Returns
        -------
        FlowCheck
        """
        points = tuple(dict(point) for point in actual)
        return cls(points, outside_entries(binary) if enabled else {}, enabled)

    def points_for(
        self, counted: Sequence[tuple[BinaryInstruction, sympy.Expr]]
    ) -> tuple[tuple[dict[str, float], ...], bool]:
        """The points at which a function's counts are checked, and whether they are the
        program's own (see the class text).

        Parameters
        ----------
        counted : sequence of (BinaryInstruction, sympy.Expr)
            The function's instructions with their predicted counts.

        Returns
        -------
        tuple of (tuple of dict of str to float, bool)
        """
        names: set[str] = set()
        for expression in {count for _, count in counted}:
            names.update(str(symbol) for symbol in expression.free_symbols)
        if not names:
            return ({},), True
        if self.actual and all(names <= set(point) for point in self.actual):
            return self.actual, True
        known = self.actual[0] if self.actual else {}
        return tuple(
            {**known, **{name: float(value) for name in sorted(names - set(known))}}
            for value in STAND_IN_VALUES
        ), False

    def holds(
        self,
        function: BinaryFunction,
        counted: Sequence[tuple[BinaryInstruction, sympy.Expr]],
        measured: Mapping[tuple[str, str, int], sympy.Expr],
    ) -> bool:
        """Whether the counts pass the check at the program's own values (never when the
        check is off, the function has an indirect jump, or those values are not known).

        Parameters
        ----------
        function : BinaryFunction
            The function.
        counted : sequence of (BinaryInstruction, sympy.Expr)
            Every instruction with its predicted count per program run.
        measured : mapping
            Measured counts keyed ``("block", function, block start)`` (may be empty).

        Returns
        -------
        bool
        """
        if not self.enabled or has_indirect_jump(function):
            return False
        points, actual = self.points_for(counted)
        if not actual:
            return False
        blocks = basic_blocks(function)
        entries = self.entries.get(function.name, frozenset())
        violation = _first_violation(
            function, blocks, list(counted), measured, entries, [], points, actual
        )
        return violation is None

    def conserved(
        self,
        function: BinaryFunction,
        counted: list[tuple[BinaryInstruction, sympy.Expr]],
        measured: Mapping[tuple[str, str, int], sympy.Expr],
        notes: list[str],
        from_source: bool = False,
    ) -> list[tuple[BinaryInstruction, sympy.Expr]]:
        """The predicted counts of a function if they pass the check; with measured counts of
        the blocks where they fail, those blocks measured (said in ``notes``). A failure at
        stand-in values is a note, or, with ``from_source`` (no count of the function comes
        from what the binary fixed when it was compiled, so every count holds at any values),
        a ``warning:``: the counts cannot all be right.

        Parameters
        ----------
        function : BinaryFunction
            The function.
        counted : list of (BinaryInstruction, sympy.Expr)
            Every instruction with its predicted count per program run (before ``rep``
            instructions are multiplied by their repetitions).
        measured : mapping
            Measured counts keyed ``("block", function, block start)`` (may be empty).
        notes : list of str
            The function's notes; appended to.
        from_source : bool
            True when every predicted count is the source's (none read from the binary).

        Returns
        -------
        list of (BinaryInstruction, sympy.Expr)

        Raises
        ------
        UndefinedCount
            When the counts fail the check and a block where they fail has no measured count.
        """
        if not self.enabled:
            return counted
        if has_indirect_jump(function):
            jump = next(i for i in function.instructions if i.kind == "jump" and i.target is None)
            notes.append(
                f"flow conservation not checked: the indirect jump at {jump.address:#x} has "
                "successors the binary does not name"
            )
            return counted
        blocks = basic_blocks(function)
        entries = self.entries.get(function.name, frozenset())
        counted = list(counted)
        first_of = {insn.address: index for index, (insn, _) in enumerate(counted)}
        replaced: set[int] = set()
        fractional: list[str] = []
        points, actual = self.points_for(counted)
        while True:
            violation = _first_violation(
                function, blocks, counted, measured, entries, fractional, points, actual
            )
            if violation is None:
                break
            if not actual and from_source:
                notes.append(
                    f"warning: {violation.reason}; the values the program was built with were "
                    "not given, but no count of this function is read from the binary, so the "
                    "counts cannot all be right (--profile measures them)"
                )
                break
            if not actual:
                notes.append(
                    f"{violation.reason}; the values the program was built with were not given, "
                    "so the counts may hold there only (a trip count read from the binary) or "
                    "be wrong"
                )
                break
            fresh = [start for start in violation.starts if start not in replaced]
            if not fresh:
                # the measured blocks are named again: the error lies elsewhere, measure all
                fresh = [block.start for block in blocks if block.start not in replaced]
            keys = {start: ("block", function.name, start) for start in fresh}
            if not fresh and len(replaced) == len(blocks):
                # every block measured: models fitted to several runs, not exact at each
                notes.append(
                    f"{violation.reason}; every block is measured, and the models fitted to the "
                    "profiled runs miss the runs' own counts there"
                )
                break
            if not fresh or any(key not in measured for key in keys.values()):
                raise UndefinedCount(violation.reason)
            for start, key in keys.items():
                replaced.add(start)
                block = next(b for b in blocks if b.start == start)
                for insn in block.instructions:
                    counted[first_of[insn.address]] = (insn, measured[key])
            shown = ", ".join(f"{start:#x}" for start in fresh[:_NAMED_BLOCKS])
            more = f" and {len(fresh) - _NAMED_BLOCKS} more" if len(fresh) > _NAMED_BLOCKS else ""
            notes.append(f"blocks at {shown}{more}: counts measured ({violation.reason})")
        notes.extend(fractional[:1])
        return counted


def _first_violation(
    function: BinaryFunction,
    blocks: list[Block],
    counted: list[tuple[BinaryInstruction, sympy.Expr]],
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    entries: Collection[int],
    fractional: list[str],
    points: Sequence[dict[str, float]],
    actual: bool,
) -> FlowViolation | None:
    """The first point at which the counts fail, with its violation (None if none)."""
    expression_of = {insn.address: count for insn, count in counted}
    for point in points:
        where = _point_text(point)
        values: dict[int, float | None] = {}
        cache: dict[sympy.Expr, float | None] = {}
        for block in blocks:
            own = ("block", function.name, block.start)
            uneven = _uneven_block(block, expression_of, point, cache, where)
            if uneven is not None:
                return uneven
            expression = _block_expression(block, expression_of)
            if not actual and own in measured and expression == measured[own]:
                values[block.start] = None  # holds at the profiled values only
                continue
            value = _value(expression, point, cache)
            values[block.start] = value
            if (
                value is not None
                and not fractional
                and all(float(v).is_integer() for v in point.values())
                and abs(value - round(value)) > 1e-6
            ):
                fractional.append(
                    f"block at {block.start:#x}{_line_of(block)}: predicted count "
                    f"{_number(value)} at {where} is not a whole number (an average or a "
                    "probability share, not an exact count)"
                )
        violation = flow_violation(function, values, blocks=blocks, entries=entries, where=where)
        if violation is not None:
            return violation
    return None


def _graph(function: BinaryFunction, blocks: list[Block], entries: Collection[int]) -> _Graph:
    """The blocks with the ways in and out of the function."""
    leaves, calls = set(), set()
    at_start: set[int] = {0}
    inside: set[int] = set()
    starts = {block.start: block.index for block in blocks}
    for block in blocks:
        last = block.instructions[-1]
        outside = last.target is not None and not function.low <= last.target < function.high
        if (
            last.kind in ("return", "noreturn")
            or (last.kind in ("jump", "branch") and outside)
            or not block.successors
            or (last.kind not in ("jump", "return", "noreturn") and last.end not in starts)
        ):
            leaves.add(block.index)
        if any(i.kind == "call" for i in block.instructions):
            calls.add(block.index)
        for insn in block.instructions:
            if insn.address in entries:
                (at_start if insn is block.instructions[0] else inside).add(block.index)
    return _Graph(
        blocks, frozenset(leaves), frozenset(calls), frozenset(at_start), frozenset(inside)
    )


def _tolerance(count: float) -> float:
    return ABSOLUTE_TOLERANCE + RELATIVE_TOLERANCE * abs(count)


@dataclass(frozen=True)
class _Solution:
    """Counts that conserve flow, as close to the predicted ones as can be."""

    fit: np.ndarray  # per block, the conserving count nearest the prediction
    misplaced: float  # instruction executions the prediction is off at least
    failing: list[tuple[float, int]]  # (runs off, block index) beyond the tolerance, worst first


def _solve(graph: _Graph, known: list[float | None]) -> _Solution:
    """The conserving block counts nearest the predicted ones, each block's distance weighed
    by its instructions (see the module text)."""
    blocks = graph.blocks
    n = len(blocks)
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    cost: list[float] = []

    def variable(weight: float = 0.0) -> int:
        cost.append(weight)
        return len(cost) - 1

    def put(row: int, column: int, value: float) -> None:
        rows.append(row)
        cols.append(column)
        data.append(value)

    # rows 3*i: inflow(i) = y(i); 3*i+1: outflow(i) = y(i); 3*i+2: y(i) + below - above = p(i)
    counts = [variable() for _ in blocks]
    for block in blocks:
        for successor in block.successors:
            edge = variable()
            put(3 * block.index + 1, edge, 1.0)
            put(3 * successor, edge, 1.0)
        if block.index in graph.entered_at_start:
            put(3 * block.index, variable(), 1.0)
        if block.index in graph.entered_inside:
            put(3 * block.index + 1, variable(), -1.0)
        if block.index in graph.leaves:
            put(3 * block.index + 1, variable(), 1.0)
    call_exits = []
    for index in sorted(graph.calls - graph.leaves):
        call_exits.append(variable())
        put(3 * index + 1, call_exits[-1], 1.0)
    rhs = np.zeros(3 * n)
    for block in blocks:
        index = block.index
        put(3 * index, counts[index], -1.0)
        put(3 * index + 1, counts[index], -1.0)
        value = known[index]
        if value is None:
            continue
        weight = float(len(block.instructions))
        put(3 * index + 2, counts[index], 1.0)
        put(3 * index + 2, variable(weight), 1.0)
        put(3 * index + 2, variable(weight), -1.0)
        rhs[3 * index + 2] = value
    equations = coo_matrix(
        (np.asarray(data), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(3 * n, len(cost)),
    ).tocsr()
    bound_rows = None
    if call_exits:
        bound_rows = np.zeros((1, len(cost)))
        bound_rows[0, call_exits] = 1.0
    solve: Any = linprog  # scipy's stubs do not take sparse matrices, which HiGHS reads
    result = solve(
        np.asarray(cost),
        A_ub=bound_rows,
        b_ub=np.array([PROGRAM_ENDS]) if call_exits else None,
        A_eq=equations,
        b_eq=rhs,
        bounds=(0, None),
        method="highs",
    )
    if result.status != 0:  # some conserving counts always exist (all zero)
        raise WorkError(f"flow conservation problem not solved: {result.message}")
    fit = result.x[: len(blocks)]
    failing = []
    for block in blocks:
        value = known[block.index]
        if value is not None and abs(fit[block.index] - value) > _tolerance(value):
            failing.append((float(abs(fit[block.index] - value)), block.index))
    failing.sort(key=lambda item: (-item[0], item[1]))
    return _Solution(fit, float(result.fun), failing)


def _conservation(graph: _Graph, known: list[float | None], at: str) -> FlowViolation | None:
    """The blocks where the counts fail to conserve flow, or None.

    The nearest conserving counts put the discrepancy on some blocks, but other blocks could
    often take it as well (an arm raised or its sibling lowered fit alike): the reason names
    the blocks that alone, counted otherwise, would make every count fit (the blocks found off,
    their neighbours and the neighbours' neighbours are tried, nearest first), else the blocks
    found off.
    """
    blocks = graph.blocks
    solution = _solve(graph, known)
    if not solution.failing:
        return None
    near = dict.fromkeys(index for _, index in solution.failing)
    for _ in range(2):  # neighbours, and theirs (the sibling arm of a branch)
        for index in list(near):
            near.update(dict.fromkeys(blocks[index].predecessors + blocks[index].successors))
    suspects: list[tuple[int, float]] = []
    for index in list(near)[:_TRIED_BLOCKS]:
        if known[index] is None or len(suspects) > _NAMED_BLOCKS:
            continue
        trial = list(known)
        trial[index] = None
        alone = _solve(graph, trial)
        if not alone.failing:
            suspects.append((index, float(alone.fit[index])))
    if suspects:
        named = suspects[:_NAMED_BLOCKS]
        lead = "" if len(named) == 1 else "one of these blocks is off: "
        other = " (or another)" if len(suspects) > len(named) else ""
    else:
        named = [(index, float(solution.fit[index])) for _, index in solution.failing]
        lead = ""
        other = ""
        if len(named) > _NAMED_BLOCKS:
            other = f" (and {len(named) - _NAMED_BLOCKS} more blocks)"
        named = named[:_NAMED_BLOCKS]
    parts = [
        f"{blocks[index].start:#x}{_line_of(blocks[index])}: predicted to run "
        f"{_number(known[index])} times, the counts around it fit {_number(fit)}"
        for index, fit in named
    ]
    return FlowViolation(
        tuple(blocks[index].start for index, _ in named),
        f"predicted block counts are inconsistent with the machine control flow{at}: "
        + lead
        + "; ".join(parts)
        + other
        + f" (at least {_number(solution.misplaced)} instruction executions misplaced)",
        solution.misplaced,
    )


def _unentered_loop(graph: _Graph, known: list[float | None], at: str) -> FlowViolation | None:
    """A loop of the machine code (a natural loop, nested ones too, or a cycle the natural
    loops miss) predicted to run while every way into it is predicted to run 0 times."""
    blocks = graph.blocks
    members = [set(loop.blocks) for loop in natural_loops(blocks)] + _cycles(blocks)
    for component in members:
        counts = [value for i in component if (value := known[i]) is not None]
        if not counts or max(counts) <= _tolerance(0.0):
            continue
        ways_in = [
            p
            for i in component
            for p in blocks[i].predecessors
            if p not in component and _may_run(known[p])
        ]
        outside = component & (graph.entered_at_start | graph.entered_inside)
        if ways_in or outside:
            continue
        top = max(component, key=lambda i: _number_or(known[i], -1.0))
        block = blocks[top]
        return FlowViolation(
            (block.start,),
            f"predicted block counts are inconsistent with the machine control flow{at}: "
            f"the loop through {block.start:#x}{_line_of(block)} is predicted to run "
            f"{_number(max(counts))} times, but every way into it is predicted to run 0 times",
            sum(
                len(blocks[i].instructions) * value
                for i in component
                if (value := known[i]) is not None
            ),
        )
    return None


def _may_run(value: float | None) -> bool:
    return value is None or value > _tolerance(0.0)


def _cycles(blocks: list[Block]) -> list[set[int]]:
    """The strongly connected sets of blocks that hold a cycle (Tarjan, without recursion)."""
    index_of: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    found: list[set[int]] = []
    counter = 0
    for root in range(len(blocks)):
        if root in index_of:
            continue
        work = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index_of[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = blocks[node].successors
            if position < len(successors):
                work.append((node, position + 1))
                following = successors[position]
                if following not in index_of:
                    work.append((following, 0))
                elif following in on_stack:
                    low[node] = min(low[node], index_of[following])
                continue
            if low[node] == index_of[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in blocks[node].successors:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def _block_expression(block: Block, expression_of: Mapping[int, sympy.Expr]) -> sympy.Expr:
    """The predicted count of a block: that of its first instruction that is not a
    ``rep``-prefixed one."""
    first = next((i for i in block.instructions if not is_repeated(i)), block.instructions[0])
    return expression_of[first.address]


def _uneven_block(
    block: Block,
    expression_of: Mapping[int, sympy.Expr],
    point: Mapping[str, float],
    cache: dict[sympy.Expr, float | None],
    where: str,
) -> FlowViolation | None:
    """A block whose instructions are predicted to run different numbers of times."""
    plain = [i for i in block.instructions if not is_repeated(i)]
    distinct = {expression_of[i.address] for i in plain}
    if len(distinct) < 2:
        return None
    valued = [(i, _value(expression_of[i.address], point, cache)) for i in plain]
    numbers = [(i, v) for i, v in valued if v is not None]
    if not numbers:
        return None
    low = min(numbers, key=lambda pair: pair[1])
    high = max(numbers, key=lambda pair: pair[1])
    if high[1] - low[1] <= _tolerance(high[1]):
        return None
    return FlowViolation(
        (block.start,),
        f"predicted block counts are inconsistent with the machine control flow at {where}: "
        f"the block at {block.start:#x}{_line_of(block)} runs as a whole, but its instruction "
        f"at {low[0].address:#x} is predicted to run {_number(low[1])} times and the one at "
        f"{high[0].address:#x} {_number(high[1])} times",
        high[1] - low[1],
    )


def _value(
    expression: sympy.Expr, point: Mapping[str, float], cache: dict[sympy.Expr, float | None]
) -> float | None:
    """The expression at the point, or None when it cannot be evaluated there (a symbol
    without a value, a division by zero)."""
    if expression in cache:
        return cache[expression]
    value: float | None = None
    symbols = expression.free_symbols
    if all(s.name in point for s in symbols):
        substituted = expression.xreplace(
            {s: sympy.Integer(int(v)) if float(v).is_integer() else sympy.Float(v)
             for s in symbols for v in [point[s.name]]}
        )  # fmt: skip
        try:
            number = complex(substituted)
        except (TypeError, ValueError):
            number = complex(float("nan"))
        if number.imag == 0 and np.isfinite(number.real):
            value = number.real
    cache[expression] = value
    return value


def _number_or(value: float | None, default: float) -> float:
    return default if value is None else value


def _point_text(point: Mapping[str, float]) -> str:
    if not point:
        return "the program's values"
    return ",".join(f"{name}={_number(value)}" for name, value in sorted(point.items()))


def _number(value: float | None) -> str:
    if value is None:
        return "an unknown number of"
    if abs(value - round(value)) < 1e-6:
        return f"{round(value):,}"
    return f"{value:,.2f}"


def _line_of(block: Block) -> str:
    """`` (source line L of file.c)`` from the block's first instruction with a line."""
    lined = next((i for i in block.instructions if i.file and i.line), None)
    if lined is None:
        return ""
    return f" (source line {lined.line} of {Path(lined.file or '').name})"
