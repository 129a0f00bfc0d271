"""Translate C integer expressions (clang cursors) into sympy expressions.

Only what is exact for integers becomes a formula: ``+ - *``, ``/`` and ``>>`` as floor division
of non-negative values, ``<<`` by a constant, ``%`` of non-negative values, literals, macros and
variables the caller can resolve. Anything else raises :class:`Undefined` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sympy
from clang.cindex import Cursor, CursorKind, TypeKind

from perfcast.static.cursors import children, integer_value, offset_of, operator, spelling_location
from perfcast.static.program import Program
from perfcast.static.symbolic import Undefined

_SIGNED_TYPES = frozenset(
    {
        TypeKind.CHAR_S,
        TypeKind.SCHAR,
        TypeKind.SHORT,
        TypeKind.INT,
        TypeKind.LONG,
        TypeKind.LONGLONG,
        TypeKind.INT128,
    }
)
_INTEGER_TYPES = _SIGNED_TYPES | {
    TypeKind.CHAR_U,
    TypeKind.UCHAR,
    TypeKind.USHORT,
    TypeKind.UINT,
    TypeKind.ULONG,
    TypeKind.ULONGLONG,
    TypeKind.UINT128,
}
_INTEGER = re.compile(r"^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uUlL]*$")
_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|<<|>>|[-+*/%()])")


def integer_literal(text: str) -> int | None:
    """The value of a C integer literal, or None."""
    match = _INTEGER.match(text)
    if not match:
        return None
    return (
        int(match.group(1), 0)
        if not re.fullmatch(r"0[0-7]+", match.group(1))
        else int(match.group(1), 8)
    )


class Translator:
    """Turns expression cursors into sympy, resolving names through callbacks.

    Parameters
    ----------
    program : Program
        Macro definitions and instantiations.
    parameters : dict
        User parameter name -> Symbol.
    variable : callable
        ``variable(declaration, use)`` -> Expr for a referenced variable, or raises Undefined.
    nonnegative : callable
        ``nonnegative(expr)`` -> True when provably >= 0 where the expression is used.
    defines : dict
        Macros from ``-D`` flags.
    function_of : callable
        ``function_of(use)`` -> name of the function containing a use.
    """

    def __init__(
        self,
        program: Program,
        parameters: dict[str, sympy.Symbol],
        variable: Callable[[Cursor, Cursor], sympy.Expr],
        nonnegative: Callable[[sympy.Expr], bool],
        defines: dict[str, str],
        function_of: Callable[[Cursor], str] = lambda _use: "",
    ):
        self.function_of = function_of
        self.program = program
        self.parameters = parameters
        self.variable = variable
        self.nonnegative = nonnegative
        self.defines = defines

    def expression(self, cursor: Cursor) -> sympy.Expr:
        """The sympy form of ``cursor``; raises Undefined when it is not exactly expressible."""
        macro = self.program.macro_at(cursor)
        if macro is not None:
            try:
                return self.macro(macro, set())
            except Undefined:
                # A function-like macro, or a body that is not plain arithmetic: read what
                # clang made of the expansion instead (its literals are checked for
                # parameter macros folded into them).
                pass
        kind = cursor.kind
        kids = children(cursor)
        if kind in (CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR) and len(kids) == 1:
            return self.expression(kids[0])
        if kind == CursorKind.CSTYLE_CAST_EXPR and kids:
            return self.expression(kids[-1])
        if kind == CursorKind.INTEGER_LITERAL:
            written_by = self._literal_macro(cursor)
            if written_by is not None:
                return self.macro(written_by, set())
            value = integer_value(cursor)
            if value is None:
                tokens = [t.spelling for t in cursor.get_tokens()]
                value = integer_literal(tokens[0]) if tokens else None
            if value is None:
                raise Undefined(f"cannot read the literal at line {cursor.location.line}")
            return sympy.Integer(value)
        if kind == CursorKind.DECL_REF_EXPR:
            referenced = cursor.referenced
            if referenced is not None and referenced.kind == CursorKind.ENUM_CONSTANT_DECL:
                return sympy.Integer(referenced.enum_value)
            if cursor.spelling in self.parameters:
                return self.parameter(referenced, cursor)
            return self.variable(referenced, cursor)
        if kind == CursorKind.MEMBER_REF_EXPR:
            if cursor.spelling in self.parameters:
                return self.parameter(cursor.referenced, cursor)
            return self.variable(cursor.referenced, cursor)
        if kind == CursorKind.UNARY_OPERATOR and kids:
            op = operator(cursor)
            if op == "-":
                return -self.expression(kids[0])
            if op == "+":
                return self.expression(kids[0])
            raise Undefined(f"unary {op or '?'} at line {cursor.location.line}")
        if kind == CursorKind.BINARY_OPERATOR and len(kids) == 2 and operator(cursor) == "=":
            return self.stored(cursor, kids[1])
        if kind == CursorKind.BINARY_OPERATOR and len(kids) == 2:
            return self.binary(operator(cursor), kids[0], kids[1], cursor.location.line)
        if kind == CursorKind.CALL_EXPR:
            raise Undefined(f"call to {cursor.spelling} at line {cursor.location.line}")
        if kind == CursorKind.ARRAY_SUBSCRIPT_EXPR:
            raise Undefined(f"data-dependent value (array element) at line {cursor.location.line}")
        if kind == CursorKind.CXX_UNARY_EXPR:  # sizeof, _Alignof: clang knows the value
            value = integer_value(cursor)
            if value is None:
                raise Undefined(f"sizeof of a variable-length type at line {cursor.location.line}")
            return sympy.Integer(value)
        what = kind.name.lower().replace("_", " ")
        raise Undefined(f"unsupported expression ({what}) at line {cursor.location.line}")

    def stored(self, assignment: Cursor, value: Cursor) -> sympy.Expr:
        """The value of the assignment expression ``assignment`` (``n = 0`` in ``j = n = 0``):
        the value stored, the translated ``value``, when the target's integer type holds it
        unchanged (at least as wide, and signed like it or wider; or a constant it holds).

        Raises
        ------
        Undefined
            When the value is not exactly expressible, or the conversion may change it.
        """
        result = self.expression(value)
        target = assignment.type.get_canonical()
        source = value.type.get_canonical()
        line = assignment.location.line
        if target.kind not in _INTEGER_TYPES or source.kind not in _INTEGER_TYPES:
            raise Undefined(f"the value of a non-integer assignment at line {line}")
        width, signed = target.get_size() * 8, target.kind in _SIGNED_TYPES
        if result.is_Integer:
            low = -(2 ** (width - 1)) if signed else 0
            high = 2 ** (width - 1) - 1 if signed else 2**width - 1
            holds = low <= int(result) <= high
        else:
            narrower = source.get_size() * 8
            same_sign = (source.kind in _SIGNED_TYPES) == signed
            holds = width >= narrower if same_sign else signed and width > narrower
        if holds:
            return result
        raise Undefined(f"the assignment at line {line} may change the value it stores")

    def _literal_macro(self, literal: Cursor) -> str | None:
        """The parameter macro a literal inside a function-like macro's expansion comes from.

        ``BOUND(x, N)`` with ``N`` a parameter leaves clang's AST a literal (N's value); it must
        read as the symbol N. libclang places such a literal at the macro written in the
        source (``N`` in the argument list, or the outer macro); None when that macro does not
        name a parameter.

        Raises
        ------
        Undefined
            When that macro computes with a parameter (``#define SIZE (N + 1)``,
            ``#define LIM BOUND(q, N)``): which part of it the literal is cannot be told.
        """
        file, offset = spelling_location(literal)
        used = self.program.instantiations.get((file, offset)) if file is not None else None
        macro = used[1] if used is not None else None
        parameters = set(self.parameters)
        if macro is None or not self.program.macro_names_parameter(macro, parameters):
            return None
        name: str | None = macro
        while name is not None and name not in parameters:
            definition = self.program.macros.get(name)
            name = definition.body[0] if definition and len(definition.body) == 1 else None
        if name is None:
            raise Undefined(
                f"macro {macro} computes with a parameter through a function-like macro at "
                f"line {literal.location.line}, so the parameter cannot stay a symbol"
            )
        return name

    def parameter(self, declaration: Cursor | None, use: Cursor) -> sympy.Expr:
        """The symbol of a user parameter, unless the program changes it after setting it.

        Every assignment of a parameter variable must be a set-up: a plain ``=`` outside any
        loop whose value does not read the variable itself (``n = atoi(argv[1])``,
        ``cfg->n = 100``), and a use in the same function must come after it. Other changes
        (``n = n / 2``, ``n++``) are only allowed after the use, in the same function and
        outside any loop around the use.
        """
        symbol = self.parameters[use.spelling]
        writes = self.program.writes_of(declaration) if declaration is not None else []
        for write in writes:
            later = (
                self.program.write_function.get(write.hash) == self.function_of(use)
                and str(write.location.file) == str(use.location.file)
                and offset_of(write.extent.start) > offset_of(use.extent.start)
            )
            if self.program.is_setup(write):
                if later:
                    raise Undefined(
                        f"the parameter {use.spelling} is used before it is set at line "
                        f"{write.location.line}"
                    )
            elif not later or self.program.in_same_loop(write, use):
                raise Undefined(
                    f"the parameter {use.spelling} is changed at line {write.location.line}"
                )
        return symbol

    def binary(self, op: str, left_cursor: Cursor, right_cursor: Cursor, line: int) -> sympy.Expr:
        """Arithmetic of two translated operands."""
        left = self.expression(left_cursor)
        right = self.expression(right_cursor)
        return self.arithmetic(op, left, right, f"line {line}")

    def arithmetic(self, op: str, left: sympy.Expr, right: sympy.Expr, where: str) -> sympy.Expr:
        """Exact integer arithmetic of C's operator ``op``."""
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if op == "<<" and right.is_Integer and right >= 0:
            return left * 2**right
        if op in ("/", ">>", "%"):
            divisor = 2**right if op == ">>" else right
            if op == ">>" and not (right.is_Integer and right >= 0):
                raise Undefined(f"shift by a non-constant at {where}")
            if not (self.nonnegative(left) and self.nonnegative(divisor - 1)):
                raise Undefined(f"division of a value that may be negative at {where}")
            if op == "%":
                return sympy.Mod(left, divisor)
            quotient = sympy.expand(left / divisor)
            if _integral(quotient):
                return quotient
            return sympy.floor(quotient)
        raise Undefined(f"operator {op or '?'} at {where}")

    def macro(self, name: str, active: set[str]) -> sympy.Expr:
        """The value of an object-like macro, with user parameters as symbols."""
        if name in self.parameters:
            return self.parameters[name]
        if name in active:
            raise Undefined(f"macro {name} expands to itself")
        definition = self.program.macros.get(name)
        if definition is not None:
            if definition.function_like:
                raise Undefined(f"function-like macro {name}")
            tokens = list(definition.body)
        elif name in self.defines:
            tokens = _tokenize(self.defines[name])
        else:
            raise Undefined(f"macro {name} has no visible definition")
        return _MacroParser(self, tokens, active | {name}, name).parse()


def _integral(expression: sympy.Expr) -> bool:
    """True when a polynomial has integer coefficients (so it is integer for integer inputs)."""
    if not expression.free_symbols:
        return bool(expression.is_integer)
    try:
        polynomial = sympy.Poly(expression, *sorted(expression.free_symbols, key=str))
    except sympy.PolynomialError:
        return False
    return all(c.is_integer for c in polynomial.coeffs())


def _tokenize(text: str) -> list[str]:
    tokens = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            if text[position:].strip():
                raise Undefined(f"cannot read macro text {text!r}")
            break
        tokens.append(match.group(1))
        position = match.end()
    return tokens


class _MacroParser:
    """Recursive descent over a macro body: shifts, sums, products, unary signs, parentheses."""

    def __init__(self, translator: Translator, tokens: list[str], active: set[str], name: str):
        self.translator = translator
        self.tokens = tokens
        self.position = 0
        self.active = active
        self.name = name

    def parse(self) -> sympy.Expr:
        if not self.tokens:
            raise Undefined(f"macro {self.name} is empty")
        value = self.shift()
        if self.position != len(self.tokens):
            raise Undefined(f"cannot read the body of macro {self.name}")
        return value

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise Undefined(f"cannot read the body of macro {self.name}")
        self.position += 1
        return token

    def binary_level(self, operators: tuple[str, ...], operand) -> sympy.Expr:
        value = operand()
        while self.peek() in operators:
            op = self.take()
            value = self.translator.arithmetic(op, value, operand(), f"macro {self.name}")
        return value

    def shift(self) -> sympy.Expr:
        return self.binary_level(("<<", ">>"), self.sum)

    def sum(self) -> sympy.Expr:
        return self.binary_level(("+", "-"), self.product)

    def product(self) -> sympy.Expr:
        return self.binary_level(("*", "/", "%"), self.unary)

    def unary(self) -> sympy.Expr:
        token = self.take()
        if token == "-":
            return -self.unary()
        if token == "+":
            return self.unary()
        if token == "(":
            value = self.shift()
            if self.take() != ")":
                raise Undefined(f"unbalanced parentheses in macro {self.name}")
            return value
        literal = integer_literal(token)
        if literal is not None:
            return sympy.Integer(literal)
        if re.fullmatch(r"[A-Za-z_]\w*", token):
            return self.translator.macro(token, self.active)
        raise Undefined(f"cannot read {token!r} in macro {self.name}")
