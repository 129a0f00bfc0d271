"""How often the blocks of a function's machine loops run.

The machine loops of a function are matched to the source loops of the static report;
each loop's passes follow from its source loop's count and the transformation the compiler
applied (vectorization width, unrolling, peeled remainders) as read from its induction
(:mod:`perfcast.static.machine_trips`). Used by :mod:`perfcast.static.instruction_mix`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import sympy

from perfcast.static.binary import BinaryInstruction
from perfcast.static.control_flow import Block, Loop, dominators, reachable
from perfcast.static.epilogues import conditional_successors
from perfcast.static.machine_trips import Induction, induction, packed, several_by_scaled_index
from perfcast.static.source_shares import UNMATCHED, Catalog, Place, UndefinedCount


def _register(operand: str) -> str:
    """A general-purpose register operand by its 64-bit name (``edx`` -> ``rdx``, ``r8d`` ->
    ``r8``); other operands unchanged."""
    name = operand.strip()
    if re.fullmatch(r"e[a-d]x|e[sd]i|e[bs]p", name):
        return "r" + name[1:]
    if re.fullmatch(r"r\d+[dwb]", name):
        return name[:-1]
    return name


@dataclass(frozen=True)
class _Remainder:
    """Source iterations per entry the machine loops of a source loop leave undone
    (``iterations``), the width of the last of those loops, the loops, and the count of the
    context they are entered from (``entry``)."""

    iterations: sympy.Expr
    width: int
    loops: tuple[Loop, ...]
    entry: Place


class MachineCounts:
    """How often the body of each machine loop runs: its source loop's count, corrected by the
    trip count or the elements per iteration the binary shows (vectorization, unrolling).

    Machine loops that implement one source loop side by side (a vector loop and its scalar
    remainder loop) share its iterations: each takes ``floor(remaining / k)`` passes of ``k``
    source iterations per entry, widest first, and leaves the rest to the next.
    """

    def __init__(
        self,
        blocks: list[Block],
        around: dict[int, list[Loop]],
        place_of: dict[int, Place],
        function_count: sympy.Expr,
        catalog: Catalog,
        function: str,
        stated: Sequence[Mapping[str, float]] = (),
    ) -> None:
        self.blocks = blocks
        self.catalog = catalog
        self.function = function
        self.around = around
        self.place_of = place_of
        self.function_count = Place((), function_count, None)
        # (enclosing machine loop header or None, source loop key) -> what the source loop's
        # machine loops leave undone (filled by counts)
        self.remainders: dict[tuple, _Remainder] = {}
        # headers of machine loops counted with their source loop's count (no trip count read
        # from the binary, one source iteration per pass)
        self.source_counted: set[int] = set()
        # parameter -> the value the binary was compiled for, where its trip counts tell it
        self.built: dict[sympy.Symbol, int] = {}
        # headers of machine loops counted with a trip count read from the binary
        self.from_binary: set[int] = set()
        # header -> passes per entry, for machine loops counted from the widths or trip count
        # read from the binary (every entry taking the same number of passes)
        self.passes: dict[int, sympy.Expr] = {}
        # parameter name -> the value every point the caller gave (the build's values, or the
        # profiled runs') has: what a trip count read from the binary may be checked against
        self.stated = {
            name: sympy.nsimplify(value)
            for name, value in (stated[0] if stated else {}).items()
            if all(point.get(name) == value for point in stated)
        }

    def _own(self, loop: Loop) -> set[int]:
        """The loop's blocks that no loop nested in it holds."""
        return {b for b in loop.blocks if self.around[b][-1] is loop}

    def _outer(self, loop: Loop) -> Loop | None:
        chain = self.around[loop.header]
        return chain[-2] if len(chain) > 1 else None

    def _one_after_another(
        self, group: list[Loop], widths: dict[int, int]
    ) -> tuple[Loop, Loop] | None:
        """Two machine loops of the group of which the second is reached from the first's
        exit without going round an enclosing loop (copies in sequence, not alternatives
        behind one test), covers at least as many source iterations per pass (a remainder
        loop is narrower than the loop before it), and both do work of the body; or None."""
        if len(group) < 2:
            return None
        outer = self._outer(group[0])
        stop = outer.header if outer is not None else None
        for loop in group:
            seen: set[int] = set()
            stack = [
                s for b in loop.blocks for s in self.blocks[b].successors if s not in loop.blocks
            ]
            while stack:
                current = stack.pop()
                if current in seen or current == stop:
                    continue
                seen.add(current)
                stack.extend(self.blocks[current].successors)
            for other in group:
                if (
                    other is not loop
                    and other.header in seen
                    and widths[other.header] >= widths[loop.header]
                    and self._works(loop, other)
                ):
                    return loop, other
        return None

    def _bound_chosen(self, loop: Loop, key: tuple) -> BinaryInstruction | None:
        """The conditional move before a machine loop that writes a register its exit test
        compares (gcc -O3 runs `for (i < n) x += i < m && ...` to min(n, m)), when a
        condition inside the source loop ``key`` has a count with a minimum or maximum (a
        test of the loop variable); None otherwise."""
        source = self.catalog.loop_named.get(key[1]) if len(key) > 1 else None
        if source is None:
            return None
        parts = [
            p
            for (function, line), found in self.catalog.decided_at.items()
            if function == self.function and source.line < line <= source.end_line
            for p in found
        ]
        if not any(p.count is not None and p.count.has(sympy.Min, sympy.Max) for p in parts):
            return None
        compared: set[str] = set()
        for latch in loop.latches:
            tail = self.blocks[latch].instructions[-2:]
            if len(tail) == 2 and tail[-1].kind == "branch" and tail[0].mnemonic == "cmp":
                compared |= {_register(o) for o in tail[0].operands.split(",")}
        if not compared:
            return None
        before = dominators(self.blocks)[loop.header] - loop.blocks
        for index in sorted(before, reverse=True):
            for insn in reversed(self.blocks[index].instructions):
                if insn.mnemonic.startswith("cmov") and _register(insn.operands.split(",")[0]) in (
                    compared
                ):
                    return insn
        return None

    def _works(self, *loops: Loop) -> bool:
        """Whether each machine loop's own code holds work of the loop body: a line other
        than a source loop's header line, or inlined code. (A loop that only tests a
        loop-invariant condition each pass and jumps into its copy is unswitching, not a
        split: gcc -O2 makes such an empty copy of an outer loop for ``n <= 0``.)"""
        headers = {k.line for k in self.catalog.loops.get(self.function, ())}
        return all(
            any(
                insn.inlined or (insn.line and insn.line not in headers)
                for b in self._own(loop)
                for insn in self.blocks[b].instructions
            )
            for loop in loops
        )

    def counts(self, machine_loops: list[Loop], notes: list[str]) -> dict[int, Place]:
        """Machine loop header -> the count of its body per program run (or why undefined)."""
        runs: dict[int, Place] = {}
        siblings: dict[tuple, list[Loop]] = defaultdict(list)
        for loop in machine_loops:
            outer = self._outer(loop)
            siblings[(outer.header if outer else None, self.place_of[loop.header].key)].append(loop)
        self.built = self._built_values(machine_loops, siblings)
        for loop in machine_loops:  # outer loops first: an entry count is known when needed
            if loop.header in runs:
                continue
            outer = self._outer(loop)
            group = siblings[(outer.header if outer else None, self.place_of[loop.header].key)]
            entry = runs[outer.header] if outer else self.function_count
            key = self.place_of[loop.header].key
            source = self.catalog.loop_named.get(key[1]) if len(key) > 1 else None
            if outer is not None and self.rotated(outer) and source and not source.varying:
                # the same iterations in every entry: entered once less per entry of the outer
                # loop, the rest are in a copy of the last pass (an average would be wrong)
                entry = self._after_exit_test(outer, runs)
            source_entry = self.place_of[outer.header] if outer else self.function_count
            counted, left = self._group(group, entry, source_entry, notes)
            runs.update(counted)
            if left is not None:
                key = (outer.header if outer else None, self.place_of[loop.header].key)
                self.remainders[key] = _Remainder(left[0], left[1], tuple(group), entry)
        return runs

    def _one_per_pass(self, loop: Loop) -> tuple[sympy.Expr, int] | None:
        """``(iterations per entry of its source loop, trip count read from the binary)`` of a
        machine loop that alone implements its source loop, one iteration per pass, entered in
        every run of what encloses it, when the trip count is a constant and the source's count
        has parameters; else None."""
        place = self.place_of[loop.header]
        if place.key[:1] == (UNMATCHED,) or place.count is None:
            return None
        outer = self._outer(loop)
        source_entry = self.place_of[outer.header] if outer else self.function_count
        if source_entry.count is None or source_entry.count == 0:
            return None
        per_entry = sympy.cancel(place.count / source_entry.count)
        if not per_entry.free_symbols:
            return None
        own = self._own(loop)
        found = induction(self.blocks, loop, own)
        trip = found.trip_count() if found is not None else None
        if trip is None or self._width(found, own, place.key, loop.header) != 1:
            return None
        if self._entry_share(loop, place).count != 1:
            return None
        return per_entry, trip

    def _built_values(
        self, machine_loops: list[Loop], siblings: dict[tuple, list[Loop]]
    ) -> dict[sympy.Symbol, int]:
        """The parameter values the binary was compiled for, as its trip counts tell them: a
        machine loop that alone implements a source loop, one iteration per pass, and runs a
        constant ``t`` times per entry where the source loop runs ``p(N)`` times gives
        ``p(N) = t``; a parameter is taken when two or more such loops give it, all the same
        positive integer (one loop could be a loop the binary changed in a way not read)."""
        found: dict[sympy.Symbol, set[int]] = defaultdict(set)
        told: dict[sympy.Symbol, int] = defaultdict(int)
        for loop in machine_loops:
            outer = self._outer(loop)
            key = (outer.header if outer else None, self.place_of[loop.header].key)
            if len(siblings[key]) != 1:
                continue
            pair = self._one_per_pass(loop)
            if pair is None or len(pair[0].free_symbols) != 1:
                continue
            symbol = next(iter(pair[0].free_symbols))
            try:
                solutions = sympy.solve(sympy.Eq(pair[0], pair[1]), symbol)
            except (NotImplementedError, TypeError, ValueError):
                continue
            whole = [v for v in solutions if v.is_Integer and v > 0]
            if len(solutions) == 1 and whole:
                found[symbol].add(int(whole[0]))
                told[symbol] += 1
            else:
                found[symbol].add(-1)  # no single positive solution: this symbol is not told
        return {
            symbol: next(iter(values))
            for symbol, values in found.items()
            if len(values) == 1 and -1 not in values and told[symbol] >= 2
        }

    def _width(self, found: Induction | None, own: set[int], key: tuple, header: int) -> int | None:
        """Iterations of source loop ``key`` one pass covers (:func:`machine_width`), unless the
        packed code of the pass is mostly the body of a source loop nested in ``key`` that the
        compiler unrolled completely (gcc -O3's row loop around a packed row): its lanes are
        iterations of that loop, and the pass covers ``step / (element size x that loop's
        iterations per entry)`` iterations of ``key`` (None when that does not divide)."""
        source = self.catalog.loop_named.get(key[1]) if len(key) > 1 else None
        width = machine_width(found, self.blocks, own, header, source.step if source else 1)
        if width is None or width <= 1 or found is None or found.element_size is None:
            return width
        votes: dict[tuple, int] = defaultdict(int)
        total = 0
        for index in own:
            for insn in self.blocks[index].instructions:
                total += 1
                chain = self.catalog.chain(self.function, insn)
                keys = [place.key for place in chain]
                if key in keys and keys.index(key) < len(keys) - 1:
                    votes[keys[keys.index(key) + 1]] += 1
        inner = max(votes, key=votes.__getitem__, default=None)
        if inner is None or 2 * votes[inner] <= total:
            return width
        per_entry = self.catalog.iterations_per_entry(inner)
        if per_entry is None or not per_entry.is_number:
            return None
        span = found.element_size * int(per_entry)
        return found.step // span if span > 0 and found.step % span == 0 else None

    def _entry_share(self, loop: Loop, place: Place) -> Place:
        """The share of its enclosing runs in which the source loop of a machine loop is
        entered (see :meth:`Catalog.entry_share`), from the loop's first instruction that
        belongs to it."""
        for index in sorted(self._own(loop)):
            for insn in self.blocks[index].instructions:
                if any(p.key == place.key for p in self.catalog.chain(self.function, insn)):
                    return self.catalog.entry_share(self.function, insn, place.key)
        return Place(place.key, sympy.Integer(1), None)

    def rotated(self, loop: Loop) -> bool:
        """True when a machine loop counted with its source loop's count tests its exit in its
        header after code of the source loop's body (a rotated loop entered at its header, gcc
        -O1 entering a recurrence below the copies it moved to the top, or gcc -O3 leaving at
        the header test into a copy of the last pass): the header runs once per source
        iteration, the loop's other code, and the loops nested in it, once less per entry. (A
        trip count read from the binary counts passes of an unrolled body whose exit test may
        sit between the copies: not taken.)"""
        return (
            loop.exits_at_header
            and loop.header in self.source_counted
            and header_holds_body(
                self.function,
                self.blocks[loop.header],
                self.place_of[loop.header].key,
                self.catalog,
            )
        )

    def _entries_of(self, loop: Loop, runs: dict[int, Place]) -> Place:
        """How often a machine loop is entered: the runs of the machine loop around it (or the
        function's count) times the share of its enclosing runs in which its source loop is
        entered."""
        outer = self._outer(loop)
        context = runs[outer.header] if outer else self.function_count
        share = self._entry_share(loop, self.place_of[loop.header])
        if context.count is None:
            return context
        if share.count is None:
            return Place(share.key, None, share.reason)
        return Place(context.key, sympy.expand(context.count * share.count), None)

    def _after_exit_test(self, loop: Loop, runs: dict[int, Place]) -> Place:
        """How often the code after the header of a :meth:`rotated` machine loop runs: its
        runs less its entries (a loop nested in it is entered that often)."""
        place = runs[loop.header]
        entries = self._entries_of(loop, runs)
        if place.count is None:
            return place
        if entries.count is None:
            return Place(place.key, None, entries.reason)
        return Place(place.key, sympy.expand(place.count - entries.count), None)

    def _enclosing_source(self, group: list[Loop], place: Place) -> Place | None:
        """The source loop (or context) around source loop ``place`` as the line table of the
        group's own code tells it (the longest chain of places holding ``place``), or None
        when ``place`` is outermost."""
        chain: list[Place] = []
        for index in self._own(group[0]):
            for insn in self.blocks[index].instructions:
                found = self.catalog.chain(self.function, insn)
                if place.key in [p.key for p in found] and len(found) > len(chain):
                    chain = list(found)
        keys = [found.key for found in chain]
        if place.key not in keys or keys.index(place.key) == 0:
            return None
        return chain[keys.index(place.key) - 1]

    def _peeled_passes(
        self,
        group: list[Loop],
        place: Place,
        source_entry: Place,
        entry: Place,
        found: dict[int, Induction | None],
        own: dict[int, set[int]],
    ) -> dict[int, Place] | None:
        """Counts of machine loops of a source loop that lie outside the machine loop of the
        source loop around it: copies for some of its passes, which the compiler peeled off
        (gcc -O3 turns ``for (k = 1; k <= 8; k += 7)`` around an inner loop with strides in
        ``k`` into a loop whose header test leaves into a copy of the inner loop for the last
        pass). When the enclosing machine loop is :meth:`rotated` (its nested copy runs once
        less per entry), leaves only at that test, straight into the one copy, and the inner
        loop runs the same iterations in every pass, the copy takes one pass per entry;
        otherwise the count is undefined, naming the loops. None when the group lies in the
        machine loop of its enclosing source loop, or that has no machine loop."""
        enclosing = self._enclosing_source(group, place)
        if enclosing is None or enclosing.key == source_entry.key:
            return None
        implementing = [
            self._loop_at(header)
            for header, found_place in self.place_of.items()
            if found_place.key == enclosing.key
        ]
        if not implementing or any(loop in self.around[group[0].header] for loop in implementing):
            return None
        name = place.key[1] if len(place.key) > 1 else "?"
        outer_name = enclosing.key[1] if len(enclosing.key) > 1 else str(enclosing.key)
        starts = ", ".join(f"{self.blocks[loop.header].start:#x}" for loop in group)
        others = ", ".join(f"{self.blocks[loop.header].start:#x}" for loop in implementing)
        derived = self._one_peeled_pass(group, place, enclosing, entry, implementing, found, own)
        if derived is not None:
            return {group[0].header: Place(place.key, derived, None)}
        reason = (
            f"machine loop{'s' if len(group) > 1 else ''} at {starts} of source loop {name} "
            f"outside the machine loop{'s' if len(implementing) > 1 else ''} at {others} of "
            f"source loop {outer_name} around it: a copy for some of its passes (peeled off "
            "by the compiler), and how many it runs cannot be read from the binary"
        )
        return {loop.header: Place(place.key, None, reason) for loop in group}

    def _loop_at(self, header: int) -> Loop:
        """The machine loop whose header is block ``header``."""
        return next(loop for loop in self.around[header] if loop.header == header)

    def _one_peeled_pass(
        self,
        group: list[Loop],
        place: Place,
        enclosing: Place,
        entry: Place,
        implementing: list[Loop],
        found: dict[int, Induction | None],
        own: dict[int, set[int]],
    ) -> sympy.Expr | None:
        """Runs of the body of the one machine loop in ``group`` when it is the copy of the
        last pass of the one :meth:`rotated` machine loop in ``implementing`` (see
        :meth:`_peeled_passes`), else None."""
        if len(group) != 1 or len(implementing) != 1 or entry.count is None:
            return None
        loop, outer = group[0], implementing[0]
        source = self.catalog.loop_named.get(place.key[1]) if len(place.key) > 1 else None
        if (
            source is None
            or source.varying
            or place.count is None
            or enclosing.count is None
            or enclosing.count == 0
            or not self.rotated(outer)
            or self._outer(outer) is not self._outer(loop)
            or self._entry_share(outer, self.place_of[outer.header]).count != 1
            or self._entry_share(loop, place).count != 1
        ):
            return None
        exits = {
            (index, successor)
            for index in outer.blocks
            for successor in self.blocks[index].successors
            if successor not in outer.blocks
        }
        if len(exits) != 1 or next(iter(exits))[0] != outer.header:
            return None  # the enclosing loop leaves elsewhere too
        target = next(iter(exits))[1]
        into = {
            index
            for index in range(len(self.blocks))
            if loop.header in self.blocks[index].successors and index not in loop.blocks
        }
        if target != loop.header and not (
            into == {target} and self.blocks[target].successors == [loop.header]
        ):
            return None  # not entered straight from the enclosing loop's exit
        per_pass = sympy.cancel(place.count / enclosing.count)
        walk = found[loop.header]
        width = self._width(walk, own[loop.header], place.key, loop.header)
        trip = walk.trip_count() if walk is not None else None
        if width != 1 or (trip is not None and per_pass != trip):
            return None
        return sympy.expand(per_pass * entry.count)

    def _copies_of_unrolled_passes(
        self, group: list[Loop], place: Place, source_entry: Place
    ) -> str | None:
        """Why the machine loops of a source loop have no count when a source loop around it,
        inside what encloses them, runs several passes per entry and has no machine loop (the
        compiler unrolled it completely: gcc -O2 turns ``for (k = 1; k <= 8; k += 7)`` around
        an inner loop into a copy of the inner loop per pass, or computes a pass in closed
        form): each copy runs in some of those passes only, not in all of them; None
        otherwise."""
        outer = self._enclosing_source(group, place)
        if outer is None:
            return None
        enclosing = outer.key
        if enclosing == source_entry.key or any(
            found.key == enclosing for found in self.place_of.values()
        ):
            return None
        if outer.count is None or source_entry.count is None or source_entry.count == 0:
            return None
        passes = sympy.cancel(outer.count / source_entry.count)
        if passes == 1:
            return None
        starts = ", ".join(f"{self.blocks[loop.header].start:#x}" for loop in group)
        # passes known only at run time cannot have been unrolled completely: a machine loop
        # of it was taken for the inner loop (its exit test on the inner loop's line)
        how = (
            "has no machine loop (unrolled completely)"
            if passes.is_number
            else f"runs {passes} passes per entry, a number known at run time only, and no "
            "machine loop was matched to it (the machine loop around may carry the inner "
            "loop's line in its exit test)"
        )
        return (
            f"source loop {place.key[1]} (machine loop{'s' if len(group) > 1 else ''} at "
            f"{starts}) lies in source loop {enclosing[1] if len(enclosing) > 1 else enclosing}, "
            f"which {how}: each copy runs in some of its passes, how many cannot be read from "
            "the binary"
        )

    def _group(
        self, group: list[Loop], entry: Place, source_entry: Place, notes: list[str]
    ) -> tuple[dict[int, Place], tuple[sympy.Expr, int] | None]:
        """Counts of the machine loops of one source loop, and, when they take passes of
        known widths, the iterations per entry they leave and the width of the last."""
        place = self.place_of[group[0].header]
        if place.key[:1] == (UNMATCHED,):  # no source loop: nothing to derive a count from
            return {loop.header: place for loop in group}, None
        name = place.key[1] if len(place.key) > 1 else "?"
        own = {loop.header: self._own(loop) for loop in group}
        found = {loop.header: induction(self.blocks, loop, own[loop.header]) for loop in group}
        trips = {h: i.trip_count() if i else None for h, i in found.items()}
        if entry.count is None:
            return {loop.header: Place(place.key, None, entry.reason) for loop in group}, None
        unrolled = self._copies_of_unrolled_passes(group, place, source_entry)
        if unrolled is not None:
            return {loop.header: Place(place.key, None, unrolled) for loop in group}, None
        peeled = (
            self._peeled_passes(group, place, source_entry, entry, found, own)
            if any(trip is None for trip in trips.values())  # else counted per entry below
            else None
        )
        if peeled is not None:
            return peeled, None
        per_entry = None
        if place.count is not None and source_entry.count is not None:
            per_entry = sympy.cancel(place.count / source_entry.count)
        if all(t is not None for t in trips.values()):
            versions = self._versions(group, found, trips, own, per_entry, name)
            if versions is not None:
                return {loop.header: Place(place.key, None, versions) for loop in group}, None
            # a trip count is per entry of the loop: entered only under an if, it runs in that
            # block's share of the enclosing runs
            share = self._entry_share(group[0], place)
            if share.count is None:
                return {loop.header: Place(place.key, None, share.reason) for loop in group}, None
            kept = self._source_count_kept(group)
            if kept is not None:
                built = ", ".join(f"{k} = {v}" for k, v in sorted(self.built.items(), key=str))
                note = (
                    f"the binary was compiled for {built} (trip counts read from it equal the "
                    "source's counts there): the model keeps the source's counts in the "
                    "parameters with the instructions per iteration of this build; a build for "
                    "other values may run other code (vectorized or unrolled otherwise)"
                )
                if note not in notes:
                    notes.append(note)
                return {
                    group[0].header: Place(place.key, sympy.expand(kept * entry.count), None)
                }, None
            passes = self._passes_kept(group, found, trips, own, per_entry)
            if passes is not None and share.count == 1:
                self.from_binary.update(loop.header for loop in group)
                notes.append(
                    f"machine loop{'s' if len(group) > 1 else ''} of source loop {name} at "
                    f"{_passes_text(passes, self.blocks)}, read from the binary: at the values it "
                    f"was compiled for ({_values_text(passes, self._built_value)}) the trip counts "
                    "read from it are these passes of the source's iterations, so the model keeps "
                    "them in the parameters with the instructions per pass of this build (a build "
                    "for other values may vectorize, unroll or peel otherwise)"
                )
                return {
                    header: Place(place.key, sympy.expand(count * entry.count), None)
                    for header, (count, _) in passes.items()
                }, None
            result = {}
            self.from_binary.update(loop.header for loop in group)
            for loop in group:
                trip = trips[loop.header]
                runs = sympy.expand(trip * share.count * entry.count)
                result[loop.header] = Place(place.key, runs, None)
                if per_entry != trip * share.count:
                    fixed = sorted(str(s) for s in per_entry.free_symbols) if per_entry else []
                    built = (
                        f"; the binary fixed {', '.join(fixed)} when it was compiled, so the "
                        f"model holds at the built value{'s' if len(fixed) > 1 else ''} only"
                        if fixed
                        else ""
                    )
                    notes.append(
                        f"machine loop at {self.blocks[loop.header].start:#x} runs {trip} times "
                        f"per entry (read from the binary), source loop {name} "
                        f"{_per_entry_text(per_entry)}: vectorized, unrolled or split{built}"
                    )
            return result, None
        if place.count is None or per_entry is None:
            return {loop.header: place for loop in group}, None
        widths = {
            loop.header: self._width(found[loop.header], own[loop.header], place.key, loop.header)
            for loop in group
        }
        chosen = self._bound_chosen(group[0], place.key) if len(group) == 1 else None
        if chosen is not None and not per_entry.has(sympy.Min, sympy.Max):
            reason = (
                f"the exit test of machine loop at {self.blocks[group[0].header].start:#x} "
                f"compares with a bound chosen by {chosen.mnemonic} at {chosen.address:#x} "
                f"before it, and a condition in source loop {name} limits its iterations: the "
                "compiler shortened the loop to a minimum or maximum, which the source count "
                f"{per_entry} does not have"
            )
            return {group[0].header: Place(place.key, None, reason)}, None
        if len(group) == 1 and widths[group[0].header] == 1:
            if entry.count is not None and sympy.expand(entry.count - source_entry.count) != 0:
                # entered as often as the enclosing machine loop runs, which differs from the
                # enclosing source loop's count (an outer loop vectorized around it)
                runs = sympy.expand(per_entry * entry.count)
                return {group[0].header: Place(place.key, runs, None)}, None
            self.source_counted.add(group[0].header)
            return {group[0].header: Place(place.key, place.count, None)}, None
        unknown = [h for h, k in widths.items() if k is None]
        if unknown:
            reason = (
                f"machine loop at {self.blocks[unknown[0]].start:#x} implements source loop "
                f"{name} (vectorized, unrolled or versioned), and how many source iterations "
                "one of its passes covers cannot be read from the binary"
            )
            return {loop.header: Place(place.key, None, reason) for loop in group}, None
        known = {h: k for h, k in widths.items() if k is not None}
        following = self._one_after_another(group, known)
        if following is not None:
            # a loop entered after another's exit that is no narrower (so no remainder of it)
            # runs further iterations of the source loop: gcc -O3 splits a loop at a condition
            # on its variable (`if (i < 10)`), and how the iterations divide is not in the binary
            first, second = (self.blocks[loop.header].start for loop in following)
            reason = (
                f"machine loops at {first:#x} and {second:#x} implement source loop {name} one "
                "after the other, the second no narrower than the first: the compiler split the "
                "loop (at a condition on its variable), and how its iterations divide between "
                "them cannot be read from the binary"
            )
            return {loop.header: Place(place.key, None, reason) for loop in group}, None
        wide = [h for h, k in known.items() if k > 1]
        source_loop = self.catalog.loop_named.get(name)
        if wide and source_loop is not None and source_loop.varying:
            reason = (
                f"machine loop at {self.blocks[wide[0]].start:#x} covers {known[wide[0]]} "
                f"iterations of source loop {name} per pass, whose iterations per entry depend on "
                "an enclosing loop's variable: the passes and the remainder differ from entry "
                f"to entry, and the average {per_entry} per entry does not give them"
            )
            return {loop.header: Place(place.key, None, reason) for loop in group}, None
        remaining = per_entry
        result = {}
        ordered = sorted(group, key=lambda item: -known[item.header])
        for loop in ordered:
            width = known[loop.header]
            passes = sympy.floor(remaining / width) if width > 1 else remaining
            result[loop.header] = Place(place.key, sympy.expand(passes * entry.count), None)
            self.passes[loop.header] = passes
            remaining = remaining - width * passes
        starts = ", ".join(
            f"{self.blocks[loop.header].start:#x} ({known[loop.header]} per pass)"
            for loop in ordered
        )
        notes.append(
            f"source loop {name} is implemented by {len(group)} machine loop"
            f"{'s' if len(group) > 1 else ''} ({starts}; "
            "vectorized, unrolled, split or versioned; widths read from the binary): each takes "
            "floor(remaining / width) passes per entry, which assumes every entry runs the same "
            "number of iterations and versions run one after the other"
        )
        last = known[ordered[-1].header]
        return result, (sympy.expand(remaining), last) if last > 1 else None

    def _built_value(self, symbol: sympy.Symbol) -> sympy.Expr | int | None:
        """The value the binary was built for of a parameter: as its trip counts tell it
        (:meth:`_built_values`), else as the caller stated it; None when neither does."""
        if symbol in self.built:
            return self.built[symbol]
        return self.stated.get(str(symbol))

    def _passes_kept(
        self,
        group: list[Loop],
        found: dict[int, Induction | None],
        trips: dict[int, int | None],
        own: dict[int, set[int]],
        per_entry: sympy.Expr | None,
    ) -> dict[int, tuple[sympy.Expr, int]] | None:
        """Machine loop header -> ``(passes per entry as an expression of the parameters,
        source iterations per pass)`` for the machine loops of one source loop (a vector loop
        and its narrower remainder loops, or one loop of one iteration per pass), when the
        source's iterations per entry are affine in the parameters and taking ``floor(remaining
        / width)`` passes, widest loop first, gives at the values the binary was built for
        exactly the constant trip counts read from it (sizes fixed at compile time: the
        compiler computed the same); None otherwise."""
        if per_entry is None or not per_entry.free_symbols:
            return None
        symbols = sorted(per_entry.free_symbols, key=str)
        values = {symbol: self._built_value(symbol) for symbol in symbols}
        if any(value is None for value in values.values()):
            return None
        try:
            if sympy.Poly(per_entry, *symbols).total_degree() != 1:
                return None
        except sympy.PolynomialError:
            return None
        widths = {
            loop.header: self._width(
                found[loop.header], own[loop.header], self.place_of[loop.header].key, loop.header
            )
            for loop in group
        }
        known = {header: width for header, width in widths.items() if width is not None}
        if len(known) != len(group):
            return None
        remaining = per_entry
        passes: dict[int, tuple[sympy.Expr, int]] = {}
        for header in sorted(known, key=lambda h: -known[h]):
            width = known[header]
            count = sympy.floor(remaining / width) if width > 1 else remaining
            if count.subs(values) != trips[header]:
                return None
            passes[header] = (count, width)
            remaining = remaining - width * count
        return passes

    def _source_count_kept(self, group: list[Loop]) -> sympy.Expr | None:
        """The source loop's iterations per entry, as an expression of the parameters, for a
        machine loop whose constant trip count equals it at the values the binary was built
        for (:meth:`_built_values`): the loop runs as the source says, and the expression holds
        at other values too. None otherwise."""
        if len(group) != 1 or not self.built:
            return None
        pair = self._one_per_pass(group[0])
        if pair is None or not pair[0].free_symbols <= set(self.built):
            return None
        return pair[0] if pair[0].subs(self.built) == pair[1] else None

    def _versions(
        self,
        group: list[Loop],
        found: dict[int, Induction | None],
        trips: dict[int, int | None],
        own: dict[int, set[int]],
        per_entry: sympy.Expr | None,
        name: str,
    ) -> str | None:
        """Why the machine loops of source loop ``name`` cannot all be counted, when two of them
        each cover all its iterations per entry: copies of the whole loop of which the program
        picks one at run time (versions behind an alias or alignment check), or a loop split
        in two; the binary's trip counts do not tell which runs. ``per_entry``, the source
        loop's iterations per entry, when a number, must be what they cover (machine loops of
        inner loops attributed to an outer source loop by their lines are no versions)."""
        covered: dict[int, int] = {}
        for loop in group:
            width = self._width(
                found[loop.header], own[loop.header], self.place_of[loop.header].key, loop.header
            )
            trip = trips[loop.header]
            if width is None or trip is None:
                return None
            covered[loop.header] = trip * width
        seen: dict[int, int] = {}
        for header, iterations in covered.items():
            whole = per_entry is None or not per_entry.is_number or per_entry == iterations
            if iterations > 1 and iterations in seen and whole:
                return (
                    f"machine loops at {self.blocks[seen[iterations]].start:#x} and "
                    f"{self.blocks[header].start:#x} each cover all {iterations} iterations of "
                    f"source loop {name} per entry: versions of which one runs (an alias or "
                    "alignment check at run time) or a split loop, which the binary does not tell"
                )
            seen[iterations] = header
        return None


