"""``#pragma perfcast`` annotations for what the analysis cannot derive.

Syntax (one pragma per line, placed on the line(s) directly before the statement it annotates;
blank lines, comments and other pragmas may sit in between)::

    #pragma perfcast count(<expr>)        before a loop: its trip count per entry
    #pragma perfcast probability(<expr>)  before an if: share of evaluations taking the then-branch;
                                          before a statement with a ?:, && or || (and no if),
                                          inside or outside loops: share in which the first
                                          operand of its first one is true
    #pragma perfcast symbol(<name>)       before a loop: <name> stands for its unknown bound

``<expr>`` is arithmetic over numbers and names; every name becomes a parameter of the count.
Pragmas are not part of libclang's AST, so they are read from the source lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import sympy

from perfcast.core.errors import InputError

_PRAGMA = re.compile(r"^\s*#\s*pragma\s+perfcast\b(.*)$")
_FORM = re.compile(r"^\s*(count|probability|symbol)\s*\((.*)\)\s*$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_FUNCTIONS = {"log", "floor", "ceiling", "Max", "Min", "sqrt", "Rational"}


@dataclass(frozen=True)
class Annotation:
    """One parsed pragma: its kind, its value and where it was written."""

    kind: str
    value: sympy.Expr
    line: int


def parse_annotations(text: str, path: Path) -> dict[int, list[Annotation]]:
    """Map the line of each annotated statement to its annotations.

    Raises
    ------
    InputError
        For a malformed ``#pragma perfcast`` line (names the file and line).
    """
    lines = text.splitlines()
    found: dict[int, list[Annotation]] = {}
    pending: list[Annotation] = []
    in_comment = False
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if in_comment:
            in_comment = "*/" not in stripped
            continue
        match = _PRAGMA.match(line)
        if match:
            pending.append(_parse(match.group(1), path, number))
            continue
        if not stripped or stripped.startswith("//") or stripped.startswith("#"):
            continue
        if stripped.startswith("/*"):
            in_comment = "*/" not in stripped
            continue
        if pending:
            found.setdefault(number, []).extend(pending)
            pending = []
    if pending:
        raise InputError("#pragma perfcast is not followed by a statement", path, pending[0].line)
    return found


def _parse(rest: str, path: Path, line: int) -> Annotation:
    form = _FORM.match(rest)
    if not form:
        raise InputError(
            "malformed #pragma perfcast: expected count(<expr>), probability(<expr>) "
            "or symbol(<name>)",
            path,
            line,
        )
    kind, argument = form.group(1), form.group(2).strip()
    if kind == "symbol":
        if not _NAME.match(argument):
            raise InputError(f"symbol() needs a name, not {argument!r}", path, line)
        return Annotation(kind, sympy.Symbol(argument, integer=True, positive=True), line)
    try:
        names = set(re.findall(r"[A-Za-z_]\w*", argument)) - _FUNCTIONS
        symbols = {n: sympy.Symbol(n, integer=True, positive=True) for n in names}
        value = sympy.sympify(argument, locals=symbols)
    except (sympy.SympifyError, SyntaxError, TypeError) as error:
        raise InputError(f"cannot read the expression {argument!r}: {error}", path, line) from error
    if value.is_number:
        value = sympy.nsimplify(value, rational=True)
    if kind == "probability" and value.is_number and not 0 <= value <= 1:
        raise InputError(f"a probability must lie in [0, 1], not {argument}", path, line)
    return Annotation(kind, value, line)
