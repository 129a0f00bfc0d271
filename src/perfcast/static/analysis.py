"""Walk every function, build the loop levels and guards of each kernel, and count it.

A kernel's count per call of its function is the nested sum over its enclosing loop levels;
its count per program run multiplies that, call site by call site, by the count of each call
(arguments substituted for the callee's formal parameters), up to ``main``.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import sympy
from clang.cindex import Cursor, CursorKind

from perfcast.core.collector import collector_paused
from perfcast.core.errors import InputError
from perfcast.static.annotations import Annotation, parse_annotations
from perfcast.static.cexpr import Translator
from perfcast.static.context import FAILURES, CallRecord, Context, KernelRecord, describe
from perfcast.static.cursors import (
    LOOPS,
    children,
    contains,
    key,
    line_of,
    offset_of,
    operator,
    release_tree,
    single_pass,
    strip,
    walk,
)
from perfcast.static.error_paths import (
    allocated_pointers,
    argument_check,
    error_path,
    noreturn_functions,
    parameter_copies,
)
from perfcast.static.frontend import ParsedSource, parse_sources
from perfcast.static.guards import Guards
from perfcast.static.loops import (
    Header,
    comma_operands,
    exits,
    for_parts,
    header,
    loop_body,
    make_level,
    outside_inner_loops,
    writes_in,
)
from perfcast.static.names import Names
from perfcast.static.parameter_check import check_parameters
from perfcast.static.program import Program, collect
from perfcast.static.propagation import Propagation, public
from perfcast.static.reach import Reach
from perfcast.static.report import ERROR_PATH_NOTE, StaticKernel, StaticReport
from perfcast.static.similarity import fingerprint
from perfcast.static.symbolic import (
    Factor,
    Level,
    Negation,
    Piece,
    Undefined,
    prove_nonnegative,
    sum_over_levels,
    total,
)

_TRANSPARENT = {
    CursorKind.LABEL_STMT,
    CursorKind.CASE_STMT,
    CursorKind.DEFAULT_STMT,
    CursorKind.UNEXPOSED_STMT,
}
_SIMPLE = {
    CursorKind.DECL_STMT,
    CursorKind.RETURN_STMT,
    CursorKind.NULL_STMT,
    CursorKind.BREAK_STMT,
    CursorKind.CONTINUE_STMT,
    CursorKind.GOTO_STMT,
}


# Statements _visit walks itself: the search for calls in an expression stops at them.
_VISITED_STATEMENTS = LOOPS | {CursorKind.IF_STMT, CursorKind.COMPOUND_STMT}

_EXITS = {CursorKind.RETURN_STMT, CursorKind.GOTO_STMT, CursorKind.INDIRECT_GOTO_STMT}


def _work_sharing(kind: CursorKind) -> bool:
    """OpenMP loop directives split iterations among threads: the total count is unchanged."""
    return kind.name.startswith("OMP_") and kind.name.endswith("FOR_DIRECTIVE")


def analyze(
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    functions: Sequence[str] | None = None,
    cache: Path | None = None,
) -> StaticReport:
    """Count every function and loop nest of C sources symbolically.

    The report holds the functions defined in the sources and the functions of included
    headers that they call (directly or through others); a header's function nothing of the
    sources calls never runs in the program and is left out.

    Parameters
    ----------
    sources : sequence of path
        C files of one program (calls are followed across them).
    parameters : sequence of str
        Names of the input parameters: macros, globals, locals, function arguments or struct
        members with these names stand for the parameter (assumed an integer >= 1).
    compile_args : sequence of str
        Flags for clang (``-D``, ``-I``, ``-std``, ...).
    progress : callable, optional
        Called as ``progress(counted, total)`` after each loop or function is counted.
    functions : sequence of str, optional
        Analyse only these functions: the report holds their kernels alone. The sources are
        parsed once as usual, but only these functions and their callers (whose call sites
        give the counts per program run) are walked, and only the named functions' kernels
        are counted. Their counts are the same as in the full report.
    cache : Path, optional
        Directory of cached reports (:mod:`perfcast.static.cache`): a report of the same
        sources and included headers (by content), flags, parameters, functions and analysis
        code is read from there instead of being computed, and a computed one is stored.

    Returns
    -------
    StaticReport

    Raises
    ------
    InputError
        When a file is missing, clang reports an error, a parameter occurs in no source, or
        a function of ``functions`` is defined in none.
    """
    selected = tuple(functions) if functions is not None else None
    key = None
    if cache is not None:
        # imported here: an uncached analysis (perfcast static --no-cache) needs none of it
        from perfcast.static.cache import cached_report, included_files, report_key, store_report

        key = report_key(sources, parameters, compile_args, selected)
        with collector_paused():  # unpickling makes many objects: no passes over old ones
            cached = cached_report(cache, key)
        if cached is not None:
            return cached
    # One pause for the whole analysis: re-enabling the collector in between would make its
    # next pass go over every object made so far (the unit's tree among them).
    with collector_paused():
        session = StaticSession(sources, parameters, compile_args)
        report = session.report(selected, progress)
        if cache is not None and key is not None:
            store_report(cache, key, report, included_files(session.parsed))
        session.close()
    return report


class StaticSession:
    """Sources parsed once, functions analysed when asked, each walked and counted once.

    Parameters
    ----------
    sources : sequence of path
        C files of one program.
    parameters : sequence of str
        Names of the input parameters (see :func:`analyze`).
    compile_args : sequence of str
        Flags for clang.

    Raises
    ------
    InputError
        When a file is missing, clang reports an error, or a parameter occurs in no source.

    Examples
    --------
    >>> session = StaticSession(["solver.c"], ["n"])  # doctest: +SKIP
    >>> session.report(["spmv"]).kernels  # walks spmv and its callers only  # doctest: +SKIP
    >>> session.report(["dot"])  # reuses the parse and every walk already done  # doctest: +SKIP
    """

    def __init__(
        self,
        sources: Sequence[str | Path],
        parameters: Sequence[str],
        compile_args: Sequence[str] = (),
    ) -> None:
        with collector_paused():
            self.parsed, self._warnings = parse_sources(sources, compile_args)
            check_parameters(self.parsed, parameters, compile_args)
            self._analysis = _Analysis(collect(self.parsed), list(parameters))
            self._analysis.start()

    @property
    def functions(self) -> list[str]:
        """The functions defined in the sources, in source order."""
        return list(self._analysis.program.functions)

    def report(
        self,
        functions: Sequence[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> StaticReport:
        """The kernels of the named functions (None: of every function of the sources and
        every function of an included header that they call, directly or through others).

        Parameters
        ----------
        functions : sequence of str, optional
            Functions to report; they and their callers are walked if they were not yet.
        progress : callable, optional
            Called as ``progress(counted, total)`` after each kernel is counted.

        Returns
        -------
        StaticReport
            The same kernels and counts as the full analysis has for these functions.

        Raises
        ------
        InputError
            When a name is defined in none of the sources (with the closest names).
        """
        with collector_paused():
            return self._analysis.report(self._warnings, progress, functions)

    def close(self) -> None:
        """Free the cursor trees of the parsed units now; the session answers no more.

        A tree and its cursors form a reference cycle (every cursor refers to its unit), which
        only Python's cyclic collector would free, in a pass over every object the analysis
        made (a quarter of a second for a 5,000-line file).
        """
        for source in self.parsed:
            release_tree(source.unit)
        self.parsed = []
        self._analysis.calls.clear()  # their arguments' translations refer to the analysis
        del self._analysis


class _Analysis:
    def __init__(self, program: Program, parameters: list[str]):
        self.program = program
        self.parameter_names = parameters
        self.symbols = {p: sympy.Symbol(p, integer=True, positive=True) for p in parameters}
        self.kernels: list[KernelRecord] = []
        self.branches: list[KernelRecord] = []
        self.calls: dict[int, CallRecord] = {}
        self.annotations: dict[str, dict[int, list[Annotation]]] = {}
        self.top_level: dict[str, set[int]] = {}
        self.names = Names(program, self.symbols, self.top_level)
        self.guards = Guards(self.names)
        self.propagation = Propagation(
            program, self.calls, self.names.formals, self.symbols, self.names.nonnegative_formals
        )
        self.early_return: dict[str, Cursor] = {}
        self.jumps: dict[str, Cursor] = {}
        self.names_used: dict[str, int] = {}
        self.extra_symbols: set[str] = set()
        self.reach = Reach(program, set(parameters))
        self.noreturn: set[str] = set()
        self.error_arms: dict[int, str] = {}  # hash of an if's arm -> why it is an error path
        self.error_notes: list[str] = []
        # operands of ?:, && and || inside loops that run under their condition
        self.conditions: list[KernelRecord] = []
        self.taken: set[tuple[str, int]] = set()  # probability pragmas an if or operand took
        # hashes of the && / || of an if's condition whose value its probability pragma fixes
        # (probability(0): every || of the condition is false; probability(1): every && true)
        self.settled: set[int] = set()
        self.source: ParsedSource | None = None  # the unit of the function being walked

    # -- driver -----------------------------------------------------------------------------
    def start(self) -> None:
        """Read annotations, noreturn functions and top-level statements of every function."""
        for source in self.program.sources:
            self.annotations[str(source.path)] = parse_annotations(source.text, source.path)
        self.noreturn = noreturn_functions(self.program.functions)
        for name, function in self.program.functions.items():
            self._top_level(name, function)
        calls = self.calls  # not self: a closure over the analysis would make a cycle
        self.reach.call_seeds = lambda h: calls[h].context.seeds if h in calls else ()
        self.walked: set[str] = set()
        self.counting = _Counting(
            self.propagation, self.reach, self.parameter_names, self.extra_symbols
        )
        self.counted: dict[int, StaticKernel] = {}  # id of a record -> its kernel

    def walk(self, functions: Sequence[str]) -> None:
        """Walk the functions and their callers that are not walked yet, in source order
        (every one is prepared before any is walked)."""
        needed = self._to_walk(functions)
        new = needed - self.walked
        if not new:
            return
        self.walked |= new
        # what reaches the new functions depends on their call sites: solve again
        self.reach.relevant = (self.reach.relevant or set()) | needed
        self.reach.forget_solution()
        for name, function in self.program.functions.items():
            if name in new:
                self._prepare(name, function)
        for name, function in self.program.functions.items():
            if name in new:
                self._walk_function(name, function)

    def report(
        self,
        warnings: list[str],
        progress: Callable[[int, int], None] | None = None,
        functions: Sequence[str] | None = None,
    ) -> StaticReport:
        if functions is None:
            functions = self._run_by_sources()
        self.walk(functions)
        wanted = set(functions)
        order = {name: index for index, name in enumerate(self.program.functions)}

        def selected(records: list[KernelRecord]) -> list[KernelRecord]:
            chosen = [r for r in records if r.context.function in wanted]
            return sorted(chosen, key=lambda r: order.get(r.context.function, len(order)))

        records = selected(self.kernels)
        kernels = []
        for record in records:
            kernels.append(self._counted(record))
            if progress is not None:
                progress(len(kernels), len(records))
        fingerprints = {r.name: fingerprint(r.cursor) for r in records if r.kind == "loop"}
        names = tuple(self.parameter_names) + tuple(sorted(self.extra_symbols))
        kernels = [replace(k, all_parameters=names) for k in kernels]
        branches = [
            replace(self._counted(r), all_parameters=names) for r in selected(self.branches)
        ]
        conditions = [
            replace(self._counted(r), all_parameters=names) for r in selected(self.conditions)
        ]
        return StaticReport(
            kernels,
            list(warnings) + self.program.diagnostics + self.error_notes,
            names,
            fingerprints,
            branches,
            conditions,
            _build_values(self.program, self.parameter_names),
        )

    def _counted(self, record: KernelRecord) -> StaticKernel:
        if id(record) not in self.counted:
            self.counted[id(record)] = self.counting.kernel(record)
        return self.counted[id(record)]

    def _run_by_sources(self) -> list[str]:
        """The functions the sources can run, in source order: those defined in the source
        files, and the functions of included files that these name (call, or take the address
        of, as a method table does), directly or through other functions and file-scope
        variables (a table in an included file that a source's function registers).

        A function of an included file that nothing of the sources names never runs in the
        program (Python.h alone defines some 180 inline functions): it is neither walked nor
        reported.
        """
        program = self.program
        defined = program.functions
        sources = {source.unit.spelling for source in program.sources}
        roots = [
            name
            for name, function in defined.items()
            if function.location.file is not None and function.location.file.name in sources
        ]
        roots += [name for name, file in program.variable_files.items() if file in sources]
        found = set(roots)
        work = list(roots)
        while work:
            for named in program.references.get(work.pop(), ()):
                if named not in found and (named in defined or named in program.references):
                    found.add(named)
                    work.append(named)
        return [name for name in defined if name in found]

    def _to_walk(self, functions: Sequence[str]) -> set[str]:
        """The functions to walk: the named ones and every function calling them (directly
        or through others)."""
        defined = self.program.functions
        unknown = [name for name in functions if name not in defined]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(defined), n=5)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise InputError(f"function {unknown[0]} is defined in none of the sources{hint}")
        walked = set(functions)
        work = list(functions)
        while work:
            for site in self.program.calls.get(work.pop(), ()):
                if site.caller in defined and site.caller not in walked:
                    walked.add(site.caller)
                    work.append(site.caller)
        return walked

    def _top_level(self, name: str, function: Cursor) -> list[Cursor]:
        """Record the hashes of the function's top-level statements (each operand of a comma
        expression ``lo = 0, hi = n;`` counting as one); return the statements."""
        body = _body(function)
        statements = children(body) if body is not None else []
        self.top_level[name] = {o.hash for s in statements for o in comma_operands(s)}
        return statements

    def _prepare(self, name: str, function: Cursor) -> None:
        statements = self._top_level(name, function)
        # walks of the function taken only when an arm may be an argument check
        parameters = {k.spelling for k in children(function) if k.kind == CursorKind.PARM_DECL}
        formals = functools.cache(lambda: parameter_copies(function, parameters))
        allocated = functools.cache(lambda: allocated_pointers(function))
        arms = []
        leaving = []  # returns and gotos, in the order of the walk
        for cursor in self.program.control.get(name, ()):  # the scan's walk of the function
            kind = cursor.kind
            if kind in _EXITS:
                leaving.append(cursor)
            if kind != CursorKind.IF_STMT:
                continue
            condition, *rest = children(cursor)
            never = self._never_taken(name, cursor, rest)
            if never is not None:
                # its probability pragma says the arm never runs: its return is no early one
                arms.append(never)
                continue
            for index, arm in enumerate(rest[:2]):
                reason = error_path(arm, name, self.noreturn)
                if reason is None and index == 0:
                    reason = argument_check(condition, arm, formals, allocated)
                if reason is not None and self._reads_parameter(condition):
                    # Tokens are read only here: most arms are no error path at all.
                    reason = error_path(arm, name, self.noreturn, by_value=False)
                if reason is not None:
                    self.error_arms[arm.hash] = reason
                    arms.append(arm)
        for cursor in leaving:
            if (
                cursor.kind == CursorKind.RETURN_STMT
                and (not statements or cursor.hash != statements[-1].hash)
                and not any(contains(arm, cursor) for arm in arms)
            ):
                self.early_return.setdefault(name, cursor)
            if cursor.kind in (CursorKind.GOTO_STMT, CursorKind.INDIRECT_GOTO_STMT):
                self.jumps.setdefault(name, cursor)

    def _never_taken(self, name: str, branch: Cursor, arms: list[Cursor]) -> Cursor | None:
        """The arm of the if statement ``branch`` that its ``probability`` pragma makes never
        run (the then arm for ``probability(0)``, the else arm for ``probability(1)``)."""
        path = str(self.program.function_source[name].path)
        notes = self.annotations.get(path, {}).get(line_of(branch.location), [])
        probability = next((a for a in notes if a.kind == "probability"), None)
        if probability is None or not probability.value.is_number:
            return None
        if probability.value == 0:
            return arms[0]
        if probability.value == 1 and len(arms) > 1:
            return arms[1]
        return None

    def _reads_parameter(self, condition: Cursor) -> bool:
        """True when a token of the condition is a model parameter's name."""
        if not self.symbols:
            return False  # no tokens to read
        return any(t.spelling in self.symbols for t in condition.get_tokens())

    # -- walking ----------------------------------------------------------------------------
    def _walk_function(self, name: str, function: Cursor) -> None:
        source = self.program.function_source[name]
        self.source = source
        context = Context(name)
        if name in self.program.ambiguous:
            context = context.changed(undef=f"two functions are called {name}")
        self._record(name, "function", function, source, 0, context)
        context = context.changed(region=name)
        jump = self.jumps.get(name)
        if jump is not None and context.undef is None:
            # A goto can skip or repeat any statement of the function.
            context = context.changed(
                undef=f"the function {name} uses goto at line {jump.location.line}"
            )
        body = _body(function)
        if body is not None:
            self._visit(body, context, [], source)

    def _record(self, name, kind, cursor, source, depth, context) -> None:
        self.kernels.append(KernelRecord(name, kind, cursor, source, depth, context))

    def _loop_name(self, function: str, cursor: Cursor) -> str:
        line = cursor.location.line
        base = f"{function}:loop@{line}"
        self.names_used[base] = self.names_used.get(base, 0) + 1
        if self.names_used[base] > 1:
            return f"{base}:{cursor.location.column}"
        return base

    def _late(self, context: Context, cursor: Cursor) -> Context:
        early = self.early_return.get(context.function)
        if (
            early is not None
            and context.undef is None
            and offset_of(cursor.extent.start) > offset_of(early.extent.start)
        ):
            return context.changed(
                undef=f"the function {context.function} may return early at line "
                f"{early.location.line}"
            )
        return context

    def _visit(self, cursor: Cursor, context: Context, preceding: list, source) -> None:
        kind = cursor.kind
        context = self._late(context, cursor)
        if kind == CursorKind.COMPOUND_STMT:
            kids = children(cursor)
            for index, kid in enumerate(kids):
                self._visit(kid, context, kids[:index], source)
        elif single_pass(cursor):
            self._single_pass(cursor, context, source)
        elif kind in LOOPS:
            self._loop(cursor, context, preceding, source)
        elif kind == CursorKind.IF_STMT:
            self._branch(cursor, context, source)
        elif kind == CursorKind.SWITCH_STMT:
            inner = (
                context
                if context.undef
                else context.changed(undef=f"inside the switch at line {cursor.location.line}")
            )
            kids = children(cursor)
            if len(kids) > 1:  # its cases: code that runs in an undefined share of the runs
                name = f"{context.function}:switch@{cursor.location.line}:cases"
                self.branches.append(
                    KernelRecord(name, "branch", kids[-1], source, context.depth, inner)
                )
            for kid in kids:
                self._visit(kid, inner, [], source)
        elif kind in _TRANSPARENT or _work_sharing(kind):
            for kid in children(cursor):
                self._visit(kid, context, [], source)
        elif kind.is_statement() and kind not in _SIMPLE:
            what = kind.name.lower().replace("_", " ")
            inner = (
                context
                if context.undef
                else context.changed(
                    undef=f"inside an unsupported statement ({what}) at line "
                    f"{cursor.location.line}",
                )
            )
            for kid in children(cursor):
                self._visit(kid, inner, [], source)
        else:
            self._calls_in(cursor, context, False)

    def _calls_in(
        self, cursor: Cursor, context: Context, conditional: bool, kind: CursorKind | None = None
    ) -> None:
        """Record the calls in ``cursor`` (of kind ``kind``, when known), not entering
        statements the walk visits itself."""
        kind = cursor.kind if kind is None else kind
        if kind == CursorKind.CALL_EXPR:
            call_context = context
            if conditional and context.undef is None:
                call_context = context.changed(undef="the call is conditional (?:, && or ||)")
            # Only the arguments of calls of defined functions are ever substituted.
            defined = self.program.functions
            translate = (
                partial(self._arguments, cursor, context)
                if cursor.spelling in defined or self.program.callee(cursor) in defined
                else list
            )
            self.calls[cursor.hash] = CallRecord(call_context, translate)
        # the operands after the first of ?:, && and || run only under a condition
        kids = children(cursor)
        shortcut = kind == CursorKind.CONDITIONAL_OPERATOR or (
            kind == CursorKind.BINARY_OPERATOR and operator(cursor) in ("&&", "||")
        )
        later = True if shortcut else conditional
        contexts = self._operand_contexts(cursor, kids, context) if shortcut else None
        flag = conditional
        for index, kid in enumerate(kids):
            kid_kind = kid.kind
            if kid_kind not in _VISITED_STATEMENTS:
                inner = contexts[index] if contexts is not None else context
                self._calls_in(kid, inner, flag, kid_kind)
            flag = later

    def _operand_contexts(self, cursor: Cursor, kids: list[Cursor], context: Context) -> list:
        """The contexts of the operands of a ``?:``, ``&&`` or ``||`` (the first operand's is
        ``context``); each operand that runs only under the condition (inside loops and,
        since a block outside loops that some calls skip needs it too, outside) is
        recorded as a condition block (kind ``"condition"``, named
        ``<function>:cond@<line>:then|else``, ``<function>:and@<line>:right`` or
        ``<function>:or@<line>:right``), guarded by the first operand (or its negation), or
        weighted by a ``probability`` pragma of its line that no ``if`` took: the share of
        evaluations in which the first operand is true."""
        source = self.source
        if len(kids) < 2 or source is None:
            return [context] * len(kids)
        first = kids[0]
        arms: tuple[tuple[str, bool], ...]
        if cursor.kind == CursorKind.CONDITIONAL_OPERATOR:
            word, arms = "cond", (("then", True), ("else", False))
        else:
            word, arms = ("and", (("right", True),))
            if operator(cursor) == "||":
                word, arms = "or", (("right", False),)
        line = cursor.location.line
        base = f"{context.function}:{word}@{line}"
        self.names_used[base] = self.names_used.get(base, 0) + 1
        if self.names_used[base] > 1:
            base = f"{base}:{cursor.location.column}"
        path = str(source.path)
        notes = self.annotations[path].get(line_of(cursor.location), [])
        probability = next(
            (a for a in notes if a.kind == "probability" and (path, a.line) not in self.taken),
            None,
        )
        if probability is not None:
            self.taken.add((path, probability.line))
            self.extra_symbols |= {str(s) for s in probability.value.free_symbols}
        contexts = [context]
        guards: tuple | None = None
        reason = None
        if context.undef is None and probability is None:
            try:
                guards = tuple(self.guards.of(first, context, True))
            except FAILURES as error:
                reason = f"guarded by the condition at line {line} ({describe(error)})"
        for arm, (suffix, when_true) in enumerate(arms, start=1):
            if context.undef is not None or cursor.hash in self.settled:
                # (settled: the if's probability pragma fixes the value, so every operand runs)
                arm_context = context
            elif probability is not None:
                weight = probability.value if when_true else 1 - probability.value
                arm_context = context.changed(guards=context.guards + (Factor(weight),))
            elif guards is None:
                arm_context = context.changed(undef=reason)
            else:
                added = guards if when_true else (Negation(guards),)
                arm_context = context.changed(guards=context.guards + added)
            name = f"{base}:{suffix}"
            self.conditions.append(
                KernelRecord(name, "condition", kids[arm], source, context.depth, arm_context)
            )
            contexts.append(arm_context.changed(region=name))
        return contexts + [context] * (len(kids) - len(contexts))

    def _arguments(self, call: Cursor, context: Context) -> list:
        return [self._argument(a, context) for a in call.get_arguments()]

    def _argument(self, cursor: Cursor, context: Context):
        try:
            return self.names.translator(context).expression(cursor)
        except FAILURES as error:
            return describe(error)

    def _single_pass(self, cursor: Cursor, context: Context, source) -> None:
        """``do { ... } while (0)``: its body runs once where it stands, unless left early."""
        body = loop_body(cursor)
        leaving = [
            c
            for c in outside_inner_loops(body)
            if c.kind in (CursorKind.BREAK_STMT, CursorKind.CONTINUE_STMT)
        ]
        if leaving and context.undef is None:
            what = "break" if leaving[0].kind == CursorKind.BREAK_STMT else "continue"
            context = context.changed(
                undef=f"inside the do {{ }} while (0) at line {cursor.location.line}, which the "
                f"{what} at line {leaving[0].location.line} may leave early",
            )
        self._visit(body, context, [], source)

    def _loop(self, cursor: Cursor, context: Context, preceding: list, source) -> None:
        line = cursor.location.line
        notes = self.annotations[str(source.path)].get(line, [])
        count_note = next((a for a in notes if a.kind == "count"), None)
        symbol_note = next((a for a in notes if a.kind == "symbol"), None)
        name = self._loop_name(context.function, cursor)
        kind = {CursorKind.FOR_STMT: "for", CursorKind.WHILE_STMT: "while"}.get(cursor.kind, "do")
        parts, seeds, reason = self._loop_header(cursor, preceding)
        level = None
        if parts is not None and context.undef is None and count_note is None:
            try:
                level = self._level(cursor, parts, context, kind, symbol_note, preceding)
            except FAILURES as error:
                reason = describe(error)
        body = loop_body(cursor)
        inside = {c.hash for c in walk(body)}
        ignored = frozenset(h for h in self.error_arms if h in inside)
        exit_reason = exits(body, ignored)
        if ignored:
            context = context.changed(
                notes=context.notes
                + (f"counted as if the error paths in the loop at line {line} never run",),
            )
        if exit_reason and count_note is None:
            reason = f"several exits ({exit_reason})"
        if count_note is not None:
            reason = None
            level = self._annotated_level(count_note, name, line)
        if symbol_note is not None:
            self.extra_symbols.add(str(symbol_note.value))
        self._header_calls(cursor, context)
        if context.undef is not None:
            own = context
        elif reason is not None:
            own = context.changed(undef=reason)
        else:
            assert level is not None, "a loop with no failure reason has its level"
            own = context.changed(levels=context.levels + (level,))
        own = own.changed(seeds=context.seeds + seeds)
        own = own.changed(depth=context.depth + 1)
        self._record(name, "loop", cursor, source, own.depth, own)
        inner = own
        if reason is not None and context.undef is None:
            inner = own.changed(
                undef=f"inside the loop at line {line}, which is not countable ({reason})"
            )
        elif level is not None and parts is not None:
            inner = inner.changed(
                bindings=inner.bindings + ((key(parts.variable), level.variable, cursor),)
            )
        self._visit_body(body, inner.changed(region=name), parts, level, cursor, source)

    def _loop_header(
        self, cursor: Cursor, preceding: list
    ) -> tuple[Header | None, tuple[Cursor, ...], str | None]:
        """The recognised header of a loop (or None and why not) and the expressions it reads."""
        try:
            parts = header(cursor, preceding)
        except FAILURES as error:
            return None, self._raw_header(cursor), describe(error)
        seeds = (
            (parts.start, parts.bound)
            + ((parts.update.amount,) if parts.update.amount is not None else ())
            + ((parts.offset[0],) if parts.offset is not None else ())
        )
        return parts, seeds, None

    def _annotated_level(self, count_note: Annotation, name: str, line: int) -> Level:
        """The level of a loop whose trip count a ``count`` annotation gives."""
        self.extra_symbols |= {str(s) for s in count_note.value.free_symbols} - set(
            self.parameter_names
        )
        return Level(
            sympy.Dummy(name, integer=True),
            sympy.Dummy(f"k{line}", integer=True, nonnegative=True),
            None,
            count_note.value,
            (),
            False,
            None,
            None,
            None,
            None,
            line,
        )

    def _header_calls(self, cursor: Cursor, context: Context) -> None:
        """Record the calls in a loop's header: those in its guard or update run uncounted."""
        checked = context.changed(
            undef=context.undef
            or f"called in the guard or update of the loop at line {cursor.location.line}",
        )
        if cursor.kind == CursorKind.FOR_STMT:
            init, condition, increment, _ = for_parts(cursor)
            if init is not None:
                self._calls_in(init, context, False)
            for part in (condition, increment):
                if part is not None:
                    self._calls_in(part, checked, False)
        else:
            kids = children(cursor)
            self._calls_in(
                kids[-1] if cursor.kind == CursorKind.DO_STMT else kids[0], checked, False
            )

    @staticmethod
    def _raw_header(cursor: Cursor) -> tuple[Cursor, ...]:
        """The header expressions of a loop that could not be recognised (for reach)."""
        if cursor.kind == CursorKind.FOR_STMT:
            return tuple(p for p in for_parts(cursor)[:3] if p is not None)
        kids = children(cursor)
        return (kids[-1],) if cursor.kind == CursorKind.DO_STMT else (kids[0],)

    def _visit_body(self, body, context, parts, level, loop, source) -> None:
        update = parts.update_statement if parts is not None else None
        if update is None or body.kind != CursorKind.COMPOUND_STMT or level is None:
            self._visit(body, context, [], source)
            return
        kids = children(body)
        current = context
        for index, kid in enumerate(kids):
            self._visit(kid, current, kids[:index], source)
            if kid.hash == update.hash:
                after = level.variable + level.step if level.step is not None else None
                current = current.changed(
                    bindings=current.bindings + ((key(parts.variable), after, loop),)
                )

    def _level(self, cursor, parts, context, kind, symbol_note, preceding=()) -> Level:
        if key(parts.variable) in self.program.address_of:
            raise Undefined(
                f"the address of the loop variable {parts.variable.spelling} is taken, so it may "
                "change anywhere"
            )
        if key(parts.variable) in self._changed_by_calls(loop_body(cursor)):
            raise Undefined(
                f"the loop variable {parts.variable.spelling} may be modified by a call in the body"
            )
        translator = self.names.translator(context)
        if parts.start.kind == CursorKind.FOR_STMT:
            start = self._exit_value(parts.start, list(preceding), context)
        else:
            start = translator.expression(parts.start)
        if symbol_note is not None:
            bound = symbol_note.value
        else:
            self._check_invariant(parts.bound, loop_body(cursor))
            bound = translator.expression(parts.bound)
            if parts.offset is not None:  # v + c op bound: v op bound - c
                shift, sign = parts.offset
                self._check_invariant(shift, loop_body(cursor))
                bound = bound - sign * translator.expression(shift)
        amount = None
        if parts.update.amount is not None:
            amount = translator.expression(parts.update.amount)
        domain = list(context.levels)

        def prove(expression):
            return prove_nonnegative(expression, domain)

        return make_level(
            parts, start, bound, amount, prove, kind, cursor.location.line, parts.variable.spelling
        )

    def _exit_value(self, loop: Cursor, preceding: list, context: Context) -> sympy.Expr:
        """The value a countable for loop with an additive update leaves its variable at:
        ``start + step * trip``, or ``start`` when it runs no iteration."""
        index = next(i for i, s in enumerate(preceding) if s.hash == loop.hash)
        line = loop.location.line
        parts, _, reason = self._loop_header(loop, preceding[:index])
        body = loop_body(loop)
        if parts is None or exits(body, frozenset()):
            why = reason or "it may be left early"
            raise Undefined(f"the start is the exit value of the loop at line {line} ({why})")
        level = self._level(loop, parts, context, "for", None, preceding[:index])
        if level.step is None or level.value is None:
            raise Undefined(f"the start is the exit value of the loop at line {line}, not additive")
        domain = list(context.levels)
        ran = [c for c in level.nonempty if not prove_nonnegative(c, domain)]
        value = sympy.expand(level.start + level.step * level.trip)
        if not ran:
            return value
        return sympy.Piecewise(
            (value, sympy.And(*[sympy.Ge(c, 0) for c in ran])), (level.start, True)
        )

    def _changed_by_calls(self, body: Cursor) -> set[str]:
        called = {self.program.callee(c) for c in walk(body) if c.kind == CursorKind.CALL_EXPR}
        changed: set[str] = set()
        for name in called:
            changed |= self.program.function_writes(name)
        return changed

    def _check_invariant(self, bound: Cursor, body: Cursor) -> None:
        """Refuse bounds whose variables the body changes (directly or through calls)."""
        changed_by_calls = self._changed_by_calls(body)
        for node in walk(bound):
            if node.kind not in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
                continue
            declaration = node.referenced
            if declaration is None or declaration.kind == CursorKind.FUNCTION_DECL:
                continue
            written = writes_in(body, declaration)
            if written:
                raise Undefined(
                    f"the bound {node.spelling} is modified in the loop body at line "
                    f"{written[0].location.line}"
                )
            if key(declaration) in changed_by_calls:
                raise Undefined(f"the bound {node.spelling} may be modified by a call in the body")

    def _branch(self, cursor: Cursor, context: Context, source) -> None:
        kids = children(cursor)
        condition, then = kids[0], kids[1]
        other = kids[2] if len(kids) > 2 else None
        # the if takes its probability pragma first: operands of its condition do not
        then_context, else_context = self._branch_contexts(cursor, condition, context, source)
        self._calls_in(condition, context, False)
        seeds = context.seeds + (condition,)
        self._visit_arm("then", then, cursor, then_context.changed(seeds=seeds), source)
        if other is not None:
            self._visit_arm("else", other, cursor, else_context.changed(seeds=seeds), source)

    def _branch_contexts(
        self, cursor: Cursor, condition: Cursor, context: Context, source
    ) -> tuple[Context, Context]:
        """The contexts of the then and else arms: guarded by the condition or its negation,
        weighted by a ``probability`` annotation, or undefined with the reason."""
        notes = self.annotations[str(source.path)].get(line_of(cursor.location), [])
        probability = next((a for a in notes if a.kind == "probability"), None)
        if probability is not None:
            self.taken.add((str(source.path), probability.line))
        if context.undef is not None:
            return context, context
        arms = children(cursor)[1:3]
        errors = [self.error_arms.get(arm.hash) for arm in arms]
        if probability is None and any(errors):
            arm = 0 if errors[0] else 1
            self.error_notes.append(
                f"{source.path}:{cursor.location.line}: the {('then', 'else')[arm]} branch "
                f"{errors[arm]}: {ERROR_PATH_NOTE}"
            )
            never = context.changed(guards=context.guards + (Factor(sympy.Integer(0)),))
            # the condition's value is fixed (false for an error then arm): every operand of
            # its || (its && for an error else arm) is evaluated in every run
            self._settle(condition, "||" if arm == 0 else "&&")
            return (never, context) if arm == 0 else (context, never)
        if probability is not None:
            self.extra_symbols |= {str(s) for s in probability.value.free_symbols}
            if probability.value in (0, 1):
                self._settle(condition, "&&" if probability.value == 1 else "||")
            then_context = context.changed(guards=context.guards + (Factor(probability.value),))
            else_context = context.changed(guards=context.guards + (Factor(1 - probability.value),))
            return then_context, else_context
        try:
            guards = self.guards.of(condition, context, True)
        except FAILURES as error:
            reason = f"guarded by the condition at line {cursor.location.line} ({describe(error)})"
            undefined = context.changed(undef=reason)
            return undefined, undefined
        then_context = context.changed(guards=context.guards + tuple(guards))
        else_context = context.changed(guards=context.guards + (Negation(tuple(guards)),))
        return then_context, else_context

    def _settle(self, condition: Cursor, kind: str) -> None:
        """Mark the ``kind`` operators (``&&`` or ``||``) of a condition whose value is fixed
        (true for ``&&``, false for ``||``): every operand of them is evaluated."""
        node = strip(condition)
        if node.kind != CursorKind.BINARY_OPERATOR or operator(node) != kind:
            return
        self.settled.add(node.hash)
        for kid in children(node):
            self._settle(kid, kind)

    def _visit_arm(
        self, arm: str, statement: Cursor, branch: Cursor, context: Context, source
    ) -> None:
        """Record the ``then`` or ``else`` arm of the if statement ``branch`` and walk it."""
        name = f"{context.function}:if@{branch.location.line}:{arm}"
        self.branches.append(
            KernelRecord(name, "branch", statement, source, context.depth, context)
        )
        self._visit(statement, context.changed(region=name), [], source)