def remainder_counts(
    function: str,
    blocks: list[Block],
    around: dict[int, list[Loop]],
    machine_counts: MachineCounts,
    catalog: Catalog,
    notes: list[str],
    undone: dict[int, str] | None = None,
) -> dict[int, sympy.Expr]:
    """Counts of the blocks holding peeled remainder iterations of unrolled loops.

    A block that runs under a condition after the machine loops of a source loop, inside the
    same enclosing machine loop, and whose instructions are mostly the source loop's body
    (lines after its header line, not inlined) is a copy of the body finishing the iterations
    the machine loops leave (:mod:`perfcast.static.epilogues`). When the last machine loop
    covers 2 source iterations per pass, that is 0 or 1 iteration per entry: the block runs
    ``remaining`` times per entry. With wider passes several copies share up to ``width - 1``
    iterations in an order the binary does not tell: the count is undefined, with that reason
    (raised, or with ``undone`` given, recorded there per block for measured counts to fill).
    """
    found: dict[int, sympy.Expr] = {}
    for (outer, key), left in machine_counts.remainders.items():
        chain_of_outer = around[outer] if outer is not None else []
        enclosing = next((loop for loop in chain_of_outer if loop.header == outer), None)
        region = enclosing.blocks if enclosing else None
        depth = len(chain_of_outer)
        for index in sorted(conditional_successors(blocks, left.loops, region, outer)):
            chain = around[index]
            if (chain[-1].header if chain else None) != outer:
                continue
            if not _is_body_copy(function, blocks[index], depth, key, catalog):
                continue
            name = key[1] if len(key) > 1 else "?"
            start = blocks[index].start
            if left.width != 2:
                reason = (
                    f"block at {start:#x} finishes source loop {name} after machine loops "
                    f"covering {left.width} iterations per pass: how many of the up to "
                    f"{left.width - 1} remaining iterations it runs cannot be read from the binary"
                )
                if undone is None:
                    raise UndefinedCount(reason)
                undone[index] = reason
                continue
            found[index] = sympy.expand(left.entry.defined() * left.iterations)
            notes.append(
                f"block at {start:#x} runs the remainder of source loop {name} (unrolled by 2, "
                f"read from the binary): {left.iterations} times per entry"
            )
    return found


