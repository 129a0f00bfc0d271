"""A corpus of classic loop kernels and a generator of semantically equal variants (issue 18).

Each kernel is written once as a small loop-nest description (:class:`Kernel` of :class:`Loop`
and :class:`Statement` templates whose identifiers are ``{placeholders}``) and printed as a
complete C program: the kernel function (``noinline``, so the tuner can count its instructions),
and a ``main`` that allocates and fills the arrays deterministically, calls the kernel and
prints a checksum of every array. Innermost loops carry ``#pragma clang loop
unroll_count(UNROLL)`` (macro ``UNROLL``, default 1) and the size is the macro ``N``, so the
autotuner can search unroll factors and sizes with ``-D``. A variant applies
transformations that keep the result, and prints a program with the same output:

``rename``      every array, scalar, loop variable and the size get new names
``reorder``     independent statements of a loop body change places (loops marked ``split``)
``unroll``      the innermost loop runs ``u`` iterations per trip, with a remainder loop
``strip``       a loop is strip-mined into blocks of ``t`` iterations
``interchange`` a loop and its only inner loop swap (loops marked ``interchange``)
``tile``        strip-mine the inner loop of an interchangeable pair and move the block loop out
``split``       a loop with independent statements becomes one loop per statement (fission)
``fuse``        adjacent top-level loops marked fusable become one loop

Statement order inside each array element's computation never changes, so variants print the
same checksum bit for bit. The kernels and variants are perfcast's own; none is copied.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass(frozen=True)
class Statement:
    """One C statement (or declaration) with ``{name}`` placeholders for every identifier.

    ``block`` prints it inside braces (the copies of an unrolled body each get their own scope).
    """

    text: str
    block: bool = False


@dataclass(frozen=True)
class Loop:
    """``for (var = lower; var < upper; var++) body`` with what may legally be done to it."""

    var: str
    lower: str
    upper: str
    body: tuple[Node, ...]
    interchange: bool = False
    split: bool = False
    step: int = 1
    declared: bool = True


@dataclass(frozen=True)
class Group:
    """Nodes printed inside one pair of braces (an unrolled loop with its remainder)."""

    body: tuple[Loop | Statement | Group, ...]


Node = Loop | Statement | Group


@dataclass(frozen=True)
class Kernel:
    """A kernel: name, arrays (placeholder -> C type, element count), body, setup in ``main``."""

    name: str
    family: str
    arrays: dict[str, tuple[str, str]]
    body: tuple[Node, ...]
    fusable: tuple[int, ...] = ()
    setup: str = ""
    names: dict[str, str] = field(default_factory=dict)


def _l(var: str, lower: str, upper: str, *body: Node, **flags: bool) -> Loop:
    return Loop(var, lower, upper, tuple(body), **flags)


def _s(text: str) -> Statement:
    return Statement(text)


SQUARE = "{n} * {n}"
UNROLL_PRAGMA = "clang loop unroll_count(n)"

KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "matmul",
        "dense linear algebra",
        {"A": ("double", SQUARE), "B": ("double", SQUARE), "C": ("double", SQUARE)},
        (
            _l(
                "i",
                "0",
                "{n}",
                _l(
                    "j",
                    "0",
                    "{n}",
                    _l(
                        "k",
                        "0",
                        "{n}",
                        _s("{C}[{i} * {n} + {j}] += {A}[{i} * {n} + {k}] * {B}[{k} * {n} + {j}];"),
                    ),
                    interchange=True,
                ),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "gemv",
        "dense linear algebra",
        {"A": ("double", SQUARE), "x": ("double", "{n}"), "y": ("double", "{n}")},
        (
            _l(
                "i",
                "0",
                "{n}",
                _l("j", "0", "{n}", _s("{y}[{i}] += {A}[{i} * {n} + {j}] * {x}[{j}];")),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "mvt",
        "dense linear algebra",
        {
            "A": ("double", SQUARE),
            "x1": ("double", "{n}"),
            "x2": ("double", "{n}"),
            "y1": ("double", "{n}"),
            "y2": ("double", "{n}"),
        },
        (
            _l(
                "i",
                "0",
                "{n}",
                _l(
                    "j",
                    "0",
                    "{n}",
                    _s("{x1}[{i}] += {A}[{i} * {n} + {j}] * {y1}[{j}];"),
                    _s("{x2}[{i}] += {A}[{j} * {n} + {i}] * {y2}[{j}];"),
                    split=True,
                ),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "bicg",
        "solvers",
        {
            "A": ("double", SQUARE),
            "s": ("double", "{n}"),
            "q": ("double", "{n}"),
            "p": ("double", "{n}"),
            "r": ("double", "{n}"),
        },
        (
            _l(
                "i",
                "0",
                "{n}",
                _l(
                    "j",
                    "0",
                    "{n}",
                    _s("{s}[{j}] += {r}[{i}] * {A}[{i} * {n} + {j}];"),
                    _s("{q}[{i}] += {A}[{i} * {n} + {j}] * {p}[{j}];"),
                    split=True,
                ),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "trisolve",
        "solvers",
        {"L": ("double", SQUARE), "b": ("double", "{n}"), "x": ("double", "{n}")},
        (
            _l(
                "i",
                "0",
                "{n}",
                _s("double {t} = {b}[{i}];"),
                _l("j", "0", "{i}", _s("{t} -= {L}[{i} * {n} + {j}] * {x}[{j}];")),
                _s("{x}[{i}] = {t} / {L}[{i} * {n} + {i}];"),
            ),
        ),
    ),
    Kernel(
        "jacobi1d",
        "stencils",
        {"a": ("double", "{n}"), "b": ("double", "{n}")},
        (
            _l(
                "i",
                "1",
                "{n} - 1",
                _s("{b}[{i}] = 0.33333 * ({a}[{i} - 1] + {a}[{i}] + {a}[{i} + 1]);"),
            ),
        ),
    ),
    Kernel(
        "jacobi2d",
        "stencils",
        {"a": ("double", SQUARE), "b": ("double", SQUARE)},
        (
            _l(
                "i",
                "1",
                "{n} - 1",
                _l(
                    "j",
                    "1",
                    "{n} - 1",
                    _s(
                        "{b}[{i} * {n} + {j}] = 0.2 * ({a}[{i} * {n} + {j}]"
                        " + {a}[{i} * {n} + {j} - 1] + {a}[{i} * {n} + {j} + 1]"
                        " + {a}[({i} - 1) * {n} + {j}]"
                        " + {a}[({i} + 1) * {n} + {j}]);"
                    ),
                ),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "heat3d",
        "stencils",
        {"a": ("double", "{n} * {n} * {n}"), "b": ("double", "{n} * {n} * {n}")},
        (
            _l(
                "i",
                "1",
                "{n} - 1",
                _l(
                    "j",
                    "1",
                    "{n} - 1",
                    _l(
                        "k",
                        "1",
                        "{n} - 1",
                        _s(
                            "{b}[({i} * {n} + {j}) * {n} + {k}] = 0.125 * ("
                            "{a}[(({i} - 1) * {n} + {j}) * {n} + {k}]"
                            " + {a}[(({i} + 1) * {n} + {j}) * {n} + {k}]"
                            " + {a}[({i} * {n} + {j} - 1) * {n} + {k}]"
                            " + {a}[({i} * {n} + {j} + 1) * {n} + {k}]"
                            " + {a}[({i} * {n} + {j}) * {n} + {k} - 1]"
                            " + {a}[({i} * {n} + {j}) * {n} + {k} + 1]"
                            " - 6.0 * {a}[({i} * {n} + {j}) * {n} + {k}]);"
                        ),
                    ),
                    interchange=True,
                ),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "dot",
        "reductions",
        {"x": ("double", "{n}"), "y": ("double", "{n}"), "out": ("double", "1")},
        (
            _s("double {acc} = 0.0;"),
            _l("i", "0", "{n}", _s("{acc} += {x}[{i}] * {y}[{i}];")),
            _s("{out}[0] = {acc};"),
        ),
    ),
    Kernel(
        "variance",
        "statistics",
        {"x": ("double", "{n}"), "out": ("double", "2")},
        (
            _s("double {sum} = 0.0;"),
            _l("i", "0", "{n}", _s("{sum} += {x}[{i}];")),
            _s("double {mean} = {sum} / {n};"),
            _s("double {sq} = 0.0;"),
            _l("j", "0", "{n}", _s("{sq} += ({x}[{j}] - {mean}) * ({x}[{j}] - {mean});")),
            _s("{out}[0] = {mean};"),
            _s("{out}[1] = {sq} / ({n} - 1);"),
        ),
    ),
    Kernel(
        "covariance",
        "statistics",
        {"D": ("double", SQUARE), "m": ("double", "{n}"), "C": ("double", SQUARE)},
        (
            _l(
                "j",
                "0",
                "{n}",
                _l("k", "0", "{n}", _s("{m}[{j}] += {D}[{k} * {n} + {j}];")),
                _s("{m}[{j}] /= {n};"),
            ),
            _l(
                "i",
                "0",
                "{n}",
                _l(
                    "j2",
                    "0",
                    "{n}",
                    _l(
                        "k2",
                        "0",
                        "{n}",
                        _s(
                            "{C}[{i} * {n} + {j2}] += ({D}[{k2} * {n} + {i}] - {m}[{i}])"
                            " * ({D}[{k2} * {n} + {j2}] - {m}[{j2}]);"
                        ),
                    ),
                    interchange=True,
                ),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "transpose",
        "transposes",
        {"A": ("double", SQUARE), "B": ("double", SQUARE)},
        (
            _l(
                "i",
                "0",
                "{n}",
                _l("j", "0", "{n}", _s("{B}[{j} * {n} + {i}] = {A}[{i} * {n} + {j}];")),
                interchange=True,
            ),
        ),
    ),
    Kernel(
        "spmv",
        "sparse",
        {
            "rowptr": ("int", "{n} + 1"),
            "col": ("int", "3 * {n}"),
            "val": ("double", "3 * {n}"),
            "x": ("double", "{n}"),
            "y": ("double", "{n}"),
        },
        (
            _l(
                "i",
                "0",
                "{n}",
                _s("double {acc} = 0.0;"),
                _l(
                    "k",
                    "{rowptr}[{i}]",
                    "{rowptr}[{i} + 1]",
                    _s("{acc} += {val}[{k}] * {x}[{col}[{k}]];"),
                ),
                _s("{y}[{i}] = {acc};"),
            ),
        ),
        setup=(
            "for (int r = 0; r <= {n}; r++) {rowptr}[r] = 3 * r;\n"
            "  for (int e = 0; e < 3 * {n}; e++) {col}[e] = (e / 3 + e % 3 * 7) % {n};"
        ),
    ),
    Kernel(
        "axpy2",
        "dense linear algebra",
        {"x": ("double", "{n}"), "z": ("double", "{n}"), "y": ("double", "{n}")},
        (
            _l(
                "i",
                "0",
                "{n}",
                _s("{y}[{i}] = {y}[{i}] + 1.5 * {x}[{i}];"),
                _s("{z}[{i}] = {z}[{i}] - 0.5 * {x}[{i}];"),
                split=True,
            ),
        ),
    ),
    Kernel(
        "prefix",
        "reductions",
        {"a": ("double", "{n}"), "s": ("double", "{n}")},
        (
            _s("{s}[0] = {a}[0];"),
            _l("i", "1", "{n}", _s("{s}[{i}] = {s}[{i} - 1] + {a}[{i}];")),
        ),
    ),
    Kernel(
        "scale_shift",
        "stencils",
        {"a": ("double", "{n}"), "b": ("double", "{n}"), "c": ("double", "{n}")},
        (
            _l("i", "0", "{n}", _s("{b}[{i}] = 2.0 * {a}[{i}];")),
            _l("i2", "0", "{n}", _s("{c}[{i2}] = {a}[{i2}] + 1.0;")),
        ),
        fusable=(0,),
    ),
)
"""The kernels, at least one per family the issue names."""


def kernel(name: str) -> Kernel:
    """The kernel called ``name``."""
    return next(k for k in KERNELS if k.name == name)


# ---- printing C --------------------------------------------------------------------------------


def _placeholders(kernel: Kernel) -> set[str]:
    import string

    found = {"n"} | set(kernel.arrays)

    def visit(nodes: tuple[Node, ...]) -> None:
        for node in nodes:
            if isinstance(node, Group):
                visit(node.body)
                continue
            texts = [node.text] if isinstance(node, Statement) else [node.lower, node.upper]
            for text in texts:
                found.update(f for _, f, _, _ in string.Formatter().parse(text) if f)
            if isinstance(node, Loop):
                found.add(node.var)
                visit(node.body)

    visit(kernel.body)
    return found


def _names(kernel: Kernel) -> dict[str, str]:
    names = {p: p for p in _placeholders(kernel)}
    names.update(kernel.names)
    return names


def _emit(nodes: tuple[Node, ...], names: dict[str, str], indent: int) -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    for node in nodes:
        if isinstance(node, Statement):
            text = node.text.format(**names)
            lines.append(pad + ("{ " + text + " }" if node.block else text))
            continue
        if isinstance(node, Group):
            lines.append(pad + "{")
            lines.extend(_emit(node.body, names, indent + 1))
            lines.append(pad + "}")
            continue
        var = names[node.var]
        lower, upper = node.lower.format(**names), node.upper.format(**names)
        step = f"{var} += {node.step}" if node.step > 1 else f"{var}++"
        if node.declared:
            head = f"for (int {var} = {lower}; {var} < {upper}; {step})"
            if not any(isinstance(inner, Loop | Group) for inner in node.body):
                lines.append(pad + "PERFCAST_UNROLL(UNROLL)")
        elif node.step > 1:
            head = f"for (; {var} + {node.step - 1} < {upper}; {var} += {node.step})"
        else:
            head = f"for (; {var} < {upper}; {var}++)"
        lines.append(f"{pad}{head} {{")
        lines.extend(_emit(node.body, names, indent + 1))
        lines.append(pad + "}")
    return lines


def c_program(
    kernel: Kernel,
    size: int = 48,
    *,
    body: list[str] | None = None,
    unroll_pragma: list[str] | None = None,
) -> str:
    """The complete C program of a kernel (or variant): function, ``main``, checksum.

    ``body`` replaces the printed loop nest (the lines of the function body) and
    ``unroll_pragma`` the definition of the ``PERFCAST_UNROLL`` macro (:func:`tunable_program`).
    """
    names = _names(kernel)
    n = names["n"]
    parameters = ", ".join(
        f"{ctype} *restrict {names[a]}" for a, (ctype, _) in kernel.arrays.items()
    )
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#ifndef N",
        f"#define N {size}",
        "#endif",
        "#ifndef UNROLL",
        "#define UNROLL 1",
        "#endif",
        "#define PERFCAST_PRAGMA(x) _Pragma(#x)",
        *(unroll_pragma or [f"#define PERFCAST_UNROLL(n) PERFCAST_PRAGMA({UNROLL_PRAGMA})"]),
        "",
        f"__attribute__((noinline)) void {kernel.name}(int {n}, {parameters}) {{",
        *(_emit(kernel.body, names, 1) if body is None else body),
        "}",
        "",
        "int main(void) {",
        f"  int {n} = N;",
    ]
    for index, (array, (ctype, count)) in enumerate(kernel.arrays.items()):
        name, size_text = names[array], count.format(**names)
        lines.append(f"  {ctype} *{name} = malloc(sizeof({ctype}) * ({size_text}));")
        lines.append(
            f"  for (long e = 0; e < {size_text}; e++) {name}[e] = ({ctype})"
            f"(1.0 + (double)((e * 7 + {index} * 3) % 13) / 13.0);"
        )
    if kernel.setup:
        lines.append("  " + kernel.setup.format(**names))
    arguments = ", ".join(names[a] for a in kernel.arrays)
    lines.append(f"  {kernel.name}({n}, {arguments});")
    lines.append("  double check = 0.0;")
    for array, (_, count) in kernel.arrays.items():
        name, size_text = names[array], count.format(**names)
        lines.append(
            f"  for (long e = 0; e < {size_text}; e++)"
            f" check += (double){name}[e] * (double)(e % 7 + 1);"
        )
        lines.append(f"  free({name});")
    lines += ['  printf("%.15e\\n", check);', "  return 0;", "}"]
    return "\n".join(lines) + "\n"


# ---- transformations ---------------------------------------------------------------------------


def rename(kernel: Kernel, rng: random.Random) -> Kernel:
    """New names for every identifier (the function's own name stays)."""
    stems = ("v", "tmp", "arr", "idx", "buf", "q", "w", "data", "elem", "it")
    names = {
        p: f"{rng.choice(stems)}{index}_{rng.randrange(1000)}"
        for index, p in enumerate(sorted(_placeholders(kernel)))
    }
    return replace(kernel, names=names)


def _map_loops(nodes: tuple[Node, ...], act: Callable[[Loop], list[Node]]) -> tuple[Node, ...]:
    """Apply ``act`` to every loop, inner loops first; it returns the nodes replacing the loop."""
    result: list[Node] = []
    for node in nodes:
        if isinstance(node, Loop):
            result.extend(act(replace(node, body=_map_loops(node.body, act))))
        elif isinstance(node, Group):
            result.append(Group(_map_loops(node.body, act)))
        else:
            result.append(node)
    return tuple(result)


def reorder(kernel: Kernel, rng: random.Random) -> Kernel:
    """Reverse the independent statements of loops marked ``split``."""

    def act(loop: Loop) -> list[Node]:
        return [replace(loop, body=tuple(reversed(loop.body)))] if loop.split else [loop]

    return replace(kernel, body=_map_loops(kernel.body, act))


def split(kernel: Kernel, rng: random.Random) -> Kernel:
    """Loop fission of loops marked ``split``: one loop per independent statement."""

    def act(loop: Loop) -> list[Node]:
        if not loop.split or len(loop.body) < 2:
            return [loop]
        return [replace(loop, body=(part,), split=False) for part in loop.body]

    return replace(kernel, body=_map_loops(kernel.body, act))


def fuse(kernel: Kernel, rng: random.Random) -> Kernel:
    """Fuse each fusable top-level loop with the next one (same bounds, independent bodies)."""
    body = list(kernel.body)
    for index in sorted(kernel.fusable, reverse=True):
        first, second = body[index], body[index + 1]
        assert isinstance(first, Loop) and isinstance(second, Loop)
        old, new = "{" + second.var + "}", "{" + first.var + "}"
        moved = tuple(
            Statement(node.text.replace(old, new))
            for node in second.body
            if isinstance(node, Statement)
        )
        body[index : index + 2] = [replace(first, body=first.body + moved)]
    return replace(kernel, body=tuple(body), fusable=())


def interchange(kernel: Kernel, rng: random.Random) -> Kernel:
    """Swap the first interchangeable loop (outermost first) with its only inner loop."""
    return replace(kernel, body=_interchange_first(kernel.body)[0])


def _interchange_first(nodes: tuple[Node, ...]) -> tuple[tuple[Node, ...], bool]:
    result: list[Node] = []
    done = False
    for node in nodes:
        if not done and isinstance(node, Loop):
            if node.interchange and len(node.body) == 1 and isinstance(node.body[0], Loop):
                inner = node.body[0]
                outer = replace(node, body=inner.body, interchange=False)
                result.append(replace(inner, body=(outer,), interchange=False))
                done = True
                continue
            body, done = _interchange_first(node.body)
            result.append(replace(node, body=body))
            continue
        result.append(node)
    return tuple(result), done


def strip(kernel: Kernel, rng: random.Random) -> Kernel:
    """Strip-mine every innermost loop into blocks of 4, 8 or 16 iterations."""
    size = rng.choice((4, 8, 16))

    def act(loop: Loop) -> list[Node]:
        if any(isinstance(node, Loop) for node in loop.body) or not loop.declared:
            return [loop]
        return [_strip_mined(loop, size)]

    return replace(kernel, body=_map_loops(kernel.body, act))


def _strip_mined(loop: Loop, size: int) -> Loop:
    block = loop.var + "_blk"
    upper = f"({{{block}}} + {size} < {loop.upper} ? {{{block}}} + {size} : {loop.upper})"
    inner = replace(loop, lower="{" + block + "}", upper=upper)
    return Loop(block, loop.lower, loop.upper, (inner,), step=size, declared=True)


def tile(kernel: Kernel, rng: random.Random) -> Kernel:
    """Tile the first interchangeable pair: strip-mine the inner loop, move its block loop out."""
    size = rng.choice((4, 8, 16))
    return replace(kernel, body=_tile_first(kernel.body, size)[0])


def _tile_first(nodes: tuple[Node, ...], size: int) -> tuple[tuple[Node, ...], bool]:
    result: list[Node] = []
    done = False
    for node in nodes:
        if not done and isinstance(node, Loop):
            if node.interchange and len(node.body) == 1 and isinstance(node.body[0], Loop):
                blocked = _strip_mined(node.body[0], size)
                inner_loop = blocked.body[0]
                assert isinstance(inner_loop, Loop)
                result.append(
                    replace(blocked, body=(replace(node, body=(inner_loop,), interchange=False),))
                )
                done = True
                continue
            body, done = _tile_first(node.body, size)
            result.append(replace(node, body=body))
            continue
        result.append(node)
    return tuple(result), done


def unroll(kernel: Kernel, rng: random.Random) -> Kernel:
    """Unroll every innermost loop by 2, 4 or 8, with a remainder loop."""
    factor = rng.choice((2, 4, 8))

    def act(loop: Loop) -> list[Node]:
        if any(not isinstance(node, Statement) for node in loop.body) or not loop.declared:
            return [loop]
        var = "{" + loop.var + "}"
        copies = tuple(
            Statement(node.text.replace(var, f"({var} + {offset})"), block=True)
            for offset in range(factor)
            for node in loop.body
            if isinstance(node, Statement)
        )
        unrolled = replace(loop, body=copies, step=factor, declared=False)
        rest = replace(loop, declared=False)
        return [Group((Statement(f"int {var} = {loop.lower};"), unrolled, rest))]

    return replace(kernel, body=_map_loops(kernel.body, act))


TRANSFORMATIONS: dict[str, Callable[[Kernel, random.Random], Kernel]] = {
    "reorder": reorder,
    "split": split,
    "fuse": fuse,
    "interchange": interchange,
    "tile": tile,
    "strip": strip,
    "unroll": unroll,
}
"""The transformations a variant draws from (``rename`` is always applied)."""


def variant(kernel: Kernel, seed: int) -> tuple[Kernel, tuple[str, ...]]:
    """A semantically equal variant of ``kernel`` and the transformations applied.

    One to three transformations, drawn by ``seed``, are applied in a legal order (fission and
    fusion before interchange and tiling, unrolling last), then every identifier is renamed.
    """
    rng = random.Random(seed)
    order = ("fuse", "split", "reorder", "interchange", "tile", "strip", "unroll")
    count = rng.randint(1, 3)
    chosen = sorted(rng.sample(order, count), key=order.index)
    if "tile" in chosen and "strip" in chosen:
        chosen.remove("strip")
    for name in chosen:
        kernel = TRANSFORMATIONS[name](kernel, rng)
    return rename(kernel, rng), tuple(chosen)


def write_program(kernel: Kernel, folder: str | Path, stem: str | None = None) -> Path:
    """Write the kernel's C program to ``folder/stem.c`` (stem defaults to the kernel name)."""
    path = Path(folder) / f"{stem or kernel.name}.c"
    path.write_text(c_program(kernel))
    return path


# ---- tunable programs (search-saving benchmark) ------------------------------------------------

TILE_SIZES: tuple[int, ...] = (16,)
"""Tile sizes of the ``TILE`` macro (0, no tiling, is always a choice)."""


def _interchangeable(nodes: tuple[Node, ...]) -> int:
    count = 0
    for node in nodes:
        if isinstance(node, Loop):
            single = len(node.body) == 1 and isinstance(node.body[0], Loop)
            count += node.interchange and single
            count += _interchangeable(node.body)
        elif isinstance(node, Group):
            count += _interchangeable(node.body)
    return count


def _interchange_nth(nodes: tuple[Node, ...], which: int) -> tuple[tuple[Node, ...], int]:
    """Swap the ``which``-th interchangeable loop (pre-order, from 0) with its inner loop.

    Both loops stay marked interchangeable, so a tiling can still find the pair. Returns the
    nodes and how many interchangeable loops were passed (to continue the count).
    """
    result: list[Node] = []
    seen = 0
    for node in nodes:
        if isinstance(node, Loop):
            single = len(node.body) == 1 and isinstance(node.body[0], Loop)
            if node.interchange and single:
                if seen == which:
                    inner = node.body[0]
                    assert isinstance(inner, Loop)
                    outer = replace(node, body=inner.body)
                    result.append(replace(inner, body=(outer,), interchange=True))
                    seen = which + 1 + _interchangeable(inner.body)
                    continue
                seen += 1
            body, passed = _interchange_nth(node.body, which - seen)
            seen += passed
            result.append(replace(node, body=body))
            continue
        result.append(node)
    return tuple(result), seen


def code_parameters(kernel: Kernel) -> dict[str, tuple[int, ...]]:
    """The code-variant macros the kernel allows and their values (first = the original code).

    ``ORDER`` k > 0 interchanges the k-th interchangeable loop with its inner loop, ``TILE``
    t > 0 tiles the first interchangeable pair with blocks of t (after the interchange),
    ``FISSION`` splits loops with independent statements, ``FUSION`` fuses fusable loops;
    ``INTERLEAVE`` is the vectorizer's interleave count of every innermost loop (all kernels).
    """
    parameters: dict[str, tuple[int, ...]] = {}
    orders = _interchangeable(kernel.body)
    if orders:
        parameters["ORDER"] = tuple(range(orders + 1))
        parameters["TILE"] = (0, *TILE_SIZES)
    if not orders and _has_split(kernel.body):
        parameters["FISSION"] = (0, 1)
    if kernel.fusable:
        parameters["FUSION"] = (0, 1)
    parameters["INTERLEAVE"] = (1, 4)
    return parameters


def _has_split(nodes: tuple[Node, ...]) -> bool:
    return any(
        isinstance(node, Loop) and ((node.split and len(node.body) > 1) or _has_split(node.body))
        for node in nodes
    )


def code_variant(kernel: Kernel, choice: dict[str, int]) -> Kernel:
    """The kernel with the code-variant macros of :func:`code_parameters` set to ``choice``."""
    rng = random.Random(0)  # the transformations used here draw nothing
    if choice.get("FUSION"):
        kernel = fuse(kernel, rng)
    if choice.get("FISSION"):
        kernel = split(kernel, rng)
    if choice.get("ORDER"):
        kernel = replace(kernel, body=_interchange_nth(kernel.body, choice["ORDER"] - 1)[0])
    if choice.get("TILE"):
        kernel = replace(kernel, body=_tile_first(kernel.body, choice["TILE"])[0])
    return kernel


def working_size(kernel: Kernel, budget: int = 192 * 1024) -> int:
    """The largest N of a fixed ladder whose arrays take at most ``budget`` bytes.

    Above a 32 KiB L1 data cache, so loop order and tiling change the simulated misses, and
    small enough for callgrind to run every configuration of the space in seconds.
    """
    ladder = (16, 20, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
    best = ladder[0]
    for n in ladder:
        total = 0
        for ctype, count in kernel.arrays.values():
            elements = eval(count.format(n=n), {"__builtins__": {}})  # noqa: S307 - our own text
            total += (4 if ctype == "int" else 8) * elements
        if total <= budget:
            best = n
    return best


def tunable_program(kernel: Kernel) -> str:
    """The kernel's C program with every code variant selectable by macros.

    The function body is one ``#if``/``#elif`` branch per combination of
    :func:`code_parameters` (defaults: the original code), innermost loops carry
    ``unroll_count(UNROLL)`` and ``interleave_count(INTERLEAVE)``, and ``N`` defaults to
    :func:`working_size`.
    """
    parameters = code_parameters(kernel)
    defaults = [f"#ifndef {name}\n#define {name} {values[0]}\n#endif" for name, values in
                parameters.items()]  # fmt: skip
    body: list[str] = []
    code = {k: v for k, v in parameters.items() if k != "INTERLEAVE"}
    for index, values in enumerate(itertools.product(*code.values())):
        choice = dict(zip(code, values, strict=True))
        test = " && ".join(f"{k} == {v}" for k, v in choice.items()) or "1"
        body.append(f"#{'if' if index == 0 else 'elif'} {test}")
        changed = code_variant(kernel, choice)
        body.extend(_emit(changed.body, _names(changed), 1))
    body.append("#else\n#error unknown code variant\n#endif")
    pragma = [
        *defaults,
        "#define PERFCAST_UNROLL(n) "
        "PERFCAST_PRAGMA(clang loop unroll_count(n) interleave_count(INTERLEAVE))",
    ]
    return c_program(kernel, working_size(kernel), body=body, unroll_pragma=pragma)
