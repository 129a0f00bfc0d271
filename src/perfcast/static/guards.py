"""Turn the condition of an ``if`` into guard constraints on the enclosing loop levels.

``a < b``, ``a == b``, ``!c``, ``c && d``, ``c || d`` and plain values (a test against zero)
become :class:`~perfcast.static.symbolic.Bound` and ``Condition`` constraints, negated where the
condition is, so that the nested sums count only the iterations where the branch runs.
"""

from __future__ import annotations

import sympy
from clang.cindex import Cursor, CursorKind

from perfcast.static.context import Context
from perfcast.static.cursors import children, operator, strip
from perfcast.static.names import Names
from perfcast.static.symbolic import Factor, Negation, Residue, Undefined, constraint

NEGATE = {"<": ">=", ">=": "<", "<=": ">", ">": "<=", "==": "!=", "!=": "=="}


class Guards:
    """Guard constraints of conditions, with names resolved as they are at a context.

    Parameters
    ----------
    names : Names
        Name resolution of the program the conditions come from.
    """

    def __init__(self, names: Names) -> None:
        self.names = names

    def of(self, condition: Cursor, context: Context, positive: bool) -> list:
        """The constraints under which ``condition`` is true (``positive``) or false.

        Raises
        ------
        Undefined
            When the condition uses an operator or expression that cannot be a constraint.
        """
        condition = strip(condition)
        if condition.kind == CursorKind.UNARY_OPERATOR and operator(condition) == "!":
            return self.of(children(condition)[0], context, not positive)
        op = operator(condition) if condition.kind == CursorKind.BINARY_OPERATOR else ""
        if op not in NEGATE and op not in ("&&", "||"):
            # A plain value is a test against zero: `if (x)` means `x != 0`.
            value = sympy.expand(self.names.translator(context).expression(condition))
            remainder = _remainder_test(value, context)
            if remainder is not None:
                return [Negation(tuple(remainder))] if positive else remainder
            zero = self._constraint(value, ">=", context) + self._constraint(value, "<=", context)
            return [Negation(tuple(zero))] if positive else zero
        left, right = children(condition)
        if op in ("&&", "||"):
            if (op == "&&") == positive:
                return self.of(left, context, positive) + self.of(right, context, positive)
            negated = self.of(left, context, not positive) + self.of(right, context, not positive)
            return [Negation(tuple(negated))]
        translator = self.names.translator(context)
        difference = sympy.expand(translator.expression(left) - translator.expression(right))
        op = op if positive else NEGATE[op]
        remainder = _remainder_test(difference, context) if op in ("==", "!=") else None
        if remainder is not None:
            return remainder if op == "==" else [Negation(tuple(remainder))]
        if op == "==":
            return self._constraint(difference, ">=", context) + self._constraint(
                difference, "<=", context
            )
        if op == "!=":
            equal = self._constraint(difference, ">=", context) + self._constraint(
                difference, "<=", context
            )
            return [Negation(tuple(equal))]
        return self._constraint(difference, op, context)

    @staticmethod
    def _constraint(difference: sympy.Expr, op: str, context: Context) -> list:
        normal = {"<": -difference - 1, "<=": -difference, ">": difference - 1, ">=": difference}
        return constraint(sympy.expand(normal[op]), list(context.levels))


def _remainder_test(difference: sympy.Expr, context: Context) -> list | None:
    """The guards of ``difference == 0`` when it is ``c * (e % m) + d`` over loop variables.

    None when ``difference`` holds no remainder of a loop variable. A remainder that can
    never take the tested value gives a zero factor.
    """
    variables = {level.variable for level in context.levels}
    remainders = [m for m in difference.atoms(sympy.Mod) if m.args[0].free_symbols & variables]
    if not remainders:
        return None
    if len(remainders) > 1:
        raise Undefined("the condition tests several remainders")
    remainder = remainders[0]
    expression, modulus = remainder.args
    if not (modulus.is_Integer and modulus > 0):
        raise Undefined(f"the remainder {remainder} is not by a positive constant")
    placeholder = sympy.Dummy("remainder")
    linear = sympy.expand(difference.xreplace({remainder: placeholder}))
    slope = sympy.diff(linear, placeholder)
    rest = sympy.expand(linear - slope * placeholder)
    if not slope.is_Integer or slope == 0 or not rest.is_Rational:
        raise Undefined(f"the condition on the remainder {remainder} is not a plain comparison")
    value = -rest / slope
    if not value.is_Integer or not 0 <= value < modulus:
        return [Factor(sympy.Integer(0))]
    return [Residue(expression, int(modulus), int(value))]