def zero_trip_bypasses(
    blocks: list[Block],
    machine_loops: list[Loop],
    around: dict[int, list[Loop]],
    runs: dict[int, Place],
    machine_counts: MachineCounts,
) -> dict[int, str]:
    """Blocks that run only when a source loop runs no iteration, with why they never run.

    Before a loop whose test is at its end, the compiler tests the loop's condition once
    (``test edi, edi; jle tail``) and jumps past the loop when it would run no iteration; gcc
    may give that jump a copy of the code after the loop (the function's ``return``) of its
    own. A block only that jump reaches (its one way in, on the loop's line, while the other
    way leads into the loop), and the blocks it dominates, run in the entries with no
    iteration: none when the loop's iterations per entry are at least 1 for all parameter
    values of at least 1 (``rpt``, ``2*n``), in every entry (not a loop whose iterations
    follow an enclosing loop's variable, nor one entered under an if). Block index -> the
    reason, for those blocks.
    """
    catalog, function_count = machine_counts.catalog, machine_counts.function_count.defined()
    dominating = dominators(blocks)
    live = reachable(blocks)  # not the padding after a return, which falls into the next block
    predecessors: dict[int, list[int]] = defaultdict(list)
    for block in blocks:
        for successor in block.successors if block.index in live else ():
            predecessors[successor].append(block.index)
    found: dict[int, str] = {}
    for loop in machine_loops:
        place = runs[loop.header]
        if place.key[:1] == (UNMATCHED,) or len(place.key) < 3 or place.count is None:
            continue
        chain = around[loop.header]
        entries = runs[chain[-2].header].count if len(chain) > 1 else function_count
        if entries is None or entries == 0:
            continue
        source = catalog.loop_named.get(place.key[1])
        if source is None or source.varying or not _at_least_one(place.count / entries):
            continue  # an average over entries says nothing of each entry
        if machine_counts._entry_share(loop, place).count != 1:
            continue  # entered in some runs of its context only: the guard may be the if's
        for entering in [p for p in predecessors[loop.header] if p not in loop.blocks]:
            for guard in [entering, *predecessors[entering]]:
                owner = place.key[1].split(":")[0]
                bypass = _bypass_of(
                    blocks, guard, loop, (owner, place.key[2]), predecessors, around
                )
                if bypass is None:
                    continue
                region = [i for i in range(len(blocks)) if bypass in dominating[i]]
                if _copies_the_loop(blocks, region, loop, place.key, runs, source.end_line):
                    continue  # another version of the loop (an alias check), not a way past
                reason = (
                    f"block at {blocks[bypass].start:#x} runs only when source loop "
                    f"{place.key[1]} runs no iteration (the test on its line jumps past the "
                    f"loop), which its count, {sympy.cancel(place.count / entries)} per entry, "
                    "excludes for parameter values of at least 1: counted 0"
                )
                found.update(dict.fromkeys(region, reason))
    return found


