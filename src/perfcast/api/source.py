"""Static analysis of source code: loop counts and instruction-mix models."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core import progress as progress_bars
from perfcast.core.collector import collector_paused
from perfcast.core.errors import InputError, WorkError
from perfcast.core.progress import ProgressBar

if TYPE_CHECKING:
    from perfcast.static.binary import Binary
    from perfcast.static.callgrind import CallgrindProfile
    from perfcast.static.instruction_mix import InstructionMix
    from perfcast.static.report import StaticReport


def build_flags(kind: str, *, functions: bool = False) -> list[str]:
    """How to build a program with perfcast's region library.

    Parameters
    ----------
    kind : {"compile", "link", "fortran", "directory"}
        Compiler flags; the library source and libraries to link; the Fortran module's source;
        the directory of the library's sources.
    functions : bool
        With ``compile``: also record every function (``-finstrument-functions``).

    Raises
    ------
    ValueError
        For another ``kind``, or ``functions`` with a kind other than ``compile``.
    """
    from perfcast.measure import instrument

    if functions and kind != "compile":
        raise ValueError(f"functions: only with kind 'compile', not {kind!r}")
    if kind == "compile":
        return instrument.compile_flags(functions=functions)
    if kind == "link":
        return instrument.link_arguments()
    if kind == "fortran":
        return [str(instrument.fortran_module())]
    if kind == "directory":
        return [str(instrument.library_dir())]
    raise ValueError(f"kind: must be 'compile', 'link', 'fortran' or 'directory', not {kind!r}")


def analyze_source(
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str] = (),
    *,
    progress: bool = False,
    values: Mapping[str, float] | None = None,
    functions: Sequence[str] | None = None,
    cache: bool | str | Path = False,
) -> StaticReport:
    """Count every function and loop of C sources symbolically over the named parameters.

    Parameters
    ----------
    sources : sequence of str or Path
        The C files of one program.
    parameters : sequence of str
        Source names of the input parameters (macros, globals, locals, arguments, fields).
    compile_args : sequence of str
        Flags for clang (``-D``, ``-I``, ...).
    progress : bool
        Show a progress bar of the loops and functions counted on standard error, when it is
        a terminal and the counting takes more than a second.
    values : mapping of str to float, optional
        Parameters fixed at a value: analysed like the others, then their values are put
        into every count (:meth:`StaticReport.with_values`).
    functions : sequence of str, optional
        Analyse only these functions, lazily: the sources are parsed once, only these
        functions and their callers are walked, and the report holds these functions'
        kernels alone (with the counts the full analysis gives them). When None, the
        report holds every function of the sources and every function of an included
        header that they call (directly or through others); the other functions of headers
        (Python.h's inline functions, say) never run in the program and are left out.
    cache : bool, str or Path
        Cache of reports keyed by the content of the sources and every header they include,
        the flags, parameters, functions and the analysis code: True for the default
        directory (``$PERFCAST_CACHE_DIR``, else ``~/.cache/perfcast/static``), a path for
        another one, False (default) for none. A second run on unchanged input reads the
        report instead of analysing again.

    Returns
    -------
    StaticReport
        Pass it to :func:`fit` as ``report=`` with ``modeler="hybrid"``.

    Raises
    ------
    InputError
        When a source cannot be parsed, a parameter name occurs in none of the sources
        (reason ``unknown-parameter``, with the closest names), or a name of ``functions``
        is defined in none of them.
    """
    with collector_paused():  # the first call imports the analysis, sympy with it
        from perfcast.static import analyze
        from perfcast.static.parameter_domain import check_parameter_values

    fixed = dict(values or {})
    check_parameter_values(fixed, "fixed parameters")  # before the analysis, not after it
    names = list(parameters) + [name for name in fixed if name not in parameters]
    directory = None
    if cache is True:
        from perfcast.static.cache import default_directory

        directory = default_directory()
    elif cache is not False:
        directory = Path(cache)
    report = _analyze_with_progress(
        analyze, sources, names, compile_args, progress, functions, directory
    )
    return report.with_values(fixed) if fixed else report


def _analyze_with_progress(
    analyze: Callable[..., StaticReport],
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str],
    progress: bool,
    functions: Sequence[str] | None = None,
    cache: Path | None = None,
) -> StaticReport:
    if not progress:
        return analyze(sources, parameters, compile_args, None, functions, cache)
    bars: list[ProgressBar] = []

    def advance(counted: int, total: int) -> None:
        if not bars:
            bars.append(
                ProgressBar(total, unit="loops and functions", delay=progress_bars.API_DELAY)
            )
        bars[0].advance()

    try:
        return analyze(sources, parameters, compile_args, advance, functions, cache)
    finally:
        if bars:
            bars[0].close()


def load_static_report(path: str | Path) -> StaticReport:
    """Read a static report written by ``perfcast static --format json`` (or
    ``StaticReport.to_dict``).

    Raises
    ------
    InputError
        When the file cannot be read or is not such a report.
    """
    from perfcast.static.report import read_static_report

    return read_static_report(Path(path))


def instruction_mix(
    binary: str | Path,
    report: StaticReport,
    parameters: Sequence[str] = (),
    attribution: str = "cfg",
    *,
    profiles: Sequence[tuple[Mapping[str, float], str | Path]] = (),
    values: Mapping[str, float] | None = None,
) -> InstructionMix:
    """Parametric instruction counts per function and category of an x86-64 ELF binary (Mira).

    Parameters
    ----------
    binary : str or Path
        The executable, built with ``-g`` from the sources ``report`` analyzed.
    report : StaticReport
        From :func:`analyze_source` or :func:`load_static_report`.
    parameters : sequence of str
        Parameter names, in the order the models take them.
    attribution : {"cfg", "line"}
        How instructions are mapped to loops: by the control-flow graph or by source line.
    profiles : sequence of (mapping of str to float, path)
        Callgrind outputs (``valgrind --tool=callgrind --dump-instr=yes``) of runs of the
        binary, each with the parameter values of its run. Where a static count stops (a loop
        bounded by data, a function called through a pointer), the measured counts of the
        machine loop's blocks stand in: from one run, per entry of the loop times its static
        entries where the source shows the count per entry constant, else constants of the run
        (a ``warning:`` note says the model holds at the run's values only); from several runs,
        models over the parameters fitted with the ``pmnf`` modeler (counts equal in every run
        stay constants). The functions' notes say which counts were measured.
    values : mapping of str to float, optional
        Parameter values the program was built with (its ``-D`` flags), besides those the
        report found (``StaticReport.build_values``: macros of a plain number). The predicted
        block counts are checked for flow conservation at the profiled runs' values, else at
        these, and a function whose counts no run of its machine code can produce is undefined
        with the reason (with profiles: those blocks measured). A function whose counts need a
        value neither gives is checked at stand-in values, and a failure is a note.

    Returns
    -------
    InstructionMix
        Render it with :func:`render` (``text``, ``json`` or ``python``).
    """
    from perfcast.static.binary import read_binary
    from perfcast.static.callgrind import read_callgrind
    from perfcast.static.instruction_mix import instruction_mix as count_mix
    from perfcast.static.parameter_domain import check_parameter_values

    for point, path in profiles:
        check_parameter_values(point, f"the run of {path}")
    executable = read_binary(binary)
    built = {**getattr(report, "build_values", {}), **(values or {})}
    if not profiles:
        mix = count_mix(executable, report, parameters, attribution, None, [built])
        return _build_constants_caveat(mix, built)
    runs = [(point, str(path), read_callgrind(path)) for point, path in profiles]
    measured = _measured_counts(executable, [(point, run, path) for point, path, run in runs])
    points = [dict(point) for point, _ in profiles]
    mix = count_mix(executable, report, parameters, attribution, measured, points)
    mix = _skip_plt_caveat(mix, executable, [(path, run) for _, path, run in runs])
    return _build_constants_caveat(mix, built)


def _build_constants_caveat(mix: InstructionMix, built: Mapping[str, float]) -> InstructionMix:
    """The mix with a note on each function whose model holds a parameter the program was
    compiled with as a constant (a macro of a plain number, a ``-D`` flag), unless a note
    already says where the model holds: the instructions per iteration are this build's, and
    another value may compile to other code (gcc -O0 multiplies by a constant row stride with
    shifts and adds at one size and one ``imul`` at another)."""
    from dataclasses import replace

    functions = dict(mix.functions)
    for name, function_mix in mix.functions.items():
        if function_mix.counts is None or any(
            "built value" in note or "compiled for" in note for note in function_mix.notes
        ):
            continue
        symbols = {str(s) for count in function_mix.counts.values() for s in count.free_symbols}
        fixed = sorted(symbols & set(built))
        if not fixed:
            continue
        stated = ", ".join(f"{symbol} = {built[symbol]:g}" for symbol in fixed)
        note = (
            f"{', '.join(fixed)} {'is a constant' if len(fixed) == 1 else 'are constants'} of "
            f"this build ({stated}): the instructions counted per iteration are this build's, "
            "and other values may compile to other code (a multiplication by a constant "
            "stride, vectorization, unrolling), so at other values the model holds only as "
            "far as the code stays the same"
        )
        functions[name] = replace(function_mix, notes=(*function_mix.notes, note))
    return replace(mix, functions=functions)


def _skip_plt_caveat(
    mix: InstructionMix, executable: Binary, profiles: Sequence[tuple[str, CallgrindProfile]]
) -> InstructionMix:
    """The mix with a note on each function that calls shared-library functions when a profile
    was recorded with callgrind's default ``--skip-plt=yes`` (its totals per function are then
    above what the function executes; the measured counts perfcast takes are not affected)."""
    from dataclasses import replace

    from perfcast.static.callgrind import plt_charged_to_calls

    charged = [path for path, run in profiles if plt_charged_to_calls(executable, run)]
    if not charged:
        return mix
    starts = {function.low for function in executable.functions.values()}
    note = (
        f"profile {charged[0]} was recorded with callgrind's default --skip-plt=yes, which "
        "charges each PLT stub's jump to the call: its total for this function is one "
        "instruction per call of a shared-library function above these counts (the measured "
        "block counts are read past calls and are not affected); record with --skip-plt=no "
        "to compare"
    )
    functions = dict(mix.functions)
    for name, function_mix in mix.functions.items():
        code = executable.functions.get(name)
        if code is not None and any(
            i.kind == "call" and i.target is not None and i.target not in starts
            for i in code.instructions
        ):
            functions[name] = replace(function_mix, notes=(*function_mix.notes, note))
    return replace(mix, functions=functions)


def _loop_counts(
    executable: Binary, run: CallgrindProfile, path: str
) -> dict[tuple[str, str, int], int]:
    """:func:`perfcast.static.callgrind.measured_loop_counts` of one profile, an error naming
    the profile's file when it is not a run of ``executable``."""
    from perfcast.static.callgrind import measured_loop_counts

    try:
        return measured_loop_counts(executable, run)
    except InputError as error:
        raise InputError(
            f"profile {path} is not a run of {executable.path}: {error.message}",
            path,
            reason=error.reason or "bad-profile",
        ) from error


def _measured_counts(
    executable: Binary, profiles: Sequence[tuple[Mapping[str, float], CallgrindProfile, str]]
) -> dict[tuple[str, str, int], Any]:
    """Measured block and entry counts of the profiled runs (point, profile, its file), as
    sympy constants or models."""
    import sympy

    from perfcast.api.modeling import fit
    from perfcast.core.experiment import Experiment

    runs = [(dict(point), _loop_counts(executable, run, path)) for point, run, path in profiles]
    keys = sorted(set().union(*(counts for _, counts in runs)))
    series = {key: [counts.get(key, 0) for _, counts in runs] for key in keys}
    result: dict[tuple[str, str, int], Any] = {
        key: sympy.Integer(values[0]) for key, values in series.items() if len(set(values)) == 1
    }
    varying = [key for key in keys if key not in result]
    names = list(dict.fromkeys(name for point, _ in runs for name in point))
    if not varying:
        return result
    if not names:
        raise InputError(
            "the profiled runs give different counts but no parameter values to model them over",
            reason="bad-point",
        )
    kernel_of = {f"{kind}:{function}:{address:#x}": (kind, function, address)
                 for kind, function, address in varying}  # fmt: skip
    kernels: list[str] = []
    coordinates: dict[str, list[float]] = {name: [] for name in names}
    values: list[float] = []
    for index, (point, _) in enumerate(runs):
        missing = [name for name in names if name not in point]
        if missing:
            raise InputError(
                f"profiled run {index + 1} gives no value for {', '.join(missing)}",
                reason="bad-point",
            )
        for kernel, key in kernel_of.items():
            kernels.append(kernel)
            for name in names:
                coordinates[name].append(point[name])
            values.append(float(series[key][index]))
    experiment = Experiment.from_columns(
        kernels, ["count"] * len(kernels), coordinates, values, source="profiles"
    )
    try:
        models = fit(experiment, modeler="pmnf").models
    except (InputError, WorkError) as error:
        raise InputError(
            f"the {len(runs)} profiled runs admit no model of the measured loop counts over "
            f"{', '.join(names)} ({error}): profile more runs",
            reason="bad-point",
        ) from error
    for model in models:
        result[kernel_of[model.kernel]] = model.to_sympy()
    return result
