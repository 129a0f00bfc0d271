"""Recognise the loop forms whose trip count has a closed form and build their levels.

Supported: ``for``, ``while`` and ``do`` loops with one induction variable, an initial
assignment, a guard ``var <op> bound`` (``<``, ``<=``, ``>``, ``>=``, ``!=``) and an update that is
additive (``++``, ``--``, ``+= s``, ``-= s``, ``v = v + s``), multiplicative (``*= c``, ``<<= b``)
or dividing (``/= c``, ``>>= b``). Everything else raises :class:`Undefined` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import sympy
from clang.cindex import Cursor, CursorKind, TypeKind

from perfcast.static.cursors import (
    LOOPS,
    assignment_target,
    children,
    is_write,
    key,
    offset_of,
    operator,
    referenced,
    strip,
    walk,
)
from perfcast.static.symbolic import Level, Undefined, readable

COMPARISONS = {"<", "<=", ">", ">=", "!="}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
_UNSIGNED = {
    TypeKind.UINT,
    TypeKind.ULONG,
    TypeKind.ULONGLONG,
    TypeKind.USHORT,
    TypeKind.UCHAR,
    TypeKind.UINT128,
}
_FLOATING = {TypeKind.FLOAT, TypeKind.DOUBLE, TypeKind.LONGDOUBLE}


@dataclass(frozen=True)
class Update:
    """How the induction variable changes per iteration: ``add``, ``mul`` or ``div``."""

    kind: str
    amount: Cursor | None  # the step/factor expression; None for ++/--
    sign: int  # +1 or -1 for ++/--, += / -=
    shift: bool  # <<= / >>= (the amount is a bit count)


@dataclass(frozen=True)
class Header:
    """The parts of a loop header: induction variable, start, guard and update."""

    variable: Cursor  # declaration
    start: Cursor  # initial value expression
    op: str
    bound: Cursor
    update: Update
    update_statement: Cursor | None  # for while/do: the statement in the body that updates
    # ``v + c op bound`` (+1) or ``v - c op bound`` (-1): the guard is ``v op bound -+ c``
    offset: tuple[Cursor, int] | None = None


def for_parts(loop: Cursor) -> tuple[Cursor | None, Cursor | None, Cursor | None, Cursor]:
    """``(init, condition, increment, body)`` of a for statement (None for an absent part).

    clang lists only the parts present, so the semicolons of the header tell them apart; a for
    written inside a macro has no header tokens of its own, and its parts are known only when
    all three are present.
    """
    kids = children(loop)
    body = kids[-1]
    semicolons, close = _header_semicolons(loop)
    if close is None or len(semicolons) != 2:
        if len(kids) == 4:
            return kids[0], kids[1], kids[2], body
        return None, None, None, body
    parts: list[Cursor | None] = [None, None, None]
    for kid in kids[:-1]:
        start = offset_of(kid.extent.start)
        index = 0 if start < semicolons[0] else 1 if start < semicolons[1] else 2
        parts[index] = kid
    return parts[0], parts[1], parts[2], body


def _header_semicolons(loop: Cursor) -> tuple[list[int], int | None]:
    """Offsets of the two semicolons and of the closing parenthesis of a for header as written
    (no closing parenthesis when the loop comes from a macro expansion: its tokens are then
    those of the macro's definition, not where the loop stands)."""
    tokens = list(loop.get_tokens())
    start = loop.extent.start
    if (
        not tokens
        or tokens[0].spelling != "for"
        or offset_of(tokens[0].extent.start) != offset_of(start)
        or str(tokens[0].extent.start.file) != str(start.file)
    ):
        return [], None
    depth = 0
    semicolons: list[int] = []
    for token in tokens[1:]:
        spelling = token.spelling
        if spelling == "(":
            depth += 1
        elif spelling == ")":
            depth -= 1
            if depth == 0:
                return semicolons, offset_of(token.extent.start)
        elif spelling == ";" and depth == 1:
            semicolons.append(offset_of(token.extent.start))
    return semicolons, None


def loop_body(loop: Cursor) -> Cursor:
    """The body statement of any loop."""
    kids = children(loop)
    return kids[0] if loop.kind == CursorKind.DO_STMT else kids[-1]


def exits(body: Cursor, ignored: frozenset[int] = frozenset()) -> str | None:
    """Describe a second exit (break, return, goto) out of the loop body, if any.

    Statements whose hash is in ``ignored`` (error paths, never taken) are not searched.
    """

    def visit(cursor: Cursor, breakable: bool) -> str | None:
        kind = cursor.kind
        if cursor.hash in ignored:
            return None
        if kind == CursorKind.BREAK_STMT and not breakable:
            return f"break at line {cursor.location.line}"
        if kind == CursorKind.RETURN_STMT:
            return f"return at line {cursor.location.line}"
        if kind in (CursorKind.GOTO_STMT, CursorKind.INDIRECT_GOTO_STMT):
            return f"goto at line {cursor.location.line}"
        if kind == CursorKind.CALL_EXPR and cursor.spelling in ("exit", "abort", "longjmp"):
            return f"call to {cursor.spelling} at line {cursor.location.line}"
        inner = breakable or kind in LOOPS or kind == CursorKind.SWITCH_STMT
        for child in children(cursor):
            found = visit(child, inner)
            if found:
                return found
        return None

    return visit(body, False)


def _comparison(condition: Cursor | None, updated: Cursor | None = None):
    """``(variable declaration, op, bound cursor, offset)`` of a guard ``v op bound`` or
    ``bound op v`` (offset None), or ``v + c op bound`` / ``v - c op bound`` (offset ``(c, 1)``
    / ``(c, -1)``: SIMD-style ``i + 4 <= n``).

    When both sides are plain variables, the one written inside ``updated`` is the loop variable;
    a shifted variable is taken only when it is the one written there.
    """
    if condition is None:
        raise Undefined("no loop guard (it ends by a break, if at all)")
    condition = strip(condition)
    if condition.kind != CursorKind.BINARY_OPERATOR:
        raise Undefined(f"the loop guard at line {condition.location.line} is not a comparison")
    op = operator(condition)
    if op not in COMPARISONS:
        raise Undefined(f"the loop guard uses {op or 'an unknown operator'}, not a comparison")
    left, right = (strip(k) for k in children(condition))
    candidates: list[tuple[Cursor, str, Cursor, tuple[Cursor, int] | None]] = []
    for side, other, this_op in ((left, right, op), (right, left, FLIP[op])):
        declaration = referenced(side) if side.kind == CursorKind.DECL_REF_EXPR else None
        if declaration is not None:
            if declaration.kind not in (CursorKind.VAR_DECL, CursorKind.PARM_DECL):
                continue
            if _mentions(other, declaration):
                raise Undefined("the loop variable appears on both sides of the guard")
            candidates.append((declaration, this_op, other, None))
    shifted = [
        (found[0], this_op, other, found[1:])
        for side, other, this_op in ((left, right, op), (right, left, FLIP[op]))
        if (found := _shifted_variable(side)) is not None and not _mentions(other, found[0])
    ]
    if updated is not None:
        chosen = [c for c in candidates + shifted if writes_in(updated, c[0])]
        candidates = chosen or candidates
    if candidates:
        return candidates[0]
    raise Undefined(f"the loop guard at line {condition.location.line} has no plain loop variable")


def _shifted_variable(side: Cursor) -> tuple[Cursor, Cursor, int] | None:
    """``(declaration of v, c, sign)`` of a guard side ``v + c``, ``c + v`` (sign 1) or
    ``v - c`` (sign -1) with ``v`` a plain variable that ``c`` does not mention; else None."""
    if side.kind != CursorKind.BINARY_OPERATOR or operator(side) not in ("+", "-"):
        return None
    first, second = (strip(k) for k in children(side))
    orders = [(first, second)] + ([(second, first)] if operator(side) == "+" else [])
    for variable, offset in orders:
        if variable.kind != CursorKind.DECL_REF_EXPR:
            continue
        declaration = referenced(variable)
        if declaration is None or declaration.kind not in (
            CursorKind.VAR_DECL,
            CursorKind.PARM_DECL,
        ):
            continue
        if not _mentions(offset, declaration):
            return declaration, offset, 1 if operator(side) == "+" else -1
    return None


def _mentions(cursor: Cursor, declaration: Cursor) -> bool:
    target = key(declaration)
    return any(
        c.kind == CursorKind.DECL_REF_EXPR and key(referenced(c)) == target for c in walk(cursor)
    )


def comma_operands(expression: Cursor) -> list[Cursor]:
    """The operands of a comma expression ``a, b, c`` in order (``[expression]`` otherwise)."""
    expression = strip(expression)
    if expression.kind == CursorKind.BINARY_OPERATOR and operator(expression) == ",":
        left, right = children(expression)
        return comma_operands(left) + comma_operands(right)
    return [expression]


def _the_operand_writing(expression: Cursor, declaration: Cursor) -> Cursor | None:
    """The one operand of a comma expression that writes ``declaration`` (the expression
    itself when it is no comma expression), or None when no operand or several write it."""
    operands = comma_operands(expression)
    if len(operands) == 1:
        return operands[0]
    writing = [o for o in operands if writes_in(o, declaration)]
    return writing[0] if len(writing) == 1 else None


def update_of(statement: Cursor, declaration: Cursor) -> Update | None:
    """The update form of ``statement`` when it writes ``declaration`` in a supported way.

    In a comma expression (``k += 7, m += 3``) the one operand that writes the variable is
    the update.
    """
    operand = _the_operand_writing(statement, declaration)
    if operand is None:
        return None
    statement = strip(operand)
    if not is_write(statement):
        return None
    target = assignment_target(statement)
    if target is None or key(target) != key(declaration):
        return None
    op = operator(statement)
    kids = children(statement)
    if statement.kind == CursorKind.UNARY_OPERATOR:
        return Update("add", None, 1 if op.endswith("++") else -1, False)
    if statement.kind == CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
        forms = {
            "+=": ("add", 1, False),
            "-=": ("add", -1, False),
            "*=": ("mul", 1, False),
            "<<=": ("mul", 1, True),
            "/=": ("div", 1, False),
            ">>=": ("div", 1, True),
        }
        if op not in forms:
            raise Undefined(f"the loop update {op} is not affine or geometric")
        kind, sign, shift = forms[op]
        return Update(kind, kids[1], sign, shift)
    value = strip(kids[1])
    if value.kind != CursorKind.BINARY_OPERATOR:
        raise Undefined("the loop update is not of the form v = v op c")
    inner = operator(value)
    left, right = children(value)
    left_is_var = _is_variable(left, declaration)
    right_is_var = _is_variable(right, declaration)
    forms = {"+": ("add", 1, False), "-": ("add", -1, False), "*": ("mul", 1, False)}
    forms |= {"<<": ("mul", 1, True), "/": ("div", 1, False), ">>": ("div", 1, True)}
    if inner in forms and left_is_var and not _mentions(right, declaration):
        kind, sign, shift = forms[inner]
        return Update(kind, right, sign, shift)
    if inner in ("+", "*") and right_is_var and not _mentions(left, declaration):
        kind, sign, shift = forms[inner]
        return Update(kind, left, sign, shift)
    raise Undefined("the loop update is neither affine nor geometric in the loop variable")


def _is_variable(cursor: Cursor, declaration: Cursor) -> bool:
    cursor = strip(cursor)
    return cursor.kind == CursorKind.DECL_REF_EXPR and key(referenced(cursor)) == key(declaration)


def writes_in(cursor: Cursor, declaration: Cursor, skip: Cursor | None = None) -> list[Cursor]:
    """Writes of ``declaration`` inside ``cursor`` (excluding the sub-tree ``skip``)."""
    target = key(declaration)
    found = []

    def visit(node: Cursor) -> None:
        if skip is not None and node.hash == skip.hash:
            return
        if is_write(node):
            written = assignment_target(node)
            if written is not None and key(written) == target:
                found.append(node)
        if node.kind == CursorKind.UNARY_OPERATOR and operator(node) == "&":
            inner = strip(children(node)[0])
            if inner.kind == CursorKind.DECL_REF_EXPR and key(referenced(inner)) == target:
                found.append(node)
        for child in children(node):
            visit(child)

    visit(cursor)
    return found


def header(loop: Cursor, preceding: list[Cursor]) -> Header:
    """Recognise the loop's induction variable, start, guard and update."""
    if loop.kind == CursorKind.FOR_STMT:
        init, condition, increment, body = for_parts(loop)
        if condition is None and _header_semicolons(loop)[1] is None:
            raise Undefined(
                "the for loop comes from a macro and leaves out part of its header, so the "
                "parts cannot be told apart"
            )
        variable, op, bound, offset = _comparison(condition, increment)
        if init is not None:
            start = _initial(init, variable)
            if start is None:
                raise Undefined(
                    f"the loop's initialisation does not assign its variable {variable.spelling}"
                )
        else:
            start = _start_before(preceding, variable)
        if increment is None:
            raise Undefined("the loop has no update of its variable")
        update = update_of(increment, variable)
        if update is None:
            raise Undefined("the loop update does not change the guarded variable")
        modified = writes_in(body, variable)
        if modified:
            raise Undefined(
                f"the loop variable {variable.spelling} is modified in the body at line "
                f"{modified[0].location.line}"
            )
        return Header(variable, start, op, bound, update, None, offset)
    kids = children(loop)
    body, condition = (kids[0], kids[1]) if loop.kind == CursorKind.DO_STMT else (kids[1], kids[0])
    variable, op, bound, offset = _comparison(condition, body)
    statements = children(body) if body.kind == CursorKind.COMPOUND_STMT else [body]
    updating = [s for s in statements if writes_in(s, variable)]
    if len(updating) != 1:
        raise Undefined(
            f"the loop variable {variable.spelling} is not updated exactly once per iteration"
        )
    update = update_of(updating[0], variable)
    if update is None:
        raise Undefined(f"the update of {variable.spelling} is not a plain statement")
    if len(writes_in(updating[0], variable)) != 1:
        raise Undefined(f"{variable.spelling} is written twice in one statement")
    if any(c.kind == CursorKind.CONTINUE_STMT for c in outside_inner_loops(body)):
        raise Undefined("continue may skip the update of the loop variable")
    start = _start_before(preceding, variable)
    return Header(variable, start, op, bound, update, updating[0], offset)


def _start_before(preceding: list[Cursor], variable: Cursor) -> Cursor:
    """The value of the last assignment of ``variable`` among the statements before a loop, or
    the for loop stepping it last (its exit value is the start: ``for (; i < n; i++)`` after
    ``for (i = 0; i + 4 <= n; i += 4)``)."""
    for statement in reversed(preceding):
        if statement.kind == CursorKind.FOR_STMT and _steps(statement, variable):
            return statement  # the loop's exit value (a remainder loop after an unrolled one)
        if writes_in(statement, variable) or _declares(statement, variable):
            start = _initial(statement, variable)
            if start is None:
                raise Undefined(
                    f"{variable.spelling} is last set before the loop at line "
                    f"{statement.location.line} by something other than a plain assignment"
                )
            return start
    raise Undefined(
        f"no assignment of the loop variable {variable.spelling} before the loop in its block"
    )


def _steps(loop: Cursor, variable: Cursor) -> bool:
    """True when ``variable`` is what the for loop's update writes and its body does not."""
    _, _, increment, body = for_parts(loop)
    return (
        increment is not None
        and bool(writes_in(increment, variable))
        and not writes_in(body, variable)
    )


def outside_inner_loops(cursor: Cursor) -> Iterator[Cursor]:
    """Every node under ``cursor`` except those inside nested loops and switches."""
    for child in children(cursor):
        yield child
        if child.kind not in LOOPS and child.kind != CursorKind.SWITCH_STMT:
            yield from outside_inner_loops(child)


def _declares(statement: Cursor, variable: Cursor) -> bool:
    return statement.kind == CursorKind.DECL_STMT and any(
        key(c) == key(variable) for c in children(statement)
    )


def _initial(statement: Cursor, variable: Cursor) -> Cursor | None:
    """The value assigned to ``variable`` by ``statement`` (``v = e`` or a declaration)."""
    from perfcast.static.program import initializer

    if statement.kind == CursorKind.DECL_STMT:
        for declaration in children(statement):
            if key(declaration) == key(variable):
                return initializer(declaration)
        return None
    operands = comma_operands(statement)
    operand = _the_operand_writing(statement, variable)
    if operand is None:
        return None
    before = operands[: operands.index(operand)] if len(operands) > 1 else []
    statement = strip(operand)
    if statement.kind == CursorKind.BINARY_OPERATOR and operator(statement) == "=":
        target = assignment_target(statement)
        if target is not None and key(target) == key(variable):
            value = children(statement)[1]
            if _mentions(value, variable):
                return None
            # ``m = 0, k = m``: the value read another operand's write, not the one before
            # the statement that name resolution would find.
            if any(_mentions(value, written) for written in _written_by(before)):
                return None
            return value
    return None


def _written_by(expressions: list[Cursor]) -> list[Cursor]:
    """Declarations written by plain assignments, increments or compound assignments."""
    found = []
    for expression in expressions:
        for node in walk(expression):
            if is_write(node):
                target = assignment_target(node)
                if target is not None:
                    found.append(target)
    return found


def variable_type_problem(variable: Cursor, descending: bool, op: str) -> str | None:
    """A reason the variable's type makes the count unsafe (floating point, unsigned wrap)."""
    kind = variable.type.get_canonical().kind
    if kind in _FLOATING:
        return f"the loop variable {variable.spelling} is floating point"
    if kind in _UNSIGNED and descending and op in (">=", "!="):
        return f"the unsigned loop variable {variable.spelling} may wrap around"
    return None


def make_level(
    header: Header,
    start: sympy.Expr,
    bound: sympy.Expr,
    amount: sympy.Expr | None,
    prove,
    kind: str,
    line: int,
    name: str,
) -> Level:
    """The :class:`Level` of a recognised loop (``kind`` is for/while/do)."""
    update = header.update
    op = header.op
    variable = sympy.Dummy(name, integer=True)
    counter = sympy.Dummy(f"k{line}", integer=True, nonnegative=True)
    if update.kind == "add":
        step = update.sign * (amount if amount is not None else sympy.Integer(1))
        if step.is_number and step == 0:
            raise Undefined("the loop step is zero")
        if not (prove(step - 1) or prove(-step - 1)):
            raise Undefined(f"the sign of the step {readable(step)} is unknown")
        descending = not prove(step - 1)
        problem = variable_type_problem(header.variable, descending, op)
        if problem:
            raise Undefined(problem)

        def build(first):
            return _additive(first, bound, step, op, descending, variable, counter, line)

        after_one = start + step
    else:
        if amount is None:
            raise Undefined("geometric update without factor")
        factor = 2**amount if update.shift else amount
        if not (factor.is_Integer and factor >= 2):
            raise Undefined(f"the geometric factor {readable(factor)} is not a constant >= 2")
        if update.kind == "mul":

            def build(first):
                return _multiplying(first, bound, factor, op, variable, counter, line, prove)

            after_one = start * factor
        else:

            def build(first):
                return _dividing(first, bound, factor, op, variable, counter, line, prove)

            after_one = sympy.floor(start / factor)
    level = build(start)
    if kind != "do":
        return level
    rest = build(after_one)
    open_conditions = [e for e in rest.nonempty if not prove(e)]
    trip = rest.trip
    if open_conditions:
        if rest.strict:
            raise Undefined("cannot show that the do loop's guard is ever met")
        condition = sympy.And(*[sympy.Ge(e, 0) for e in open_conditions])
        trip = sympy.Piecewise((trip, condition), (0, True))
    # The first iteration runs even when the start lies outside the guard's range; keep the
    # relaxed range only when it provably contains the start.
    inside = (
        level.low is not None
        and level.high is not None
        and prove(start - level.low)
        and prove(level.high - start)
    )
    return Level(
        variable,
        counter,
        level.value,
        1 + trip,
        (),
        False,
        level.low if inside else None,
        level.high if inside else None,
        level.step,
        level.start,
        line,
        level.factor,
    )


def _additive(start, bound, step, op, descending, variable, counter, line) -> Level:
    magnitude = -step if descending else step
    if not descending:
        if op in (">", ">="):
            raise Undefined("the update moves the loop variable away from its bound")
        if op == "<":
            trip, nonempty, high = _ceil_div(bound - start, magnitude), bound - start, bound - 1
        elif op == "<=":
            trip = sympy.floor((bound - start) / magnitude) + 1
            nonempty, high = bound - start + 1, bound
        else:
            if magnitude != 1:
                raise Undefined("a != guard with a step other than 1 may never be met")
            trip, nonempty, high = bound - start, bound - start, bound - 1
        return Level(
            variable,
            counter,
            start + step * counter,
            sympy.expand(trip),
            (nonempty,),
            op == "!=",
            start,
            high,
            step,
            start,
            line,
        )
    if op in ("<", "<="):
        raise Undefined("the update moves the loop variable away from its bound")
    if op == ">":
        trip, nonempty, low = _ceil_div(start - bound, magnitude), start - bound, bound + 1
    elif op == ">=":
        trip = sympy.floor((start - bound) / magnitude) + 1
        nonempty, low = start - bound + 1, bound
    else:
        if magnitude != 1:
            raise Undefined("a != guard with a step other than 1 may never be met")
        trip, nonempty, low = start - bound, start - bound, bound + 1
    return Level(
        variable,
        counter,
        start + step * counter,
        sympy.expand(trip),
        (nonempty,),
        op == "!=",
        low,
        start,
        step,
        start,
        line,
    )


def _ceil_div(numerator: sympy.Expr, divisor: sympy.Expr) -> sympy.Expr:
    if divisor == 1:
        return numerator
    return sympy.ceiling(numerator / divisor)


def _multiplying(start, bound, factor, op, variable, counter, line, prove) -> Level:
    if not prove(start - 1):
        raise Undefined(f"the geometric loop may start at {readable(start)} <= 0 and never end")
    if op == "<":
        trip = sympy.ceiling(sympy.log(bound / start, factor))
        high = bound - 1
    elif op == "<=":
        trip = sympy.floor(sympy.log(bound / start, factor)) + 1
        high = bound
    else:
        raise Undefined("a geometric loop must be guarded by < or <=")
    return Level(
        variable,
        counter,
        start * factor**counter,
        trip,
        (bound - start,),
        False,
        start,
        high,
        None,
        start,
        line,
        factor,
    )


def _dividing(start, bound, factor, op, variable, counter, line, prove) -> Level:
    if op == "!=" and bound == 0 and prove(start):
        op = ">"
    if op == ">":
        if not prove(bound):
            raise Undefined(f"the halving loop's bound {readable(bound)} may be negative")
        trip = sympy.floor(sympy.log(start / (bound + 1), factor)) + 1
        nonempty, low = start - bound - 1, bound + 1
    elif op == ">=":
        if not prove(bound - 1):
            raise Undefined(
                f"the halving loop's bound {readable(bound)} may be <= 0 and never be passed"
            )
        trip = sympy.floor(sympy.log(start / bound, factor)) + 1
        nonempty, low = start - bound, bound
    else:
        raise Undefined("a dividing loop must be guarded by > or >=")
    return Level(
        variable,
        counter,
        sympy.floor(start / factor**counter),
        trip,
        (nonempty,),
        False,
        low,
        start,
        None,
        start,
        line,
    )