def _copies_the_loop(
    blocks: list[Block],
    region: list[int],
    loop: Loop,
    key: tuple,
    runs: dict[int, Place],
    end_line: int,
) -> bool:
    """True when blocks of ``region`` hold code of the body of source loop ``key`` (a line
    after its own, up to ``end_line``) or lead into another machine loop of it: a version of
    the loop behind a run-time check, not the way past it."""
    line = key[2]
    if any(
        line < insn.line <= end_line and not insn.inlined
        for index in region
        for insn in blocks[index].instructions
    ):
        return True
    others = [h for h, place in runs.items() if place.key == key and h != loop.header]
    return any(_reaches(blocks, index, header, None) for index in region for header in others)


def _at_least_one(per_entry: sympy.Expr) -> bool:
    """True when ``per_entry`` is at least 1 for all integer parameter values of at least 1."""
    per_entry = sympy.cancel(per_entry)
    positive = {
        s: sympy.Symbol(s.name, positive=True, integer=True) for s in per_entry.free_symbols
    }
    return bool((per_entry.xreplace(positive) - 1).is_nonnegative)


def _bypass_of(
    blocks: list[Block],
    guard: int,
    loop: Loop,
    place: tuple[str, int],
    predecessors: dict[int, list[int]],
    around: dict[int, list[Loop]],
) -> int | None:
    """The successor of block ``guard`` that skips ``loop``: when the guard ends in a
    conditional jump on the loop's line (``place``: the function whose code it is, a callee
    when inlined, and the line; the jump not in the loop, in the machine loops around it), one
    way leads into the loop and the other, reached only from the guard, never does; else None."""
    if guard in loop.blocks or around[guard] != around[loop.header][:-1]:
        return None
    jump = blocks[guard].instructions[-1]
    owner, line = place
    if (
        jump.kind != "branch"
        or jump.line != line
        or (jump.inlined and jump.inlined[-1].callee != owner)
        or len(blocks[guard].successors) != 2
    ):
        return None
    stop = around[guard][-1].header if around[guard] else None
    leads = [s for s in blocks[guard].successors if _reaches(blocks, s, loop.header, stop)]
    skips = [s for s in blocks[guard].successors if s not in leads]
    if len(leads) != 1 or len(skips) != 1 or predecessors[skips[0]] != [guard]:
        return None
    return skips[0] if around[skips[0]] == around[guard] else None


