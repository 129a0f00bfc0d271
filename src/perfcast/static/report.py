"""The result of static analysis: kernels (functions and loops) with symbolic counts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sympy

from perfcast.core.errors import InputError
from perfcast.core.jsonin import parse_json
from perfcast.static.parameter_domain import check_parameter_values

if TYPE_CHECKING:  # numpy, which the analysis does not need, loads with models only
    from perfcast.core.function import Model


class _Log2(sympy.Function):
    """Prints ``log(x, 2)`` so that :func:`sympy.sympify` reads the text back."""

    nargs = 1

    def _sympystr(self, printer) -> str:
        return f"log({printer._print(self.args[0])}, 2)"


def expression_text(expression: sympy.Expr) -> str:
    """The count as text :func:`sympy.sympify` parses, ``log2(x)`` written ``log(x, 2)``."""
    rewritten = expression.replace(
        lambda e: isinstance(e, sympy.log) and not e.args[0].is_number,
        lambda e: _Log2(e.args[0]) * sympy.log(2),
    )
    return str(rewritten)


def parse_expression(text: str, parameters) -> sympy.Expr:
    """Read an ``expression`` of the JSON back into sympy.

    Parameter names are passed as symbols so that names sympy or Python already use (``N``,
    ``S``, ``E``, ``I``, ``len``, ...) still read as parameters.
    """
    names = {name: sympy.Symbol(name) for name in parameters}
    return sympy.sympify(text, locals=names)


@dataclass(frozen=True)
class StaticKernel:
    """A function or loop of the analysed source with its execution count.

    Attributes
    ----------
    name : str
        Function name, or ``<function>:loop@<line>`` for a loop (``<function>:loop@<line>:<column>``
        when two loops of the function start on the same line).
    kind : str
        ``"function"`` or ``"loop"``.
    file, line, end_line, column : str, int, int, int
        Where the kernel starts (``column`` of its first token) and the last line of its body.
    depth : int
        Loop nesting depth inside its function (1 for an outermost loop, 0 for functions).
    function : str
        The enclosing function.
    parameters : tuple of str
        User parameters that reach the kernel (its loop bounds, guards, or those of its callers).
    count : sympy.Expr or None
        How many times the body runs per program run, over ``sympy.Symbol`` objects named after
        the parameters; ``log2(x)`` is ``sympy.log(x, 2)``. Integer division stays as ``floor``,
        and a range that may be empty for some parameter values gives a ``Piecewise`` with 0
        otherwise, so the count is exact at every parameter value >= 1. None when undefined.
    undef_reason : str or None
        Why the count is undefined.
    note : str or None
        Caveats of a defined count, e.g. that it is per call of a function main does not call.
    parent : str or None
        The innermost enclosing region (function, loop or branch block) within the function;
        its count is how often this loop is entered. None for functions.
    all_parameters : tuple of str
        Every parameter of the report (the user's and those annotations introduced).
    end_column : int
        For a condition block (an operand of ``?:``, ``&&``, ``||``): the column just past its
        last token on ``end_line``; 0 otherwise.
    varying : bool
        For a loop: True when its iterations per entry depend on the variable of a loop around
        it (a triangular loop, ``k < j``), so entries differ; False otherwise.
    step : int or None
        For a loop: the size of its additive step when a constant (2 for ``j += 2``), None when
        it is not one; 1 for other kernels.
    always_entered : bool
        For a loop: True when every entry runs at least one iteration, for every value of the
        parameters (>= 1) and of the variables of the loops around it (``j = i + 1 <= n``
        inside ``i < n``); False when that cannot be shown, and for other kernels.
    """

    name: str
    kind: str
    file: str
    line: int
    end_line: int
    depth: int
    function: str
    parameters: tuple[str, ...]
    count: sympy.Expr | None
    undef_reason: str | None
    column: int = 1
    note: str | None = None
    parent: str | None = None
    all_parameters: tuple[str, ...] = field(default=(), compare=False, repr=False)
    end_column: int = field(default=0, compare=False, repr=False)
    varying: bool = field(default=False, compare=False, repr=False)
    step: int | None = field(default=1, compare=False, repr=False)
    always_entered: bool = field(default=False, compare=False, repr=False)

    def to_model(self) -> Model | None:
        """The count as a :class:`~perfcast.core.function.Model` (metric ``"count"``).

        Only when the count is exactly a constant plus terms that are products of powers and
        ``log2`` powers of parameters; None otherwise (floor, ceiling, Piecewise, Max, ...).
        """
        if self.count is None:
            return None
        return _model(self.count, self.name, self.all_parameters or self.parameters)

    def approximate_model(self) -> Model | None:
        """The model of the count with ``floor``/``ceiling`` dropped (their arguments kept) and
        each ``Piecewise`` replaced by its first branch (the one for large parameters).

        An approximation for choosing model terms; use :meth:`to_model` for exact counts.
        None when the count is undefined or still not of model form (e.g. ``Min``).
        """
        if self.count is None:
            return None
        smooth = self.count.replace(
            lambda e: isinstance(e, sympy.floor | sympy.ceiling), lambda e: e.args[0]
        ).replace(lambda e: isinstance(e, sympy.Piecewise), lambda e: e.args[0][0])
        return _model(sympy.expand(smooth), self.name, self.all_parameters or self.parameters)

    def expression(self) -> str | None:
        """The count as text (see :func:`expression_text`), None when undefined."""
        return None if self.count is None else expression_text(self.count)

    def to_dict(self) -> dict[str, Any]:
        """The kernel's JSON form."""
        model = self.to_model()
        return {
            "name": self.name,
            "kind": self.kind,
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line,
            "column": self.column,
            "depth": self.depth,
            "function": self.function,
            "parameters": list(self.parameters),
            "count": None if model is None else model.to_dict(with_quality=False),
            "expression": self.expression(),
            "undef_reason": self.undef_reason,
            "note": self.note,
            "parent": self.parent,
        }


def _model(count: sympy.Expr, kernel: str, parameters: tuple[str, ...]) -> Model | None:
    from perfcast.core.function import Factor, Model, Term

    names = set(parameters)
    if any(str(s) not in names for s in count.free_symbols):
        return None
    constant = 0.0
    terms: list[Term] = []
    for term in sympy.Add.make_args(sympy.expand(count)):
        coefficient = sympy.Integer(1)
        exponents: dict[str, Fraction] = {}
        logs: dict[str, int] = {}
        for factor in sympy.Mul.make_args(term):
            base, power = factor.as_base_exp()
            if factor.is_number:
                coefficient *= factor
            elif isinstance(base, sympy.Symbol) and power.is_Rational:
                exponents[str(base)] = Fraction(int(power.p), int(power.q))
            elif (
                isinstance(base, sympy.log)
                and isinstance(base.args[0], sympy.Symbol)
                and power.is_Integer
                and power > 0
            ):
                logs[str(base.args[0])] = int(power)
                coefficient *= sympy.log(2) ** power
            else:
                return None
        value = complex(sympy.N(coefficient))
        if value.imag:
            return None
        factors = tuple(
            Factor(name, exponents.get(name, Fraction(0)), logs.get(name, 0))
            for name in sorted(set(exponents) | set(logs))
        )
        if factors:
            terms.append(Term(value.real, factors))
        else:
            constant += value.real
    return Model(kernel, "count", tuple(parameters), constant, tuple(terms))


#: How a diagnostic about a branch taken as an error path ends
#: (:meth:`StaticReport.shown_diagnostics`).
ERROR_PATH_NOTE = "counted as an error path that never runs"


@dataclass
class StaticReport:
    """All kernels of the analysed sources plus clang's and the analysis' diagnostics.

    ``branches`` holds the then- and else-blocks of every ``if`` (kind ``"branch"``, named
    ``<function>:if@<line>:then|else``, depth = number of enclosing loops) with their counts, so
    that code inside a branch can be attributed the right count (:meth:`count_at`), and the
    body of every ``switch`` (``<function>:switch@<line>:cases``, count undefined: which case
    runs is not analysed).
    ``conditions`` holds, inside and outside loops, the operands of ``?:``, ``&&`` and ``||``
    that run only under their condition (kind ``"condition"``, named
    ``<function>:cond@<line>:then|else``, ``<function>:and@<line>:right``,
    ``<function>:or@<line>:right``, with ``:<column>`` after the line when a line holds two),
    so that the instruction mix can count a block of machine
    code the compiler keeps for one of them; they are not part of the JSON.
    ``build_values`` holds the value the sources give each parameter that is an object-like
    macro of a plain number (a ``-D`` flag or a ``#define``): the values of the build, where
    the instruction mix checks its counts (not part of the JSON).
    """

    kernels: list[StaticKernel]
    diagnostics: list[str]
    parameters: tuple[str, ...] = ()
    fingerprints: dict[str, str] = field(default_factory=dict, repr=False)
    branches: list[StaticKernel] = field(default_factory=list)
    conditions: list[StaticKernel] = field(default_factory=list)
    build_values: dict[str, float] = field(default_factory=dict, repr=False)

    def shown_diagnostics(self, error_paths: int = 10) -> list[str]:
        """The diagnostics to show a person: every one, except that after the first
        ``error_paths`` notes of branches counted as error paths (a large file has hundreds)
        one line counts the rest; :attr:`diagnostics` keeps them all.

        Parameters
        ----------
        error_paths : int
            How many error-path notes to show in full.

        Returns
        -------
        list of str
        """
        shown: list[str] = []
        seen = 0
        for message in self.diagnostics:
            if message.endswith(ERROR_PATH_NOTE):
                seen += 1
                if seen > error_paths:
                    continue
            shown.append(message)
        hidden = seen - error_paths
        if hidden > 0:
            shown.append(
                f"... and {hidden} more branches {ERROR_PATH_NOTE} (every one is in the JSON "
                "report's diagnostics)"
            )
        return shown

    def kernel(self, name: str) -> StaticKernel:
        """The kernel called ``name`` (KeyError when there is none)."""
        for kernel in self.kernels:
            if kernel.name == name:
                return kernel
        raise KeyError(name)

    def kernel_at(self, file: str, line: int) -> StaticKernel | None:
        """The innermost kernel whose source range holds ``line`` of ``file`` (None if none).

        ``file`` matches a kernel's file exactly or by its final name component.
        """
        best = None
        for kernel in self.kernels:
            same = kernel.file == file or Path(kernel.file).name == Path(file).name
            inner = best is None or (kernel.line, -kernel.end_line) > (best.line, -best.end_line)
            if same and kernel.line <= line <= kernel.end_line and inner:
                best = kernel
        return best

    def region_at(self, file: str, line: int) -> StaticKernel | None:
        """The innermost kernel or branch block holding ``line`` of ``file`` (None if none).

        Its ``count`` is how often code on that line runs per program run (for straight-line
        code of the region).
        """
        best = None
        for region in self.kernels + self.branches:
            same = region.file == file or Path(region.file).name == Path(file).name
            inner = best is None or (region.line, -region.end_line) > (best.line, -best.end_line)
            if same and region.line <= line <= region.end_line and inner:
                best = region
        return best

    def clusters(self) -> list[list[str]]:
        """Groups of two or more loops with the same dependence structure up to names."""
        groups: dict[str, list[str]] = {}
        for kernel in self.kernels:
            fingerprint = self.fingerprints.get(kernel.name)
            if fingerprint is not None:
                groups.setdefault(fingerprint, []).append(kernel.name)
        return [names for names in groups.values() if len(names) > 1]

    def with_values(self, values: Mapping[str, float]) -> StaticReport:
        """The report with some parameters fixed: their values put into every count.

        Parameters
        ----------
        values : mapping of str to float
            Parameter name -> value (whole numbers stay exact integers).

        Returns
        -------
        StaticReport
            Counts over the other parameters only; the fixed names are left out of every
            kernel's parameters.

        Raises
        ------
        InputError
            When a value is negative (outside the domain the counts hold in).
        """
        check_parameter_values(values, "fixed parameters")

        def exact(value: float) -> sympy.Expr:
            return sympy.Integer(int(value)) if float(value).is_integer() else sympy.Float(value)

        def fix(kernel: StaticKernel) -> StaticKernel:
            count = kernel.count
            if count is not None:
                by_name = {s.name: s for s in count.free_symbols if isinstance(s, sympy.Symbol)}
                count = count.xreplace(
                    {by_name[n]: exact(v) for n, v in values.items() if n in by_name}
                )
            return replace(
                kernel,
                count=count,
                parameters=tuple(p for p in kernel.parameters if p not in values),
                all_parameters=tuple(p for p in kernel.all_parameters if p not in values),
            )

        return StaticReport(
            [fix(k) for k in self.kernels],
            list(self.diagnostics),
            tuple(p for p in self.parameters if p not in values),
            dict(self.fingerprints),
            [fix(b) for b in self.branches],
            [fix(c) for c in self.conditions],
            {n: v for n, v in self.build_values.items() if n not in values},
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON: ``{"parameters", "kernels", "branches", "clusters", "diagnostics"}``."""
        return {
            "parameters": list(self.parameters),
            "kernels": [k.to_dict() for k in self.kernels],
            "branches": [b.to_dict() for b in self.branches],
            "clusters": self.clusters(),
            "diagnostics": list(self.diagnostics),
        }


def read_static_report(path: Path) -> StaticReport:
    """Read the kernels of a static report JSON (``perfcast static --format json``).

    Parameters
    ----------
    path : Path
        The JSON file. Each kernel needs ``name``, ``kind``, ``file``, ``line``, ``end_line``,
        ``function`` and ``expression`` (null when undefined) or ``undef_reason``.

    Returns
    -------
    StaticReport
        The kernels; no diagnostics, branches or clusters.

    Raises
    ------
    InputError
        Naming the file and the kernel, when the file is not such a report.
    """
    try:
        data = parse_json(path.read_text())
    except OSError as error:
        raise InputError(f"cannot read static report: {error.strerror}", str(path)) from error
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", str(path), error.lineno) from error
    if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
        raise InputError("a static report needs a 'kernels' list", str(path))
    kernels = []
    for number, entry in enumerate(data["kernels"], start=1):
        try:
            expression = entry.get("expression")
            parameters = tuple(str(p) for p in entry.get("parameters", ()))
            kernels.append(
                StaticKernel(
                    name=str(entry["name"]),
                    kind=str(entry["kind"]),
                    file=str(entry["file"]),
                    line=int(entry["line"]),
                    end_line=int(entry["end_line"]),
                    depth=int(entry.get("depth", 0)),
                    function=str(entry.get("function") or entry["name"]),
                    parameters=parameters,
                    count=None if expression is None else parse_expression(expression, parameters),
                    undef_reason=entry.get("undef_reason"),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError, sympy.SympifyError) as error:
            raise InputError(f"kernel {number}: malformed ({error!r})", str(path)) from error
    return StaticReport(kernels, diagnostics=[])
