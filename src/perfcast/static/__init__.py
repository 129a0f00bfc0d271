"""Static analysis of C sources: symbolic execution counts, parameter reach, similarity.

``analyze(sources, parameters, compile_args)`` parses the sources with clang and returns a
:class:`StaticReport` of every function and loop (kernel) with its count per program run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.static.report import StaticKernel, StaticReport, expression_text, parse_expression


def analyze(
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    functions: Sequence[str] | None = None,
    cache: Path | None = None,
) -> StaticReport:
    """Count every function and loop of C sources symbolically over the named parameters.

    Parameters
    ----------
    sources : sequence of str or Path
        The C files of one program.
    parameters : sequence of str
        Input parameter names (macros, globals, locals, arguments or struct members).
    compile_args : sequence of str
        Flags for clang (``-D``, ``-I``, ...).
    progress : callable, optional
        Called as ``progress(counted, total)`` after each loop or function is counted.
    functions : sequence of str, optional
        Analyse only these functions (and walk their callers); the report holds their kernels.
    cache : Path, optional
        Directory of cached reports: an unchanged input is read from there, not re-analysed.

    Returns
    -------
    StaticReport

    Notes
    -----
    Imported lazily so that ``perfcast.static`` loads without libclang; see
    :func:`perfcast.static.analysis.analyze` for the details.
    """
    try:
        from perfcast.static.analysis import analyze as _analyze
    except ImportError as error:
        raise InputError(
            f"static analysis needs libclang ({error}): pip install 'perfcast[static]'"
        ) from error
    return _analyze(sources, parameters, compile_args, progress, functions, cache)


__all__ = ["StaticKernel", "StaticReport", "analyze", "expression_text", "parse_expression"]