def _reaches(blocks: list[Block], start: int, target: int, stop: int | None) -> bool:
    """True when a path leads from block ``start`` to block ``target`` without passing block
    ``stop`` (the header of the machine loop around both: the next pass is not this one)."""
    seen: set[int] = set()
    stack = [start]
    while stack:
        index = stack.pop()
        if index == target:
            return True
        if index in seen or index == stop:
            continue
        seen.add(index)
        stack.extend(blocks[index].successors)
    return False


def enclosing_runs(
    chain: list[Loop], runs: dict[int, Place], function_count: sympy.Expr
) -> sympy.Expr:
    """How often the innermost machine loop of ``chain`` is entered: the runs of the machine
    loop around it, else the function's count."""
    return runs[chain[-2].header].defined() if len(chain) > 1 else function_count


def header_holds_body(function: str, block: Block, key: tuple, catalog: Catalog) -> bool:
    """True when the block holds code of the body of source loop ``key`` (a line after the
    loop's own, in the loop, of the loop's own function: the function itself, or the callee
    it is inlined from), not only its condition."""
    line = key[2] if len(key) > 2 else None
    if line is None:
        return False
    owner = key[1].split(":")[0] if len(key) > 1 else function
    return any(
        (insn.inlined[-1].callee if insn.inlined else function) == owner
        and insn.line > line
        and any(place.key == key for place in catalog.chain(function, insn))
        for insn in block.instructions
    )


