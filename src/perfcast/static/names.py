"""Resolve the variables an expression reads to parameters, loop variables or formulas.

A user parameter is its symbol; a loop variable is its level's symbol; a function argument is a
formal symbol replaced at each call site; a variable with one definition (an initialiser, or a
single set-up assignment at the top of its function) is the formula of that definition. Anything
else is undefined.
"""

from __future__ import annotations

from dataclasses import replace

import sympy
from clang.cindex import Cursor, CursorKind, StorageClass, TypeKind

from perfcast.static.cexpr import Translator
from perfcast.static.context import Context
from perfcast.static.cursors import children, contains, key, offset_of, operator
from perfcast.static.program import Program
from perfcast.static.symbolic import Undefined, prove_nonnegative

UNSIGNED_KINDS = frozenset(
    {
        TypeKind.UCHAR,
        TypeKind.CHAR_U,
        TypeKind.USHORT,
        TypeKind.UINT,
        TypeKind.ULONG,
        TypeKind.ULONGLONG,
        TypeKind.UINT128,
        TypeKind.BOOL,
    }
)
"""Integer types whose values are never negative."""


class Names:
    """Name resolution over one program.

    Parameters
    ----------
    program : Program
    symbols : dict
        User parameter name -> Symbol.
    top_level : dict
        Function name -> hashes of its top-level statements.
    """

    def __init__(self, program: Program, symbols: dict[str, sympy.Symbol], top_level):
        self.program = program
        self.symbols = symbols
        self.top_level = top_level
        self.formals: dict[tuple[str, int], sympy.Symbol] = {}
        # arguments a count took to be >= 0 (an unsigned type, or a remainder or division
        # that is exact only then): each call site must pass a value proved >= 0
        self.nonnegative_formals: set[sympy.Symbol] = set()

    def translator(self, context: Context, restrict: Cursor | None = None) -> Translator:
        """A translator resolving names as they are at ``context``."""
        domain = list(context.levels)

        def variable(declaration: Cursor, use: Cursor) -> sympy.Expr:
            return self._variable(declaration, use, context, restrict)

        def nonnegative(expression: sympy.Expr) -> bool:
            return prove_nonnegative(expression, domain) or self._nonnegative_if_formals_are(
                expression, domain
            )

        return Translator(
            self.program,
            self.symbols,
            variable,
            nonnegative,
            self.program.sources[0].defines if self.program.sources else {},
            self.function_of,
        )

    def _nonnegative_if_formals_are(self, expression: sympy.Expr, domain: list) -> bool:
        """True when ``expression`` is >= 0 provided the function arguments in it are (a
        callee's ``(i * m + j) % 20`` with ``m`` passed in): those arguments are then required
        to be >= 0 at every call site (:class:`perfcast.static.propagation.Propagation`)."""
        formals = expression.free_symbols & set(self.formals.values())
        if not formals:
            return False
        assumed = {f: sympy.Dummy(f.name, integer=True, nonnegative=True) for f in formals}
        if not prove_nonnegative(expression.xreplace(assumed), domain):
            return False
        self.nonnegative_formals |= formals
        return True

    def function_of(self, use: Cursor) -> str:
        """Name of the function whose body holds ``use`` ("" if none)."""
        for name, function in self.program.functions.items():
            if contains(function, use):
                return name
        return ""

    def _variable(self, declaration, use, context: Context, restrict) -> sympy.Expr:
        if declaration is None:
            raise Undefined(f"{use.spelling} has no declaration")
        name = declaration.spelling
        found = context.binding(key(declaration))
        if found is not None:
            value, loop = found
            if restrict is not None and not contains(loop, restrict):
                raise Undefined(f"{name} changes between its use and the definition using it")
            if value is None:
                raise Undefined(f"{name} is used after a non-affine update")
            return value
        if declaration.kind == CursorKind.FIELD_DECL:
            raise Undefined(f"the struct member {name} is not a parameter")
        writes = self.program.writes_of(declaration)
        if declaration.kind == CursorKind.PARM_DECL:
            if key(declaration) in self.program.address_of:
                raise Undefined(f"the argument {name} is modified in its function")
            if writes:
                value = self._straight_line(declaration, use, writes, context)
                if value is None:
                    raise Undefined(f"the argument {name} is modified in its function")
                return value
            return self.formal(declaration)
        if declaration.kind != CursorKind.VAR_DECL:
            raise Undefined(f"{name} is not a variable")
        if key(declaration) in self.program.address_of:
            raise Undefined(f"the address of {name} is taken, so it may change anywhere")
        init = self.program.initializers.get(key(declaration))
        if not writes and init is not None:
            inner = replace(context, bindings=context.bindings)
            return self.translator(inner, restrict=declaration).expression(init)
        if len(writes) == 1 and init is None:
            write = writes[0]
            function = self.program.write_function.get(write.hash, "")
            if operator(write) == "=" and write.hash in self.top_level.get(function, set()):
                same_function = function == context.function
                if same_function and offset_of(use.extent.start) < offset_of(write.extent.start):
                    raise Undefined(
                        f"{name} is used before its assignment at line {write.location.line}"
                    )
                if function == context.function or function == "main":
                    top = Context(function)
                    return self.translator(top).expression(children(write)[1])
        value = self._straight_line(declaration, use, writes, context)
        if value is not None:
            return value
        raise Undefined(
            f"{name} is not traced to the parameters "
            f"(assigned {len(writes) + (init is not None)} times)"
        )

    def _straight_line(
        self, declaration: Cursor, use: Cursor, writes: list[Cursor], context: Context
    ) -> sympy.Expr | None:
        """The value of a function's own variable or argument at ``use`` when every write of
        it is a plain ``=`` among the top-level statements of that function (straight-line
        code, run once per call in order: ``n = n + 1;`` before the loops; not a static or
        global variable, which other calls change): the value the last write before the use
        stores, its right side read as the names are there
        (earlier writes, then the initialiser or the argument). None otherwise."""
        function = context.function
        top = self.top_level.get(function, set())
        parent = declaration.semantic_parent
        own = declaration.kind == CursorKind.PARM_DECL or (
            parent is not None
            and parent.kind == CursorKind.FUNCTION_DECL
            and declaration.storage_class != StorageClass.STATIC
        )
        straight = all(
            operator(w) == "="
            and w.hash in top
            and self.program.write_function.get(w.hash) == function
            for w in writes
        )
        body = self.program.functions.get(function)
        if not own or not straight or body is None or not contains(body, use):
            return None
        before = [w for w in writes if offset_of(w.extent.end) <= offset_of(use.extent.start)]
        if not before:
            if declaration.kind == CursorKind.PARM_DECL:
                return self.formal(declaration)
            init = self.program.initializers.get(key(declaration))
            if init is None:
                raise Undefined(f"{declaration.spelling} is used before it is assigned")
            return self.translator(Context(function), restrict=declaration).expression(init)
        last = max(before, key=lambda w: offset_of(w.extent.start))
        return self.translator(Context(function)).expression(children(last)[1])

    def formal(self, declaration: Cursor) -> sympy.Symbol:
        """The symbol standing for a function argument until a call site replaces it."""
        function = declaration.semantic_parent
        arguments = list(function.get_arguments()) if function is not None else []
        index = next(i for i, a in enumerate(arguments) if key(a) == key(declaration))
        slot = (function.spelling, index)
        if slot not in self.formals:
            # an argument of an unsigned type is >= 0 (a call site must pass such a value)
            unsigned = declaration.type.get_canonical().kind in UNSIGNED_KINDS
            self.formals[slot] = sympy.Symbol(
                f"{function.spelling}.{declaration.spelling}",
                integer=True,
                nonnegative=True if unsigned else None,
            )
            if unsigned:
                self.nonnegative_formals.add(self.formals[slot])
        return self.formals[slot]
