"""Code graphs, kernel matching and tuning reuse (Meliora)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perfcast.analyze.matching import Matches
    from perfcast.analyze.tuning import TuningResult, TuningSpace
    from perfcast.static.hcfg import CodeGraph


def code_graphs(
    source: str | Path,
    *,
    function: str | None = None,
    loop: int | None = None,
    flags: Sequence[str] = (),
    scope: str = "all",
    profile: Sequence[str] | None = None,
    counts: bool = False,
) -> list[CodeGraph]:
    """Hybrid control-flow graphs (hCFG) of a C file's functions and outermost loops.

    Parameters
    ----------
    source : str or Path
        The C file, compiled with clang to LLVM IR.
    function : str, optional
        Only this function.
    loop : int, optional
        Only the outermost loop starting at this line.
    flags : sequence of str
        Further clang flags (``-D``, ``-I``, ...).
    scope : {"all", "function", "loop"}
        Function graphs, loop graphs or both.
    profile : sequence of str, optional
        Measure the transition probabilities instead of estimating them: the file (with
        ``main``) is built instrumented and run once with these program arguments.
    counts : bool
        Take loop trip counts from perfcast's symbolic loop counts (``perfcast static``) where
        they are numbers (macros from ``flags``), before constants in the IR and the heuristic.

    Returns
    -------
    list of CodeGraph
        Each with ``to_dict()`` (JSON format ``perfcast-hcfg``) and ``to_dot()``.
    """
    from perfcast.static.hcfg import build_graphs

    if scope not in ("all", "function", "loop"):
        raise ValueError(f"scope: must be 'all', 'function' or 'loop', not {scope!r}")
    return build_graphs(
        source,
        function=function,
        loop=loop,
        flags=flags,
        scope=scope,
        profile=profile,
        counts=counts,
    )


def similar_kernels(
    query: str,
    corpus: Sequence[str | Path],
    *,
    top: int = 5,
    flags: Sequence[str] = (),
) -> Matches:
    """Rank the loops or functions of C files by the similarity of their hCFG to a query's.

    Parameters
    ----------
    query : str
        ``file.c``, ``file.c:function`` or ``file.c:function:line`` (an outermost loop).
    corpus : sequence of str or Path
        C files to search.
    top : int
        How many matches to return.
    flags : sequence of str
        Further clang flags.

    Returns
    -------
    Matches
        ``matches`` ranked by ``similarity`` in [0, 1]; ``to_dict()`` for JSON.
    """
    from perfcast.analyze.matching import similar

    return similar(query, corpus, top=top, flags=flags)


def load_tuning_space(path: str | Path) -> TuningSpace:
    """Read an autotuning search space: a TOML file of flags, macros, defines and measure.

    Parameters
    ----------
    path : str or Path
        The space file.

    Returns
    -------
    TuningSpace

    Raises
    ------
    InputError
        Naming the file, line and key of an unknown key or a bad value.
    """
    from perfcast.analyze.tuning import load_space

    return load_space(path)


def tune_kernel(
    source: str | Path,
    function: str,
    space: TuningSpace | str | Path,
    *,
    budget: int | None = None,
    strategy: str = "random",
    seed: int = 0,
    database: str | Path | None = None,
    warm_start: bool = False,
    neighbours: int = 3,
    flags: Sequence[str] = (),
) -> TuningResult:
    """Autotune a C kernel: compile and measure configurations, store them in a tuning database.

    Parameters
    ----------
    source : str or Path
        C program (with ``main``) containing the kernel.
    function : str
        The kernel function.
    space : TuningSpace or str or Path
        The search space, or its TOML file.
    budget : int, optional
        Evaluations at most (default: all for ``exhaustive``, else 20).
    strategy : {"exhaustive", "random", "model"}
        Search strategy.
    seed : int
        Seed of the random choices.
    database : str or Path, optional
        SQLite tuning database to read and extend.
    warm_start : bool
        First try the best configurations of the most similar kernels in the database, ranked
        by their similarity-weighted measurements (with ``strategy="model"`` the search then
        continues from that ranking corrected by this kernel's own results).
    neighbours : int
        Similar kernels a warm start draws from.
    flags : sequence of str
        clang flags for building the kernel's code graph.

    Returns
    -------
    TuningResult
        Evaluations, best configuration, evaluations needed to get within 5 % of the best.
    """
    from perfcast.analyze.tuning import load_space, tune

    chosen = load_space(space) if isinstance(space, str | Path) else space
    return tune(
        source,
        function,
        chosen,
        budget=budget,
        strategy=strategy,
        seed=seed,
        database=database,
        warm_start=warm_start,
        neighbours=neighbours,
        flags=flags,
    )
