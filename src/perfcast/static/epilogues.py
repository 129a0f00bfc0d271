"""Peeled remainder iterations: straight-line code a compiler places after an unrolled loop.

A compiler that unrolls a loop by 2 without a remainder loop (clang at -O2 on a floating-point
reduction such as DGEMM's inner product) finishes an odd trip count with one copy of the body
after the machine loop, under a test of the count's low bit::

    loop:   body; body; i += 2; if (i != n & ~1) goto loop
            if (n & 1) body          <- the remainder: runs 0 or 1 times per entry

Such a block lies inside the enclosing machine loop only, so it would be counted once per entry
like a loop guard. :func:`conditional_successors` finds the blocks that come after the exits of
a source loop's machine loops, before the enclosing loop comes round again, and that some path
from those exits avoids: code that runs under a condition after the loop. Whether one of them is
a remainder (it holds the loop's body lines) and how often it runs is decided by the caller.
"""

from __future__ import annotations

from collections.abc import Collection

from perfcast.static.control_flow import Block, Loop


def conditional_successors(
    blocks: list[Block], loops: Collection[Loop], region: Collection[int] | None, stop: int | None
) -> set[int]:
    """Blocks after the exits of ``loops`` that some path from those exits avoids.

    Parameters
    ----------
    blocks : list of Block
        The function's basic blocks.
    loops : collection of Loop
        The machine loops of one source loop (side by side, same enclosing machine loop).
    region : collection of int or None
        Blocks of the enclosing machine loop (None: the whole function).
    stop : int or None
        Header of the enclosing machine loop: coming back to it ends one pass.

    Returns
    -------
    set of int
        Indices of the blocks reached from the exits within one pass of the region, without
        re-entering ``loops``, that do not lie on every path from the exits to the pass's end.
    """
    inside = set().union(*(loop.blocks for loop in loops)) if loops else set()
    exits = {
        s for b in inside for s in blocks[b].successors if s not in inside and _within(s, region)
    }
    if stop is not None:
        exits.discard(stop)
    after = _forward(blocks, exits, inside, region, stop, avoid=None)
    return {b for b in after if _avoidable(blocks, exits, inside, region, stop, b)}


def _within(block: int, region: Collection[int] | None) -> bool:
    return region is None or block in region


def _forward(
    blocks: list[Block],
    starts: set[int],
    inside: set[int],
    region: Collection[int] | None,
    stop: int | None,
    avoid: int | None,
) -> set[int]:
    """Blocks reached from ``starts`` without entering ``inside``, ``stop`` or ``avoid``, and
    without leaving the region."""
    seen = {s for s in starts if s != avoid}
    work = list(seen)
    while work:
        for successor in blocks[work.pop()].successors:
            if successor in seen or successor in inside or successor == stop:
                continue
            if successor == avoid or not _within(successor, region):
                continue
            seen.add(successor)
            work.append(successor)
    return seen


def _avoidable(
    blocks: list[Block],
    exits: set[int],
    inside: set[int],
    region: Collection[int] | None,
    stop: int | None,
    block: int,
) -> bool:
    """True when a path from the exits reaches the end of the pass without ``block``: back to
    the enclosing header, out of the region, or to a return."""
    reached = _forward(blocks, exits, inside, region, stop, avoid=block)
    for index in reached:
        successors = blocks[index].successors
        if not successors:
            return True  # a return (or a call that does not come back)
        for successor in successors:
            if successor == stop or not _within(successor, region):
                return True
    return False