def _is_body_copy(function: str, block: Block, depth: int, key: tuple, catalog: Catalog) -> bool:
    """True when most instructions of the block are the body of the source loop ``key`` at
    machine depth ``depth``: lines after its header line, in the loop's own function (the
    function itself, or the callee it is inlined from when the loop is in an inlined callee)."""
    line = key[2] if len(key) > 2 else None
    if line is None:
        return False
    owner = key[1].split(":")[0] if len(key) > 1 else function
    body = 0
    for insn in block.instructions:
        chain = catalog.chain(function, insn)
        in_loop = len(chain) > depth and chain[depth].key == key
        own = (insn.inlined[-1].callee if insn.inlined else function) == owner
        if in_loop and own and insn.line > line:
            body += 1
    return 2 * body > len(block.instructions)


def machine_width(
    found: Induction | None,
    blocks: list[Block],
    own: set[int],
    header: int,
    source_step: int | None = 1,
) -> int | None:
    """Source iterations one pass of a machine loop covers: from its induction register, else 1
    for a loop without packed SIMD instructions, unless its pointer moves several elements per
    pass and reaches more than one of them, or its pass (from ``header``) runs most of its
    code twice; else None (unknown).

    An element index (a register scaled in the addresses) that steps by ``k`` covers ``k /
    source_step`` iterations of a source loop whose variable steps by ``source_step`` (``j +=
    2`` indexing ``out[j]``: one iteration per pass of 2); None when that does not divide or the
    source step is not a constant. A strided index (one element per array per pass) covers
    one iteration."""
    width = found.elements_per_iteration() if found is not None else None
    scaled = found is not None and found.scale is not None and found.scale > 1
    if width is not None and found is not None and scaled and not found.strided:
        if source_step is None or width % source_step:
            return None
        return width // source_step
    if width is not None:
        return width
    counter_step = _stack_counter(blocks, own) if found is None else None
    if counter_step is not None and abs(counter_step) == source_step:
        # the loop variable lives in a stack slot or a register of its own (unoptimized code),
        # stepped once per pass by the source's step: one source iteration per pass, whatever
        # the body repeats (a row index multiplied by a constant with shifts and adds)
        return 1
    if packed(blocks, own):
        return None
    if found is not None and found.scale == 1 and found.several_per_pass:
        # a pointer or byte offset moving several elements per pass and reaching more than one
        # of them in scalar code: unrolled copies of the body, or fields of one struct; the
        # binary does not tell (one element per array is a strided walk: one iteration)
        return None
    if _copies_of_body(blocks, own, header):
        # no width read and the body's code twice in the pass: unrolled (clang -O2 with an
        # exit between the copies, or a counter stepping by 2), so one pass is not one
        # iteration
        return None
    if found is None and several_by_scaled_index(blocks, own):
        # no exit test read, and an index stepping several elements reaches more than one of
        # them per pass: unrolled copies whose number the binary does not tell here
        return None
    if (
        found is not None
        and found.scale is None
        and abs(found.step) != source_step
        and _rounded_down_to_step(blocks, header, abs(found.step))
    ):
        # a counter no address uses, stepping by k source steps from or to a value rounded
        # down to a multiple of k (``and edx, -2``): unrolled by k, the copies of the body
        # that do nothing left out (clang turns ``if (i & 1) continue;`` into a loop over the
        # even i); how many iterations a pass covers is not the source's one
        return None
    return 1