class _Counting:
    """The count per program run of each recorded kernel, and the parameters that reach it.

    Parameters
    ----------
    propagation : Propagation
        Counts per call multiplied up the call graph.
    reach : Reach
        Which parameters reach a kernel's seeds.
    parameter_names : list of str
        The user's parameters.
    extra_symbols : set of str
        Symbols that annotations introduced.
    """

    def __init__(
        self,
        propagation: Propagation,
        reach: Reach,
        parameter_names: list[str],
        extra_symbols: set[str],
    ) -> None:
        self.propagation = propagation
        self.reach = reach
        self.parameter_names = parameter_names
        self.extra_symbols = extra_symbols

    def kernel(self, record: KernelRecord) -> StaticKernel:
        """The static kernel of ``record``: its count (or why it has none) and its parameters."""
        context = record.context
        count = None
        reason = None
        note = None
        try:
            if context.undef is not None:
                raise Undefined(context.undef)
            per_call = sum_over_levels(
                list(context.levels),
                list(context.guards),
                [Piece(sympy.Integer(1))],
            )
            pieces, note = self.propagation.per_run(context.function, per_call)
            count = public(total(pieces), set(self.parameter_names) | self.extra_symbols)
        except FAILURES as error:
            reason = describe(error)
        if context.notes:
            note = "; ".join(((note,) if note else ()) + context.notes)
        cursor = record.cursor
        body = {"loop": loop_body, "function": _body}.get(record.kind, lambda c: c)(cursor)
        end_line = line_of((body or cursor).extent.end)
        reached = self.reach.kernel(record.context.seeds, context.function)
        if count is not None:
            reached |= {str(s) for s in count.free_symbols}
        ordered = [p for p in self.parameter_names if p in reached] + sorted(
            reached - set(self.parameter_names)
        )
        return StaticKernel(
            name=record.name,
            kind=record.kind,
            file=str(record.source.path),
            line=cursor.location.line,
            end_line=end_line,
            depth=0 if record.kind == "function" else record.depth,
            function=context.function,
            parameters=tuple(ordered),
            count=count,
            undef_reason=reason,
            column=cursor.location.column,
            note=note,
            parent=context.region or None,
            end_column=cursor.extent.end.column if record.kind == "condition" else 0,
            varying=record.kind == "loop" and count is not None and _varying(context.levels),
            step=_step(context.levels) if record.kind == "loop" else 1,
            always_entered=record.kind == "loop"
            and count is not None
            and _always_entered(context.levels),
        )


