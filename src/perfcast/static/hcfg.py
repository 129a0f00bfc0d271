"""Hybrid control-flow graphs (hCFG, Meliora) of functions and loops from LLVM IR.

A hCFG is a control-flow graph whose nodes are basic blocks carrying

``mix``
    the block's instructions counted in :data:`CATEGORIES` (the paper's four groups, and
    ``other`` for what none of them holds: ``phi``, ``select``, bit casts, bookkeeping
    intrinsics);
``dominant``
    the category among the first four with most instructions (``other`` for a block with none);
``loop_depth``
    how many natural loops hold the block (0 outside loops);
``reuse``
    a static estimate of the reuse-distance histogram of the block's loads and stores, counts per
    bin of :data:`REUSE_BINS` (see :func:`reuse_histogram`),

and whose edges carry transition probabilities: the share of the executions of the source block
that continue to the target. Probabilities come from the branch profile counts in the IR when it
has them (``--profile``), otherwise from static heuristics: a loop branch stays in its loop with
probability ``(T - 1) / T`` for a constant trip count ``T`` read from the exit compare, and with
the Ball-Larus loop-branch probability 0.88 when the count is not a constant; any other two-way
branch is taken either way with probability 0.5. The outgoing probabilities of every block sum
to 1.

A function's graph holds all its blocks; a loop's graph holds the blocks of one outermost loop
and one synthetic ``exit`` node standing for everything after the loop, so that probabilities
still sum to 1 per node. Nothing here depends on the target machine: the builder takes
:class:`perfcast.static.llvm_ir.IRFunction` structures, which another front end can produce.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from perfcast.core.errors import InputError
from perfcast.static.llvm_ir import (
    IRBlock,
    IRFunction,
    IRInstruction,
    compile_to_ir,
    parse_ir,
    profiled_ir,
)

CATEGORIES: Final = ("floating_point", "integer", "memory", "control", "other")
"""Instruction-mix categories of a node, in vector order."""

REUSE_BINS: Final = (0, 64, 4096, 262144)
"""Upper bounds (bytes, inclusive) of the first reuse bins; a last bin holds longer or no reuse."""

LOOP_BRANCH_PROBABILITY: Final = 0.88
"""Probability of staying in a loop when its trip count is unknown (Ball and Larus, 1993)."""

GRAPH_FORMAT: Final = "perfcast-hcfg"
GRAPH_VERSION: Final = 1

_FP_OPS = frozenset(
    [
        "fadd",
        "fsub",
        "fmul",
        "fdiv",
        "frem",
        "fneg",
        "fcmp",
        "fptrunc",
        "fpext",
        "fptoui",
        "fptosi",
        "uitofp",
        "sitofp",
    ]
)
_INT_OPS = frozenset(
    [
        "add",
        "sub",
        "mul",
        "udiv",
        "sdiv",
        "urem",
        "srem",
        "shl",
        "lshr",
        "ashr",
        "and",
        "or",
        "xor",
        "icmp",
        "trunc",
        "zext",
        "sext",
    ]
)
_MEM_OPS = frozenset(["load", "store", "fence", "getelementptr", "alloca", "atomicrmw", "cmpxchg"])
_CONTROL_OPS = frozenset(
    ["ret", "br", "switch", "indirectbr", "resume", "unreachable", "invoke", "callbr"]
)
_FP_FUNCTIONS = frozenset(
    [
        "fmuladd",
        "fma",
        "sqrt",
        "fabs",
        "pow",
        "exp",
        "exp2",
        "log",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "floor",
        "ceil",
        "round",
        "trunc",
        "minnum",
        "maxnum",
        "copysign",
        "atan",
        "atan2",
        "fmin",
        "fmax",
    ]
)
_MEM_INTRINSICS = ("llvm.memcpy", "llvm.memmove", "llvm.memset")
_STEP_OPS = frozenset(["add", "sub", "or", "sext", "zext", "trunc"])


def category(instruction: IRInstruction) -> str:
    """The instruction-mix category of one IR instruction (one of :data:`CATEGORIES`)."""
    opcode = instruction.opcode
    if opcode == "call":
        callee = instruction.callee
        base = callee.removeprefix("llvm.").split(".")[0]
        if base in _FP_FUNCTIONS or base.rstrip("f") in _FP_FUNCTIONS:
            return "floating_point"
        if callee.startswith(_MEM_INTRINSICS):
            return "memory"
        return "other" if callee.startswith("llvm.") else "control"
    if opcode in _FP_OPS:
        return "floating_point"
    if opcode in _INT_OPS:
        return "integer"
    if opcode in _MEM_OPS:
        return "memory"
    if opcode in _CONTROL_OPS:
        return "control"
    return "other"


@dataclass(frozen=True)
class Node:
    """A basic block of a hCFG (or the synthetic ``exit`` node of a loop graph)."""

    id: int
    name: str
    line: int | None
    mix: tuple[int, ...]
    dominant: str
    loop_depth: int
    reuse: tuple[int, ...]
    kind: str = "block"
    opcodes: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The node as JSON-ready data (see README, "Code graphs")."""
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "line": self.line,
            "mix": dict(zip(CATEGORIES, self.mix, strict=True)),
            "dominant": self.dominant,
            "loop_depth": self.loop_depth,
            "reuse": list(self.reuse),
            "opcodes": dict(self.opcodes),
        }