def _rounded_down_to_step(blocks: list[Block], header: int, step: int) -> bool:
    """Whether code before the loop at ``header`` rounds a register down to a multiple of
    ``step`` (a power of two above 1): ``and r, -step`` (unrolled loops' trip counts)."""
    if step < 2 or step & (step - 1):
        return False
    masks = {-step, (1 << 32) - step, (1 << 64) - step}
    return any(
        insn.mnemonic == "and"
        and insn.operands.count(",") == 1
        and _constant(insn.operands.split(",")[1]) in masks
        for block in blocks
        if block.start < blocks[header].start
        for insn in block.instructions
    )


_SLOT = re.compile(r"(?:byte|word|dword|qword) ptr \[r[bs]p(?: [-+] 0x[0-9a-f]+| [-+] \d+)?\]")


def _stack_counter(blocks: list[Block], own: set[int]) -> int | None:
    """The step of a machine loop's counter when its exit test compares a stack slot
    (directly, or through a register loaded from it just before) that the loop's own code
    writes exactly once, by adding or subtracting a constant (``add dword ptr [rbp - 8], 1``,
    or clang -O0's ``mov eax, [slot]; add eax, 1; mov [slot], eax``), or a register it writes
    only that way (gcc -O0 keeps a ``register`` variable in ``r12d``): the source loop's
    variable as unoptimized code keeps it, stepped once per pass; None otherwise."""
    tested: set[str] = set()
    for index in own:
        code = blocks[index].instructions
        if len(code) < 2 or code[-1].kind != "branch" or code[-2].mnemonic != "cmp":
            continue
        first = code[-2].operands.split(",")[0].strip()
        loaded = len(code) >= 3 and code[-3].mnemonic == "mov"
        target, _, source = code[-3].operands.partition(",") if loaded else ("", "", "")
        if _SLOT.fullmatch(first):
            tested.add(first)
        elif target.strip() == first and _SLOT.fullmatch(source.strip()):
            tested.add(source.strip())
        elif re.fullmatch(r"r\d+d?|e[a-d]x|e[sd]i", first):
            tested.add(_register(first))
    if len(tested) != 1:
        return None
    slot = next(iter(tested))
    writes = [
        (index, position)
        for index in own
        for position, insn in enumerate(blocks[index].instructions)
        if _register(insn.operands.split(",")[0]) == slot
        and not insn.mnemonic.startswith(("cmp", "test"))
        and insn.kind == ""
    ]
    if len(writes) != 1:
        return None
    index, position = writes[0]
    code = blocks[index].instructions
    write = code[position]
    if write.mnemonic in ("add", "sub"):
        return _constant(write.operands.split(",")[1])
    if write.mnemonic != "mov" or position < 2:
        return None
    register = write.operands.split(",")[1].strip()
    step, load = code[position - 1], code[position - 2]
    if (
        step.mnemonic in ("add", "sub")
        and step.operands.split(",")[0].strip() == register
        and load.mnemonic == "mov"
        and load.operands.replace(" ", "") == f"{register},{slot}".replace(" ", "")
    ):
        return _constant(step.operands.split(",")[1])
    return None


