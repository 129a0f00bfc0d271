"""Basic blocks, dominators and natural loops of one disassembled function.

Loop structure of the machine code is what decides how often an instruction runs relative to the
source loop it comes from: the guard a compiler puts before a rotated loop runs once per entry, the
exit test at the top of a ``while``-shaped loop runs once per iteration plus once per entry, and the
body runs once per iteration. :func:`natural_loops` finds those loops from back edges (an edge to a
block that dominates its source).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from perfcast.static.binary import BinaryFunction, BinaryInstruction


@dataclass
class Block:
    """A basic block: instructions entered only at the first and left only after the last."""

    index: int
    instructions: list[BinaryInstruction]
    successors: list[int] = field(default_factory=list)
    predecessors: list[int] = field(default_factory=list)

    @property
    def start(self) -> int:
        """Address of the first instruction."""
        return self.instructions[0].address


@dataclass(frozen=True)
class Loop:
    """A natural loop of the machine code.

    Attributes
    ----------
    header : int
        Index of the header block (the target of the back edges).
    blocks : frozenset of int
        Indices of all blocks in the loop, nested loops included.
    latches : frozenset of int
        Blocks with a back edge to the header.
    exits_at_header : bool
        True when the header tests the exit condition and is not itself a latch: the header then
        runs once more per entry than the body (a ``while``-shaped loop, as at ``-O0``).
    """

    header: int
    blocks: frozenset[int]
    latches: frozenset[int]
    exits_at_header: bool


def basic_blocks(function: BinaryFunction) -> list[Block]:
    """Split a function into basic blocks and link them by control-flow edges.

    Direct jump and branch targets inside the function start blocks; jumps, branches, returns and
    calls of functions that do not return (``exit``) end them. Other calls do not end blocks
    (control comes back). An indirect jump ends its block with no known successor.
    """
    instructions = function.instructions
    starts = {instructions[0].address}
    for insn in instructions:
        if insn.kind in ("jump", "branch", "return", "noreturn"):
            starts.add(insn.end)
            target = insn.target
            if (
                insn.kind in ("jump", "branch")
                and target is not None
                and function.low <= target < function.high
            ):
                starts.add(target)
    blocks: list[Block] = []
    index_of: dict[int, int] = {}
    for insn in instructions:
        if insn.address in starts or not blocks:
            index_of[insn.address] = len(blocks)
            blocks.append(Block(len(blocks), []))
        blocks[-1].instructions.append(insn)
    for block in blocks:
        last = block.instructions[-1]
        targets = []
        if last.kind in ("jump", "branch") and last.target in index_of:
            targets.append(index_of[last.target])
        if last.kind not in ("jump", "return", "noreturn") and last.end in index_of:
            targets.append(index_of[last.end])
        for target in dict.fromkeys(targets):
            block.successors.append(target)
            blocks[target].predecessors.append(block.index)
    return blocks


def reachable(blocks: list[Block]) -> set[int]:
    """Blocks reachable from the entry (block 0) along known edges.

    Padding after a return or jump is unreachable. A function with an indirect jump (a switch
    table) has edges this analysis does not know: then every block counts as reachable.
    """
    if any(b.instructions[-1].kind == "jump" and b.instructions[-1].target is None for b in blocks):
        return set(range(len(blocks)))
    seen, work = {0}, [0]
    while work:
        for successor in blocks[work.pop()].successors:
            if successor not in seen:
                seen.add(successor)
                work.append(successor)
    return seen


def doomed(blocks: list[Block]) -> set[int]:
    """Blocks from which every path ends in a call of a function that does not return.

    They are error paths (``if (bad) exit(1);``): the instruction mix counts them as never run,
    like the source analysis. A block with an indirect jump (unknown successors) is not doomed.
    """
    found = {b.index for b in blocks if b.instructions[-1].kind == "noreturn"}
    changed = True
    while changed:
        changed = False
        for block in blocks:
            last = block.instructions[-1]
            if block.index in found or not block.successors or last.kind == "return":
                continue
            if all(s in found for s in block.successors):
                found.add(block.index)
                changed = True
    return found


def dominators(blocks: list[Block]) -> list[set[int]]:
    """Dominator sets (block 0 is the entry); an unreachable block gets the empty set."""
    live = reachable(blocks)
    dom = [set(live) if b.index in live else set() for b in blocks]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for block in blocks[1:]:
            if block.index not in live:
                continue
            preds = [dom[p] for p in block.predecessors if p in live]
            new = set.intersection(*preds) | {block.index} if preds else {block.index}
            if new != dom[block.index]:
                dom[block.index] = new
                changed = True
    return dom


def natural_loops(blocks: list[Block]) -> list[Loop]:
    """The natural loops, one per header (back edges to the same header are merged).

    Returns
    -------
    list of Loop
        Outer loops before the loops they contain.
    """
    dom = dominators(blocks)
    latches_of: dict[int, set[int]] = {}
    for block in blocks:
        if not dom[block.index]:
            continue  # unreachable
        for successor in block.successors:
            if successor in dom[block.index]:
                latches_of.setdefault(successor, set()).add(block.index)
    loops = []
    for header, latches in latches_of.items():
        body = {header}
        work = [latch for latch in latches if latch != header]
        while work:
            node = work.pop()
            if node not in body and dom[node]:
                body.add(node)
                work.extend(blocks[node].predecessors)
        leaves = any(s not in body for s in blocks[header].successors)
        loops.append(
            Loop(header, frozenset(body), frozenset(latches), leaves and header not in latches)
        )
    loops.sort(key=lambda loop: (-len(loop.blocks), loop.header))
    return loops


def avoidable(
    blocks: list[Block], candidates: Collection[int], ignored: Collection[int]
) -> set[int]:
    """The candidate blocks some path from the entry to the function's end avoids.

    A path ends at a block without known successors (a return, a tail call, a call that does
    not return). Paths through ``ignored`` blocks (error paths ending the program, padding) do
    not count: code that only such paths skip runs whenever the function completes.
    """
    skip = set(ignored)
    found = set()
    for candidate in candidates:
        if candidate == 0 or candidate in skip:
            continue
        seen, work = {0}, [0]
        while work:
            node = work.pop()
            if not blocks[node].successors:
                found.add(candidate)
                break
            for successor in blocks[node].successors:
                if successor not in seen and successor != candidate and successor not in skip:
                    seen.add(successor)
                    work.append(successor)
    return found
