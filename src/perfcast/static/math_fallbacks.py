"""Library calls behind a math builtin the compiler expanded inline (errno paths).

Unless ``-fno-math-errno`` is given, gcc (its conditional dead-call elimination) and clang
(LLVM's partial inlining of library calls) compile ``sqrt``, ``sqrtf`` and ``sqrtl`` as the
processor's square-root instruction (``sqrtsd``, ``sqrtss``, ``fsqrt`` and their AVX forms)
behind a floating-point compare of the argument with 0 (or of the result with itself); only a
negative or NaN argument takes the other path, a call of the library function, whose one job
there is to set ``errno``. On x86-64 these three are the only functions compiled this way:
the other errno-setting functions (``log``, ``exp``, ``pow``, ...) have no single instruction
to expand to, so their calls stay plain calls.

No source construct guards that call: it sits on the line of the ``sqrt`` call, so the
counting took it as part of the code around it and counted it as often as the square root.
:func:`math_fallbacks` finds such blocks (and blocks only they lead into, such as a copy of the
function's tail after the call); the instruction mix counts them as never run, with a note,
or takes their measured counts with ``--profile``.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfcast.static.control_flow import Block, reachable

INLINE_FORMS: dict[str, frozenset[str]] = {
    "sqrt": frozenset({"sqrtsd", "vsqrtsd"}),
    "sqrtf": frozenset({"sqrtss", "vsqrtss"}),
    "sqrtl": frozenset({"fsqrt"}),
}
"""Math functions compiled inline with a library call for the error case -> the instructions
of their inline form."""

_FLOAT_COMPARES = ("ucomis", "comis", "vucomis", "vcomis", "fucomi", "fucompi", "fcomi", "fcompi")


def math_fallbacks(blocks: list[Block], callees: Mapping[int, str]) -> dict[int, str]:
    """Blocks that run only when an inline-expanded math function takes its library path.

    Parameters
    ----------
    blocks : list of Block
        The basic blocks of one function.
    callees : mapping of int to str
        Address -> name of the functions and PLT stubs of the binary.

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
        if all(_decides(blocks[p], block.index, name, blocks) for p in entered_from(block)):
            found[block.index] = name
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


def _decides(deciding: Block, fallback: int, name: str, blocks: list[Block]) -> bool:
    """Whether ``deciding`` chooses between the inline form of ``name`` and the call in block
    ``fallback``: it ends in a conditional jump after a floating-point compare, and it or its
    other successor (past blocks that only jump on) holds the inline instruction."""
    if deciding.instructions[-1].kind != "branch":
        return False
    if not any(i.mnemonic.startswith(_FLOAT_COMPARES) for i in deciding.instructions):
        return False
    inline = INLINE_FORMS[name]
    sites = [deciding] + [_past_jumps(blocks, s) for s in deciding.successors if s != fallback]
    return any(i.mnemonic in inline for site in sites for i in site.instructions)


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