@dataclass(frozen=True)
class Edge:
    """A control-flow edge with its transition probability."""

    source: int
    target: int
    probability: float

    def to_dict(self) -> dict[str, Any]:
        """The edge as JSON-ready data."""
        return {"source": self.source, "target": self.target, "probability": self.probability}


@dataclass(frozen=True)
class CodeGraph:
    """The hCFG of one function or one outermost loop."""

    file: str
    function: str
    scope: str
    line: int | None
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    probabilities: str = "static"
    notes: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        """``file:function`` for a function graph, ``file:function:line`` for a loop graph."""
        if self.scope == "loop":
            return f"{self.file}:{self.function}:{self.line}"
        return f"{self.file}:{self.function}"

    def successors(self, node: int) -> list[Edge]:
        """The edges leaving ``node``."""
        return [edge for edge in self.edges if edge.source == node]

    def to_dict(self) -> dict[str, Any]:
        """The graph as JSON-ready data (format ``perfcast-hcfg``, README "Code graphs")."""
        return {
            "format": GRAPH_FORMAT,
            "version": GRAPH_VERSION,
            "file": self.file,
            "function": self.function,
            "scope": self.scope,
            "line": self.line,
            "probabilities": self.probabilities,
            "categories": list(CATEGORIES),
            "reuse_bins": list(REUSE_BINS),
            "nodes": [node.to_dict() for node in self.nodes],
            "edges": [edge.to_dict() for edge in self.edges],
            "notes": list(self.notes),
        }

    def to_dot(self) -> str:
        """The graph in Graphviz DOT, node labels showing the mix, depth and reuse."""
        lines = [f'digraph "{_dot_escape(self.label)}" {{', "  node [shape=box];"]
        for node in self.nodes:
            mix = " ".join(
                f"{name[:2]}={count}" for name, count in zip(CATEGORIES, node.mix, strict=True)
            )
            text = f"{node.name} ({node.dominant}, depth {node.loop_depth})\\n{mix}"
            if node.kind == "block":
                text += f"\\nreuse {list(node.reuse)}"
            lines.append(f'  n{node.id} [label="{_dot_escape(text)}"];')
        for edge in self.edges:
            lines.append(f'  n{edge.source} -> n{edge.target} [label="{edge.probability:.3g}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\n", "\\n")


@dataclass(frozen=True)
class Loop:
    """A natural loop: header block, member blocks, source line, parent loop (index) if any."""

    header: int
    blocks: frozenset[int]
    line: int | None
    parent: int | None


def dominators(blocks: Sequence[IRBlock]) -> dict[int, frozenset[int]]:
    """The dominator set of every block reachable from the entry (iterative data flow)."""
    reachable = _reachable(blocks)
    predecessors = _predecessors(blocks)
    everything = frozenset(reachable)
    dominated: dict[int, frozenset[int]] = {b: everything for b in reachable}
    dominated[0] = frozenset({0})
    changed = True
    while changed:
        changed = False
        for block in sorted(reachable):
            if block == 0:
                continue
            incoming = [dominated[p] for p in predecessors[block] if p in dominated]
            new = frozenset.intersection(*incoming) | {block} if incoming else frozenset({block})
            if new != dominated[block]:
                dominated[block] = new
                changed = True
    return dominated


def _reachable(blocks: Sequence[IRBlock]) -> set[int]:
    seen = {0} if blocks else set()
    stack = [0] if blocks else []
    while stack:
        for successor in blocks[stack.pop()].successors:
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen


def _predecessors(blocks: Sequence[IRBlock]) -> dict[int, list[int]]:
    table: dict[int, list[int]] = {block.index: [] for block in blocks}
    for block in blocks:
        for successor in block.successors:
            table[successor].append(block.index)
    return table


def natural_loops(blocks: Sequence[IRBlock]) -> list[Loop]:
    """The natural loops of a function, outer loops before the loops they contain.

    A back edge ``n -> h`` (``h`` dominates ``n``) gives the loop of header ``h``: ``h`` and every
    block reaching ``n`` without passing ``h``. Back edges to one header form one loop.
    """
    dominated = dominators(blocks)
    predecessors = _predecessors(blocks)
    bodies: dict[int, set[int]] = {}
    lines: dict[int, int | None] = {}
    for block in blocks:
        if block.index not in dominated:
            continue
        for successor in block.successors:
            if successor in dominated[block.index]:
                body = bodies.setdefault(successor, {successor})
                stack = [block.index]
                while stack:
                    current = stack.pop()
                    if current not in body:
                        body.add(current)
                        stack.extend(predecessors[current])
                if lines.get(successor) is None:
                    lines[successor] = block.loop_line
    ordered = sorted(bodies.items(), key=lambda item: (-len(item[1]), item[0]))
    loops: list[Loop] = []
    for header, body in ordered:
        parents = [i for i, loop in enumerate(loops) if header in loop.blocks]
        parent = max(parents, key=lambda i: -len(loops[i].blocks)) if parents else None
        line = lines.get(header)
        if line is None:
            line = min(
                (i.line for b in body for i in blocks[b].instructions if i.line), default=None
            )
        loops.append(Loop(header, frozenset(body), line, parent))
    return loops


def _innermost(loops: Sequence[Loop], block: int) -> Loop | None:
    holding = [loop for loop in loops if block in loop.blocks]
    return min(holding, key=lambda loop: len(loop.blocks)) if holding else None


def _trip_count(block: IRBlock, defined: dict[int, IRInstruction]) -> int | None:
    """A constant trip count read from the compare deciding the latch branch, if any."""
    if not block.instructions or block.instructions[-1].opcode != "br":
        return None
    condition = defined.get(block.instructions[-1].operands[0])
    if condition is None or condition.opcode != "icmp":
        return None
    bounds = condition.constants
    return bounds[0] if len(bounds) == 1 and bounds[0] > 1 else None


def transition_probabilities(
    blocks: Sequence[IRBlock],
    loops: Sequence[Loop],
    trips: dict[int, float] | None = None,
) -> tuple[dict[tuple[int, int], float], str]:
    """Probability of every edge, and where they came from (``profile`` or ``static``).

    ``trips`` maps a loop's source line to its mean trip count per entry (from the symbolic
    counts of :mod:`perfcast.static`), used before the IR's constant and the heuristic.
    """
    defined = {i.identity: i for block in blocks for i in block.instructions}
    probabilities: dict[tuple[int, int], float] = {}
    profiled = any(block.branch_weights for block in blocks)
    for block in blocks:
        targets = block.successors
        if not targets:
            continue
        shares: list[float]
        weights = block.branch_weights
        if weights and len(weights) == len(targets) and sum(weights) > 0:
            shares = [w / sum(weights) for w in weights]
        elif len(targets) == 2:
            shares = _two_way(block, loops, defined, trips or {})
        else:
            shares = [1.0 / len(targets)] * len(targets)
        for target, share in zip(targets, shares, strict=True):
            key = (block.index, target)
            probabilities[key] = probabilities.get(key, 0.0) + share
    return probabilities, "profile" if profiled else "static"


def _two_way(
    block: IRBlock,
    loops: Sequence[Loop],
    defined: dict[int, IRInstruction],
    counted: dict[int, float],
) -> list[float]:
    loop = _innermost(loops, block.index)
    if loop is not None:
        inside = [target in loop.blocks for target in block.successors]
        if inside.count(True) == 1:
            trips = counted.get(loop.line or -1) or _trip_count(block, defined)
            stay = (trips - 1) / trips if trips and trips >= 1 else LOOP_BRANCH_PROBABILITY
            return [stay if flag else 1.0 - stay for flag in inside]
    return [0.5, 0.5]


def reuse_histogram(
    block: IRBlock,
    loop: Loop | None,
    blocks: Sequence[IRBlock],
    defined: dict[int, IRInstruction],
) -> tuple[int, ...]:
    """A static estimate of the reuse distances (bytes) of a block's loads and stores.

    An access to an address the block accessed before reuses it after the bytes accessed in
    between. Otherwise, inside a loop, an access whose address does not change between iterations
    or moves with unit stride along the loop's induction variable (reaches a ``phi`` of the header
    through additions and extensions) reuses its data (or cache line) one iteration later: after
    the bytes one iteration of the innermost loop accesses. Accesses outside loops and strided
    accesses (an index multiplied by a variable) land in the last bin: no reuse found.
    """
    histogram = [0] * (len(REUSE_BINS) + 1)
    per_iteration = 0
    if loop is not None:
        per_iteration = sum(i.access_bytes for b in loop.blocks for i in blocks[b].instructions)
    seen: dict[int, int] = {}
    running = 0
    for instruction in block.instructions:
        if instruction.address is None:
            continue
        address = instruction.address
        if address in seen:
            distance: int | None = running - seen[address]
        elif loop is not None and _moves_slowly(address, loop, blocks, defined):
            distance = per_iteration
        else:
            distance = None
        seen[address] = running + instruction.access_bytes
        running += instruction.access_bytes
        histogram[_bin(distance)] += 1
    return tuple(histogram)


def _bin(distance: int | None) -> int:
    if distance is None:
        return len(REUSE_BINS)
    for index, bound in enumerate(REUSE_BINS):
        if distance <= bound:
            return index
    return len(REUSE_BINS)


def _defined_in(loop: Loop, blocks: Sequence[IRBlock]) -> set[int]:
    return {i.identity for b in loop.blocks for i in blocks[b].instructions}


def _moves_slowly(
    address: int, loop: Loop, blocks: Sequence[IRBlock], defined: dict[int, IRInstruction]
) -> bool:
    inside = _defined_in(loop, blocks)
    if address not in inside:
        return True
    gep = defined.get(address)
    if gep is None or gep.opcode != "getelementptr":
        return False
    header_phis = {i.identity for i in blocks[loop.header].instructions if i.opcode == "phi"}
    for index in gep.operands[1:]:
        if index in inside and not _unit_step(index, header_phis, inside, defined, 0):
            return False
    return True


def _unit_step(
    value: int, phis: set[int], inside: set[int], defined: dict[int, IRInstruction], depth: int
) -> bool:
    if value in phis:
        return True
    instruction = defined.get(value)
    if instruction is None or depth > 8 or instruction.opcode not in _STEP_OPS:
        return False
    varying = [o for o in instruction.operands if o in inside]
    return len(varying) == 1 and _unit_step(varying[0], phis, inside, defined, depth + 1)


def _node(block: IRBlock, depth: int, reuse: tuple[int, ...], node_id: int) -> Node:
    counts = dict.fromkeys(CATEGORIES, 0)
    opcodes: dict[str, int] = {}
    for instruction in block.instructions:
        counts[category(instruction)] += 1
        name = instruction.callee if instruction.opcode == "call" else instruction.opcode
        opcodes[name] = opcodes.get(name, 0) + 1
    mix = tuple(counts[name] for name in CATEGORIES)
    main = mix[:4]
    dominant = CATEGORIES[main.index(max(main))] if max(main) > 0 else "other"
    line = min((i.line for i in block.instructions if i.line), default=None)
    ordered = tuple(sorted(opcodes.items()))
    return Node(node_id, block.name, line, mix, dominant, depth, reuse, opcodes=ordered)


def function_graphs(
    function: IRFunction,
    source: str,
    scope: str = "all",
    trips: dict[int, float] | None = None,
) -> list[CodeGraph]:
    """The hCFG of a function and of each of its outermost loops.

    Parameters
    ----------
    function : IRFunction
        The function's blocks.
    source : str
        The C file's name, stored in the graphs.
    scope : {"all", "function", "loop"}
        Which graphs to build.
    trips : dict, optional
        Mean trip count per entry by loop line (see :func:`static_trip_counts`).

    Returns
    -------
    list of CodeGraph
        The function's graph first (unless ``scope == "loop"``), then one per outermost loop
        in source order.
    """
    blocks = function.blocks
    reachable = _reachable(blocks)
    loops = natural_loops(blocks)
    defined = {i.identity: i for block in blocks for i in block.instructions}
    counted = trips or {}
    probabilities, origin = transition_probabilities(blocks, loops, counted)
    notes = []
    if origin == "static":
        unknown = [
            loop.line
            for loop in loops
            if loop.line not in counted and _trip_count(_latch(loop, blocks), defined) is None
        ]
        if unknown:
            notes.append(
                "static transition probabilities; loops without a known trip count "
                f"(lines {', '.join(str(line) for line in unknown)}) use the loop-branch "
                f"heuristic {LOOP_BRANCH_PROBABILITY}"
            )
    nodes: dict[int, Node] = {}
    for block in blocks:
        if block.index not in reachable:
            continue
        inner = _innermost(loops, block.index)
        depth = sum(1 for loop in loops if block.index in loop.blocks)
        reuse = reuse_histogram(block, inner, blocks, defined)
        nodes[block.index] = _node(block, depth, reuse, block.index)
    graphs = []
    if scope in ("all", "function"):
        edges = tuple(Edge(s, t, p) for (s, t), p in sorted(probabilities.items()) if s in nodes)
        graphs.append(
            CodeGraph(
                source,
                function.name,
                "function",
                function.line,
                tuple(nodes[i] for i in sorted(nodes)),
                edges,
                origin,
                tuple(notes),
            )
        )
    if scope in ("all", "loop"):
        outermost = [loop for loop in loops if loop.parent is None]
        outermost.sort(key=lambda loop: (loop.line or 0, loop.header))
        for loop in outermost:
            graphs.append(_loop_graph(loop, nodes, probabilities, source, function, origin, notes))
    return graphs


def _latch(loop: Loop, blocks: Sequence[IRBlock]) -> IRBlock:
    latches = [blocks[b] for b in loop.blocks if loop.header in blocks[b].successors]
    return max(latches, key=lambda block: block.index) if latches else blocks[loop.header]


def _loop_graph(
    loop: Loop,
    nodes: dict[int, Node],
    probabilities: dict[tuple[int, int], float],
    source: str,
    function: IRFunction,
    origin: str,
    notes: Iterable[str],
) -> CodeGraph:
    members = sorted(loop.blocks)
    renumber = {old: new for new, old in enumerate(members)}
    exit_id = len(members)
    inner = [replace(nodes[b], id=renumber[b]) for b in members]
    width = len(REUSE_BINS) + 1
    exit_node = Node(
        exit_id, "exit", None, (0,) * len(CATEGORIES), "other", 0, (0,) * width, "exit"
    )
    merged: dict[tuple[int, int], float] = {}
    for (s, t), p in probabilities.items():
        if s in loop.blocks:
            key = (renumber[s], renumber.get(t, exit_id))
            merged[key] = merged.get(key, 0.0) + p
    edges = tuple(Edge(s, t, p) for (s, t), p in sorted(merged.items()))
    return CodeGraph(
        source, function.name, "loop", loop.line, (*inner, exit_node), edges, origin, tuple(notes)
    )


def static_trip_counts(
    source: str | Path, flags: Sequence[str] = ()
) -> dict[tuple[str, int], float]:
    """Mean trip count per entry of every loop whose symbolic count is a number.

    Runs perfcast's static analysis (:func:`perfcast.static.analyze`, no named parameters, so
    macros take their values from ``flags`` or the source) and divides each loop's count per
    run by its enclosing region's (how often the loop is entered). A triangular inner loop gets
    its mean trip count. Keys are ``(function, line)``.
    """
    from perfcast.static import analyze

    report = analyze([source], [], flags)
    counts = {kernel.name: kernel.count for kernel in report.kernels}
    trips: dict[tuple[str, int], float] = {}
    for kernel in report.kernels:
        if kernel.kind != "loop" or kernel.count is None or kernel.parent is None:
            continue
        entries = counts.get(kernel.parent)
        if entries is None or kernel.count.free_symbols or entries.free_symbols:
            continue
        if float(entries) > 0 and float(kernel.count) > 0:
            trips[(kernel.function, kernel.line)] = float(kernel.count) / float(entries)
    return trips


def build_graphs(
    source: str | Path,
    *,
    function: str | None = None,
    loop: int | None = None,
    flags: Sequence[str] = (),
    scope: str = "all",
    ir_text: str | None = None,
    profile: Sequence[str] | None = None,
    counts: bool = False,
) -> list[CodeGraph]:
    """Compile a C file and build the hCFGs of its functions and outermost loops.

    Parameters
    ----------
    source : str or Path
        The C file.
    function : str, optional
        Only this function (an error naming the functions when it is not defined).
    loop : int, optional
        Only the outermost loop starting at this source line.
    flags : sequence of str
        Further clang flags.
    scope : {"all", "function", "loop"}
        Function graphs, loop graphs or both.
    ir_text : str, optional
        IR already compiled from ``source`` (with profile counts, say) instead of compiling.
    profile : sequence of str, optional
        Measure the transition probabilities: run the program (it needs ``main``) once with
        these arguments, instrumented, and take the branch counts
        (:func:`perfcast.static.llvm_ir.profiled_ir`).
    counts : bool
        Take loop trip counts from perfcast's symbolic loop counts (:func:`static_trip_counts`)
        where they are numbers, before the IR's constants and the heuristic.

    Returns
    -------
    list of CodeGraph
    """
    if ir_text is not None:
        text = ir_text
    elif profile is not None:
        text = profiled_ir(source, flags, profile)
    else:
        text = compile_to_ir(source, flags)
    functions = parse_ir(text, source)
    chosen = functions
    if function is not None:
        chosen = [f for f in functions if f.name == function]
        if not chosen:
            names = ", ".join(f.name for f in functions) or "none"
            raise InputError(
                f"no function {function!r} (defined: {names})",
                source,
                reason="unknown-function",
                value=function,
            )
    if loop is not None:
        scope = "loop"
    trips: dict[tuple[str, int], float] = {}
    if counts and profile is None:
        trips = static_trip_counts(source, flags)
    graphs = [
        g
        for f in chosen
        for g in function_graphs(
            f, str(source), scope, {line: t for (name, line), t in trips.items() if name == f.name}
        )
    ]
    if loop is not None:
        graphs = [g for g in graphs if g.line == loop]
        if not graphs:
            raise InputError(
                f"no outermost loop starts at line {loop}",
                source,
                loop,
                reason="unknown-loop",
                value=loop,
            )
    return graphs
