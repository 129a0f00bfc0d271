"""Library calls behind a math builtin the compiler expanded inline (errno paths).

Unless ``-fno-math-errno`` is given, gcc (its conditional dead-call elimination) and clang
(LLVM's partial inlining of library calls) compile ``sqrt``, ``sqrtf`` and ``sqrtl`` as the
processor's square-root instruction (``sqrtsd``, ``sqrtss``, ``fsqrt`` and their AVX forms)
behind a floating-point compare of the argument with 0 (or of the result with itself); only a
negative or NaN argument takes the other path, a call of the library function, whose one job
there is to set ``errno``. On x86-64 these three are the only functions compiled this way:
the other errno-setting functions (``log``, ``exp``, ``pow``, ...) have no single instruction
to expand to, so their calls stay plain calls.

When the result of ``sqrt`` is not used, only the errno path is left: the compare of the
argument with 0 and the call for a negative or NaN argument, with no square-root instruction
at all (clang -O1 keeping ``ucomisd xmm0, xmm2; jae ...; call sqrt`` of an inlined function whose
result its caller drops). Such a call is taken as the error path when the compare tests the
call's argument (``xmm0``) on the call's own line (or both have none) and no source condition
(``if``, ``?:``, ``&&``, ``||``) is on that line: a guard written in the source is not one. A
block holding only a second compare before the call (clang tests ``x < 0``, then NaN), entered
only from the first test whose other way it shares, is on the error path too.

No source construct guards that call: it sits on the line of the ``sqrt`` call, so the
counting took it as part of the code around it and counted it as often as the square root.
:func:`math_fallbacks` finds such blocks (and blocks only they lead into, such as a copy of the
function's tail after the call); the instruction mix counts them as never run, with a note,
or takes their measured counts with ``--profile``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from perfcast.static.binary import BinaryInstruction
from perfcast.static.control_flow import Block, reachable

INLINE_FORMS: dict[str, frozenset[str]] = {
    "sqrt": frozenset({"sqrtsd", "vsqrtsd"}),
    "sqrtf": frozenset({"sqrtss", "vsqrtss"}),
    "sqrtl": frozenset({"fsqrt"}),
}
"""Math functions compiled inline with a library call for the error case -> the instructions
of their inline form."""

_FLOAT_COMPARES = ("ucomis", "comis", "vucomis", "vcomis", "fucomi", "fucompi", "fcomi", "fcompi")


def math_fallbacks(
    blocks: list[Block],
    callees: Mapping[int, str],
    conditioned: Callable[[BinaryInstruction], bool] = lambda insn: False,
) -> dict[int, str]:
    """Blocks that run only when an inline-expanded math function takes its library path.

    Parameters
    ----------
    blocks : list of Block
        The basic blocks of one function.
    callees : mapping of int to str
        Address -> name of the functions and PLT stubs of the binary.
    conditioned : callable, optional
        Whether a source condition (``if``, ``?:``, ``&&``, ``||``) is on an instruction's
        line; a compare there guards a call written in the source.

    Returns
    -------
    dict of int to str
        Block index -> name of the math function (``sqrt``) whose error path the block is on.
    """
    live = reachable(blocks)

    def entered_from(block: Block) -> list[int]:  # padding falling into a block is no way in
        return [p for p in block.predecessors if p in live]

    found: dict[int, str] = {}
    for block in blocks:
        name = _only_math_call(block, callees)
        if name is None or block.index not in live or block.index == 0:
            continue
        if all(
            _decides(blocks[p], block.index, name, blocks, conditioned) for p in entered_from(block)
        ):
            found[block.index] = name
    for block in blocks:  # a second test of the argument before the call (clang: x < 0, then NaN)
        if block.index in found or block.index not in live or not _only_compare(block):
            continue
        calls = [s for s in block.successors if s in found]
        others = [s for s in block.successors if s not in found]
        before = entered_from(block)
        if (
            len(calls) == 1
            and len(others) == 1
            and before
            and all(
                _only_compare(blocks[p], tail=True) and others[0] in blocks[p].successors
                for p in before
            )
        ):
            found[block.index] = found[calls[0]]
    changed = True
    while changed:  # code only a fallback leads into (a duplicated tail) runs only with it
        changed = False
        for block in blocks:
            if block.index in found or block.index == 0 or block.index not in live:
                continue
            names = {found.get(p) for p in entered_from(block)}
            if len(names) == 1 and None not in names:
                found[block.index] = names.pop() or ""
                changed = True
    return found


def _only_compare(block: Block, tail: bool = False) -> bool:
    """Whether the block ends in a conditional jump after a floating-point compare, and holds
    nothing else (``tail``: whatever comes before the compare)."""
    last = block.instructions[-1]
    if last.kind != "branch" or len(block.instructions) < 2:
        return False
    body = block.instructions[-2:-1] if tail else block.instructions[:-1]
    return all(i.mnemonic.startswith(_FLOAT_COMPARES) for i in body)


def _only_math_call(block: Block, callees: Mapping[int, str]) -> str | None:
    """The math function of :data:`INLINE_FORMS` the block calls, when it is the block's only
    call (a tail jump to it counts as a call)."""
    called = [
        callees.get(i.target, "")
        for i in block.instructions
        if i.target is not None
        and (i.kind == "call" or (i.kind == "jump" and not block.successors))
    ]
    if len(called) != 1 or called[0] not in INLINE_FORMS:
        return None
    return called[0]


def _decides(
    deciding: Block,
    fallback: int,
    name: str,
    blocks: list[Block],
    conditioned: Callable[[BinaryInstruction], bool],
) -> bool:
    """Whether ``deciding`` chooses between the inline form of ``name`` and the call in block
    ``fallback``: it ends in a conditional jump after a floating-point compare, and it or its
    other successor (past blocks that only jump on) holds the inline instruction; or, the
    result being unused, the compare tests the call's argument on the call's line, where no
    source condition is."""
    if deciding.instructions[-1].kind != "branch":
        return False
    compares = [i for i in deciding.instructions if i.mnemonic.startswith(_FLOAT_COMPARES)]
    if not compares:
        return False
    inline = INLINE_FORMS[name]
    sites = [deciding] + [_past_jumps(blocks, s) for s in deciding.successors if s != fallback]
    if any(i.mnemonic in inline for site in sites for i in site.instructions):
        return True
    call = next(i for i in blocks[fallback].instructions if i.kind in ("call", "jump"))
    compare = compares[-1]
    return (
        compare.operands.split(",")[0].strip() == "xmm0"
        and (compare.file, compare.line, compare.inlined) == (call.file, call.line, call.inlined)
        and not conditioned(compare)
    )


def _past_jumps(blocks: list[Block], index: int) -> Block:
    """The block control reaches from block ``index`` past blocks holding only a jump."""
    seen = set()
    block = blocks[index]
    while (
        len(block.instructions) == 1
        and block.instructions[0].kind == "jump"
        and len(block.successors) == 1
        and block.index not in seen
    ):
        seen.add(block.index)
        block = blocks[block.successors[0]]
    return block
