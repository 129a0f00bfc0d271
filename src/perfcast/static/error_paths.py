"""Error paths: branches that end the program or report a failure, taken with probability 0.

A branch whose last statement calls a function that does not return (``exit``, ``abort``, a
function of the sources declared ``_Noreturn`` or ``__attribute__((noreturn))``, or one whose
body ends in such a call) is an error path; so is one that returns a failure status from ``main``
(a nonzero constant, ``EXIT_FAILURE``) or a negative constant elsewhere, unless its guard reads
a model parameter, or reports to ``stderr`` before it returns. The counting takes such a branch
with probability 0 (its code never runs) and its alternative with probability 1, and says so in
a note, so that the loop or the function holding the check is still counted. A
``probability`` annotation on the ``if`` overrides this. A lone ``return`` of a constant under a
range check of the function's arguments (``row < 2 || row > 500``) or under a null test of a
pointer argument is an error path too (:func:`argument_check`; also unless the guard reads a
model parameter).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from clang.cindex import Cursor, CursorKind, SourceLocation, SourceRange, TypeKind

from perfcast.static.cursors import (
    children,
    integer_value,
    offset_of,
    operator,
    spelling_location,
    strip,
    walk,
)
from perfcast.static.library_calls import NORETURN_CALLS

_NORETURN_SPELLINGS = frozenset({"_Noreturn", "noreturn", "__noreturn__"})
_SHORT = 512  # bytes: longer values are not tokenized to tell an error constant
_REPORTERS = frozenset({"perror", "fprintf", "fputs", "vfprintf", "fputc", "putc", "fwrite"})
_PRINTERS = frozenset({"printf", "puts", "vprintf"})  # reports of a failed allocation


def noreturn_functions(functions: dict[str, Cursor]) -> set[str]:
    """Names of the library's and the sources' functions that never return.

    A function of the sources never returns when its declaration says so, or when its body
    ends in a call of one that never returns (followed until nothing changes).
    """
    found = set(NORETURN_CALLS)
    says: dict[str | None, bool] = {}
    for name, function in functions.items():
        if not _may_say_noreturn(function, says):
            continue
        body_start = next(
            (
                offset_of(k.extent.start)
                for k in children(function)
                if k.kind == CursorKind.COMPOUND_STMT
            ),
            None,
        )
        for token in function.get_tokens():
            if body_start is not None and offset_of(token.extent.start) >= body_start:
                break
            if token.spelling in _NORETURN_SPELLINGS:
                found.add(name)
                break
    changed = True
    while changed:
        changed = False
        for name, function in functions.items():
            if name in found:
                continue
            body = [k for k in children(function) if k.kind == CursorKind.COMPOUND_STMT]
            if body and _ends_in_noreturn(body[-1], found) is not None:
                found.add(name)
                changed = True
    return found


def _may_say_noreturn(function: Cursor, says: dict[str | None, bool]) -> bool:
    """False when no token of the function can be a noreturn specifier: libclang tokenizes a
    cursor's extent in the one file its start is spelled in, and that file's text has no
    ``oreturn`` anywhere (``_Noreturn``, ``noreturn``, ``__noreturn__``); reading a file once
    (``says`` keeps the answer per file) spares tokenizing every function of a header that
    never says it."""
    file, _ = spelling_location(function)
    found = says.get(file)
    if found is None:
        try:
            found = file is None or b"oreturn" in Path(file).read_bytes()
        except OSError:
            found = True  # unreadable here: tokenize as before
        says[file] = found
    return found


def _last_statement(statement: Cursor) -> Cursor | None:
    while statement.kind == CursorKind.COMPOUND_STMT:
        kids = children(statement)
        if not kids:
            return None
        statement = kids[-1]
    return statement


def _ends_in_noreturn(statement: Cursor, noreturn: set[str]) -> str | None:
    last = _last_statement(statement)
    if last is None:
        return None
    call = strip(last)
    if call.kind == CursorKind.CALL_EXPR and call.spelling in noreturn:
        return f"ends in a call of {call.spelling} at line {call.location.line}"
    return None


def error_path(arm: Cursor, function: str, noreturn: set[str], by_value: bool = True) -> str | None:
    """Why the branch ``arm`` (of an ``if`` in ``function``) is an error path, or None.

    Parameters
    ----------
    arm : Cursor
        The then- or else-statement.
    function : str
        Name of the enclosing function (``main`` returns an exit status).
    noreturn : set of str
        From :func:`noreturn_functions`.
    by_value : bool
        Whether a returned failure value alone (without a report to ``stderr``) marks an
        error path; the caller turns it off for a guard that reads a model parameter, whose
        early return is part of what the model describes.

    Returns
    -------
    str or None
        E.g. ``"ends in a call of exit at line 12"``.
    """
    ending = _ends_in_noreturn(arm, noreturn)
    if ending is not None:
        return ending
    last = _last_statement(arm)
    if last is None or last.kind != CursorKind.RETURN_STMT:
        return None
    line = last.location.line
    if _reports_to_stderr(arm):
        return f"reports to stderr and returns at line {line}"
    values = children(last)
    if not values or not by_value:
        return None
    value = strip(values[0])
    # The first two tokens decide; all of them are read only for the message. A value
    # expanded from a macro can have an extent spanning much of the file: tokenizing it for
    # every return made the analysis of a 27,000-line file take minutes. Such a value is no
    # constant written out (``EXIT_FAILURE``, ``-1``), so it is not tokenized. Outside main
    # only a unary minus can be an error value: other values are not tokenized either.
    if function == "main":
        head = _first_tokens(value) if _short(value) else []
        number = integer_value(value)
        if head == ["EXIT_FAILURE"] or (number is not None and number != 0):
            return f"returns the failure status {_text(value)} from main at line {line}"
        return None
    if (
        value.kind == CursorKind.UNARY_OPERATOR
        and (_first_tokens(value) if _short(value) else [])[:1] == ["-"]
        and integer_value(value) is not None
    ):
        return f"returns the error value {_text(value)} at line {line}"
    return None


def _short(value: Cursor) -> bool:
    """True when the value's extent is a short stretch of one file (a constant written out)."""
    start, end = value.extent.start, value.extent.end
    if start.file is None or end.file is None or start.file.name != end.file.name:
        return False
    return 0 <= end.offset - start.offset <= _SHORT