def _step(levels: tuple[Level, ...]) -> int | None:
    """The size of the innermost level's additive step when it is a constant, else None."""
    step = levels[-1].step if levels else None
    if step is None:
        return None
    step = sympy.sympify(step)
    return abs(int(step)) if step.is_Integer else None


def _varying(levels: tuple[Level, ...]) -> bool:
    """True when the innermost level's trip count per entry depends on an outer level's
    induction variable (entries of the loop run different numbers of iterations)."""
    if len(levels) < 2 or levels[-1].trip is None:
        return False
    outer = {level.variable for level in levels[:-1]}
    return bool(sympy.sympify(levels[-1].trip).free_symbols & outer)


def _always_entered(levels: tuple[Level, ...]) -> bool:
    """True when the innermost level runs at least one iteration per entry for every
    parameter >= 1 and every value of the outer levels' variables."""
    if not levels or levels[-1].trip is None:
        return False
    outer = list(levels[:-1])
    trip = sympy.sympify(levels[-1].trip)
    return prove_nonnegative(trip - 1, outer) and all(
        prove_nonnegative(sympy.sympify(condition), outer) for condition in levels[-1].nonempty
    )


def _body(function: Cursor) -> Cursor | None:
    kids = [k for k in children(function) if k.kind == CursorKind.COMPOUND_STMT]
    return kids[-1] if kids else None


def _build_values(program: Program, names: Sequence[str]) -> dict[str, float]:
    """The value of each parameter that is an object-like macro of a plain number in this
    build (its ``-D`` flag or its ``#define``): where the instruction mix is checked."""

    def no_variable(declaration: Cursor, use: Cursor) -> sympy.Expr:
        raise Undefined(f"{use.spelling} is a variable")

    defines = program.sources[0].defines if program.sources else {}
    translator = Translator(program, {}, no_variable, lambda _expression: False, defines)
    found: dict[str, float] = {}
    for name in names:
        try:
            value = translator.macro(name, set())
        except Undefined:
            continue
        if value.is_number and value.is_finite and value.is_real:
            found[name] = float(value)
    return found