def _constant(operand: str) -> int | None:
    """The value of an immediate operand (``1``, ``0x10``, ``-2``), or None."""
    text = operand.strip()
    if re.fullmatch(r"-?(?:0x[0-9a-f]+|\d+)", text) is None:
        return None
    return int(text, 0)


_MOVES = ("mov", "vmov", "lea", "push", "pop", "nop", "xchg")


def _copies_of_body(blocks: list[Block], own: set[int], header: int) -> bool:
    """True when most of the distinct computing instructions of a loop's own blocks (by
    inlined call sites, source line, column and mnemonic; data moves, which set up calls'
    arguments, left out) occur twice on one path of a pass, the second after the first
    without passing the header: copies of the body run one after the other (unrolling), not
    copies on different paths (a latch the compiler duplicated into both arms of an if)."""
    places: dict[tuple, list[int]] = defaultdict(list)
    for index in own:
        for insn in blocks[index].instructions:
            if insn.kind == "" and insn.line > 0 and not insn.mnemonic.startswith(_MOVES):
                # a callee inlined at two call sites is two places, not a copy
                sites = tuple((frame.call_line, frame.callee) for frame in insn.inlined)
                places[sites, insn.line, insn.column, insn.mnemonic].append(index)
    after = {index: _reached_in_pass(blocks, own, header, index) for index in own}
    repeated = sum(
        1
        for found in places.values()
        if any(a == b or b in after[a] for i, a in enumerate(found) for b in found[i + 1 :])
        or any(b in after[a] for i, b in enumerate(found) for a in found[i + 1 :])
    )
    return repeated >= 2 and 2 * repeated >= len(places)


def _reached_in_pass(blocks: list[Block], own: set[int], header: int, start: int) -> set[int]:
    """The loop's own blocks reached from ``start`` (excluded) without passing the header."""
    reached: set[int] = set()
    stack = [s for s in blocks[start].successors if s in own and s != header]
    while stack:
        index = stack.pop()
        if index in reached:
            continue
        reached.add(index)
        stack.extend(s for s in blocks[index].successors if s in own and s != header)
    return reached


def _passes_text(passes: dict[int, tuple[sympy.Expr, int]], blocks: list[Block]) -> str:
    """``0x1258: floor(N/2) passes of 2 iterations per entry`` for each machine loop."""
    return ", ".join(
        f"{blocks[header].start:#x}: {count} pass{'es' if count != 1 else ''} of {width} "
        f"iteration{'s' if width > 1 else ''} per entry"
        for header, (count, width) in passes.items()
    )


def _values_text(
    passes: dict[int, tuple[sympy.Expr, int]],
    value_of: Callable[[sympy.Symbol], sympy.Expr | int | None],
) -> str:
    """``N = 37`` for the parameters of the passes' expressions."""
    symbols = sorted({s for count, _ in passes.values() for s in count.free_symbols}, key=str)
    return ", ".join(f"{symbol} = {value_of(symbol)}" for symbol in symbols)


def _per_entry_text(per_entry: sympy.Expr | None) -> str:
    if per_entry is None:
        return "has no defined count"
    return f"{per_entry} times per entry"


def match_loops(
    function: str,
    blocks: list,
    machine_loops: list[Loop],
    around: dict[int, list[Loop]],
    catalog: Catalog,
) -> dict[int, Place]:
    """Machine loop header -> the source loop it implements (vote of its own instructions)."""
    matched = {}
    for loop in machine_loops:
        depth = sum(1 for other in around[loop.header] if other.blocks >= loop.blocks)
        votes: dict[tuple, int] = defaultdict(int)
        candidates = {}
        for index in loop.blocks:
            if around[index][-1] is not loop:
                continue  # belongs to a nested machine loop
            for insn in blocks[index].instructions:
                chain = catalog.chain(function, insn)
                if len(chain) >= depth:
                    place = chain[depth - 1]
                    votes[place.key] += 1
                    candidates[place.key] = place
        if not votes:
            # undefined, unless a profile measured its blocks
            address = blocks[loop.header].start
            matched[loop.header] = Place(
                (UNMATCHED, address),
                None,
                f"machine loop at {address:#x} has no source loop at depth {depth} "
                "(the static report misses a loop, or the compiler restructured it)",
            )
            continue
        voted = candidates[max(votes, key=votes.__getitem__)]
        matched[loop.header] = _tested_loop(function, blocks, loop, depth, catalog) or voted
    for loop in machine_loops:
        _deeper_than_source(function, blocks, loop, around, catalog, matched)
    return matched


def _deeper_than_source(
    function: str,
    blocks: list,
    loop: Loop,
    around: dict[int, list[Loop]],
    catalog: Catalog,
    matched: dict[int, Place],
) -> None:
    """Unmatch the machine loops around ``loop`` when it has no source loop at its depth and
    its own code is the body of the source loop one of them was matched to: the machine nest
    is deeper than the source's (gcc -O3 unrolling an outer loop into two copies around the
    inner one), so that machine loop is a copy of an outer loop, not the inner loop."""
    if matched[loop.header].key[:1] != (UNMATCHED,):
        return
    keys: set[tuple] = set()
    for index in loop.blocks:
        if around[index][-1] is loop:
            for insn in blocks[index].instructions:
                keys.update(place.key for place in catalog.chain(function, insn))
    for outer in around[loop.header]:
        if outer is loop or matched[outer.header].key not in keys:
            continue
        address, inner = blocks[outer.header].start, blocks[loop.header].start
        matched[outer.header] = Place(
            (UNMATCHED, address),
            None,
            f"machine loops at {address:#x} and {inner:#x}, one inside the other, both run "
            f"the body of source loop {matched[outer.header].key[1]}: the compiler made the "
            "machine nest deeper than the source's, and which loop each copy stands for "
            "cannot be read from the binary",
        )


def _tested_loop(
    function: str, blocks: list, loop: Loop, depth: int, catalog: Catalog
) -> Place | None:
    """The source loop nested deeper than ``depth`` whose header line the exit test at the end
    of a latch is on (the compare and the conditional branch back), or None: when the compiler
    fully unrolls an outer source loop, the machine loops of its inner loops sit at a smaller
    depth than their source loops (NAS EP's batch loop at clang -O3: four copies of the inner
    loops, each one machine loop at depth 1), and the vote by depth would take them for the
    outer loop. An unconditional jump back proves nothing: a rotated outer loop's may carry
    an inner loop's line (PolyBench lu at gcc -O2)."""
    for latch in loop.latches:
        test = blocks[latch].instructions[-2:]
        if len(test) < 2 or test[-1].kind != "branch":
            continue  # an unconditional jump back carries any line (a rotated outer loop's)
        lines = {insn.line for insn in test}
        if len(lines) != 1:
            continue
        chain = catalog.chain(function, test[-1])
        deeper = [p for p in chain[depth:] if len(p.key) > 2 and p.key[2] == test[-1].line]
        if deeper:
            return deeper[-1]
    return None