def _first_tokens(value: Cursor) -> list[str]:
    """The first two tokens as written where the value stands (its expansion locations: the
    cursor's own range can lie in a macro's definition and tokenize far beyond it)."""
    start, end = value.extent.start, value.extent.end
    unit = value.translation_unit
    written = SourceRange.from_locations(
        SourceLocation.from_offset(unit, start.file, start.offset),
        SourceLocation.from_offset(unit, end.file, end.offset),
    )
    return [t.spelling for t in itertools.islice(unit.get_tokens(extent=written), 2)]


def _text(value: Cursor) -> str:
    """The value as written, tokens joined by spaces, a leading sign kept with its operand
    (``-1``, not ``- 1``)."""
    tokens = [t.spelling for t in value.get_tokens()]
    if len(tokens) > 1 and tokens[0] in ("-", "+"):
        tokens[:2] = [tokens[0] + tokens[1]]
    return " ".join(tokens)


def _reports_to_stderr(arm: Cursor) -> bool:
    for node in walk(arm):
        if node.kind != CursorKind.CALL_EXPR or node.spelling not in _REPORTERS:
            continue
        if node.spelling == "perror":
            return True
        if any(t.spelling == "stderr" for t in node.get_tokens()):
            return True
    return False


_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


def argument_check(
    condition: Cursor,
    arm: Cursor,
    formals: Callable[[], set[str]],
    allocated: Callable[[], set[str]] = set,
) -> str | None:
    """Why ``if (condition) arm`` is an error check (issue 20 point 4, verify20e J6 and
    verify20f K6/K10), or None.

    Two kinds of check count:

    - a check of the function's arguments whose arm is a lone ``return C;`` with ``C`` a
      constant (``999``, ``RET_FAILURE``): a condition that ``||``-joins two or more
      comparisons, each between parameters (``formals``) and constants or other parameters, at
      least one parameter each (a range check: Embench minver's ``row < 2 || row > 500 || eps
      <= 0.0``), or a null test of a pointer parameter (``m == NULL``, ``!m``);
    - a null test of a pointer the function got from an allocation (``allocated``: ``v =
      malloc (...)``) whose arm returns a constant or only reports to ``stderr`` (Rodinia nw's
      ``if (!v) fprintf (stderr, ...)``, lud's ``if (m == NULL) return RET_FAILURE;``).

    ``formals`` and ``allocated`` give those names when asked: each a walk of the function,
    taken only for an arm of one of these shapes (most arms are not).

    A single comparison of a number (``n <= 0``, ``n < 4``) is no error check: it is an edge
    case the algorithm handles.
    """
    statements = children(arm) if arm.kind == CursorKind.COMPOUND_STMT else [arm]
    lone_return = len(statements) == 1 and statements[0].kind == CursorKind.RETURN_STMT
    values = children(statements[0]) if lone_return else []
    returns_constant = bool(values) and _is_constant(strip(values[0]))
    reports = _only_reports(arm)
    if not returns_constant and not reports:
        return None
    tests = _disjuncts(strip(condition))
    allocation = len(tests) == 1 and _null_test(tests[0], allocated())
    if allocation and reports:
        return "reports the failed allocation it tests"
    if not returns_constant:
        return None
    line = statements[0].location.line
    number = integer_value(strip(values[0]))  # the value: a macro's text may span its definition
    constant = str(number) if number is not None else _text(strip(values[0]))
    if len(tests) >= 2 and all(_compares_arguments(test, formals()) for test in tests):
        return (
            f"returns the constant {constant} at line {line} when a range check of its "
            "arguments fails"
        )
    if allocation:
        return f"returns the constant {constant} at line {line} when an allocation fails"
    if len(tests) == 1 and _null_test(tests[0], formals()):
        return f"returns the constant {constant} at line {line} for a null pointer argument"
    return None


#: functions whose null result means an allocation failed
ALLOCATORS = frozenset({"malloc", "calloc", "realloc", "aligned_alloc", "strdup", "fopen"})


def allocated_pointers(function: Cursor) -> set[str]:
    """Names of the variables a function assigns (or initialises with) the result of an
    allocation call (:data:`ALLOCATORS`)."""
    found = set()
    for node in walk(function):
        if node.kind == CursorKind.VAR_DECL:
            kids = [strip(k) for k in children(node)]
            if kids and kids[-1].kind == CursorKind.CALL_EXPR and kids[-1].spelling in ALLOCATORS:
                found.add(node.spelling)
        elif node.kind == CursorKind.BINARY_OPERATOR and operator(node) == "=":
            target, value = (strip(k) for k in children(node))
            if (
                target.kind == CursorKind.DECL_REF_EXPR
                and value.kind == CursorKind.CALL_EXPR
                and value.spelling in ALLOCATORS
            ):
                found.add(target.spelling)
    return found


def parameter_copies(function: Cursor, formals: set[str]) -> set[str]:
    """The parameters of a function and the local variables it assigns exactly once, from a
    parameter (``row_c = row_a;``, Embench minver's ``mmul``): the names a check of the
    arguments may compare."""
    values: dict[str, list[Cursor]] = {}
    for node in walk(function):
        if node.kind == CursorKind.VAR_DECL:
            kids = [strip(k) for k in children(node) if k.kind != CursorKind.TYPE_REF]
            values.setdefault(node.spelling, []).extend(kids[-1:])
        elif node.kind in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR):
            kids = children(node)
            target = strip(kids[0]) if kids else None
            if (
                target is not None
                and target.kind == CursorKind.DECL_REF_EXPR
                and (node.kind == CursorKind.COMPOUND_ASSIGNMENT_OPERATOR or operator(node) == "=")
            ):
                values.setdefault(target.spelling, []).append(strip(kids[1]))
        elif node.kind == CursorKind.UNARY_OPERATOR and operator(node) in (
            "++",
            "--",
            "post++",
            "post--",
            "&",
        ):
            operand = strip(children(node)[0])
            if operand.kind == CursorKind.DECL_REF_EXPR:
                values.setdefault(operand.spelling, []).extend([operand, operand])
    copies = {
        name
        for name, assigned in values.items()
        if name not in formals
        and len(assigned) == 1
        and assigned[0].kind == CursorKind.DECL_REF_EXPR
        and assigned[0].spelling in formals
    }
    return formals | copies


def _only_reports(arm: Cursor) -> bool:
    """Whether the arm only reports (calls of ``printf``, ``puts``, ``fprintf``, ``perror``
    and the like), then perhaps returns a constant or nothing (Rodinia backprop's ``if (new ==
    NULL) { printf (...); return (NULL); }``)."""
    statements = children(arm) if arm.kind == CursorKind.COMPOUND_STMT else [arm]
    if statements and statements[-1].kind == CursorKind.RETURN_STMT:
        values = children(statements[-1])
        if values and not _is_constant(strip(values[0])):
            return False
        statements = statements[:-1]
    return bool(statements) and all(
        strip(statement).kind == CursorKind.CALL_EXPR
        and strip(statement).spelling in _REPORTERS | _PRINTERS
        for statement in statements
    )


def _is_constant(value: Cursor) -> bool:
    return value.kind == CursorKind.FLOATING_LITERAL or integer_value(value) is not None


def _disjuncts(condition: Cursor) -> list[Cursor]:
    """The operands of a chain of ``||`` (the condition itself when it is no ``||``)."""
    if condition.kind == CursorKind.BINARY_OPERATOR and operator(condition) == "||":
        left, right = children(condition)
        return _disjuncts(strip(left)) + _disjuncts(strip(right))
    return [condition]


def _compares_arguments(test: Cursor, formals: set[str]) -> bool:
    if test.kind != CursorKind.BINARY_OPERATOR or operator(test) not in _COMPARISONS:
        return False
    sides = [strip(side) for side in children(test)]
    arguments = [side for side in sides if _is_formal(side, formals)]
    return bool(arguments) and all(
        _is_formal(side, formals) or _is_constant(side) for side in sides
    )


def _null_test(test: Cursor, formals: set[str]) -> bool:
    """``p == NULL``, ``p == 0``, ``NULL == p`` or ``!p`` for a pointer parameter ``p``."""
    if test.kind == CursorKind.UNARY_OPERATOR and operator(test) == "!":
        operand = strip(children(test)[0])
        return _is_formal(operand, formals) and operand.type.kind == TypeKind.POINTER
    if test.kind != CursorKind.BINARY_OPERATOR or operator(test) != "==":
        return False
    sides = [strip(side) for side in children(test)]
    pointers = [s for s in sides if _is_formal(s, formals) and s.type.kind == TypeKind.POINTER]
    others = [s for s in sides if not any(s == p for p in pointers)]
    return len(pointers) == 1 and len(others) == 1 and integer_value(others[0]) == 0


def _is_formal(side: Cursor, formals: set[str]) -> bool:
    return side.kind == CursorKind.DECL_REF_EXPR and side.spelling in formals
