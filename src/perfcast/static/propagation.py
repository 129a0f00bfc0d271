"""From counts per call of a function to counts per program run, through every call site."""

from __future__ import annotations

import sympy

from perfcast.static.context import CallRecord
from perfcast.static.program import Program
from perfcast.static.symbolic import Count, Piece, Undefined, prove_nonnegative, sum_over_levels


class Propagation:
    """Multiplies counts up the call graph to ``main``.

    Parameters
    ----------
    program : Program
    calls : dict
        Call cursor hash -> :class:`CallRecord` of the walk.
    formals : dict
        ``(function, index)`` -> the symbol of that argument.
    parameters : dict
        User parameter name -> Symbol.
    nonnegative : set of Symbol, optional
        Argument symbols the counts took to be >= 0: every call site must pass a value
        proved >= 0 there, else the count is undefined.
    """

    def __init__(
        self,
        program: Program,
        calls: dict[int, CallRecord],
        formals: dict,
        parameters: dict[str, sympy.Symbol],
        nonnegative: set[sympy.Symbol] | None = None,
    ):
        self.program = program
        self.calls = calls
        self.formals = formals
        self.parameters = parameters
        self.nonnegative = nonnegative if nonnegative is not None else set()

    def per_run(self, function: str, count: Count, stack: tuple = ()) -> tuple[Count, str | None]:
        """The count per program run of something counted ``count`` times per call of ``function``.

        Returns the pieces and a note when the count is per call of a function main does not call.
        """
        if function == "main":
            return count, None
        if function in self.program.indirect_reason:
            raise Undefined(self.program.indirect_reason[function])
        sites = self.program.calls.get(function, [])
        for site in sites:
            if site.caller not in self.program.functions:
                raise Undefined(
                    f"{function} is called at {site.source.path}:{site.cursor.location.line} "
                    "from code the analysis does not walk"
                )
        if not sites:
            if "main" in self.program.functions:
                return count, f"count per call of {function}, which main does not call"
            return count, f"count per call of {function} (no main in the sources)"
        if function in stack:
            raise Undefined(f"{function} is called recursively")
        result: Count = []
        notes = set()
        for site in sites:
            record = self.calls.get(site.cursor.hash)
            where = f"{site.source.path}:{site.cursor.location.line}"
            if record is None:
                raise Undefined(f"the call of {function} at {where} is not in a countable place")
            if record.context.undef is not None:
                raise Undefined(f"the call of {function} at {where}: {record.context.undef}")
            mapping = {}
            used = set().union(*[p.value.free_symbols for p in count]) | set().union(
                *[set().union(*[c.free_symbols for c in p.conditions]) for p in count]
            )
            for index, argument in enumerate(record.arguments):
                formal = self.formals.get((function, index))
                if formal is None or formal not in used:
                    continue
                if isinstance(argument, str):
                    raise Undefined(f"argument {index + 1} of the call at {where}: {argument}")
                if formal in self.nonnegative and not prove_nonnegative(
                    argument, list(record.context.levels)
                ):
                    raise Undefined(
                        f"argument {index + 1} of the call at {where} may be negative, and "
                        f"{function} divides it or takes it as unsigned"
                    )
                mapping[formal] = argument
            mapping.update(self._named_arguments(function, record.arguments, used))
            substituted = [
                Piece(p.value.xreplace(mapping), [c.xreplace(mapping) for c in p.conditions])
                for p in count
            ]
            summed = sum_over_levels(
                list(record.context.levels),
                list(record.context.guards),
                substituted,
            )
            pieces, note = self.per_run(record.context.function, summed, stack + (function,))
            result.extend(pieces)
            if note:
                notes.add(note)
        return result, "; ".join(sorted(notes)) or None

    def _named_arguments(
        self, function: str, arguments: list, used: set
    ) -> dict[sympy.Symbol, sympy.Expr]:
        """The parameters a call passes another value for: an argument of ``function`` with a
        parameter's name is that parameter in the function's counts, which is the user's
        meaning when nothing else has the name (a driver's ``kernel(100)`` modeled over the
        kernel's ``n``); when a variable or macro of the program has it too, the name means two
        values (``main``'s ``n`` and the ``n`` of ``scale(v, 4)``), and a call that passes a
        traced value other than the parameter replaces it there."""
        declaration = self.program.functions.get(function)
        if declaration is None:
            return {}
        replaced: dict[sympy.Symbol, sympy.Expr] = {}
        for argument, formal in zip(arguments, declaration.get_arguments(), strict=False):
            symbol = self.parameters.get(formal.spelling)
            if symbol is None or symbol not in used or isinstance(argument, str):
                continue
            named_twice = formal.spelling in self.program.macros or bool(
                self.program.variables_named(formal.spelling)
            )
            if named_twice and argument != symbol:
                replaced[symbol] = argument
        return replaced


def public(expression: sympy.Expr, allowed: set[str]) -> sympy.Expr:
    """The final count over plain symbols, or Undefined when it names anything but ``allowed``."""
    stray = sorted(str(s) for s in expression.free_symbols if str(s) not in allowed)
    if stray:
        raise Undefined(
            f"the count depends on {', '.join(stray)}, which does not trace back to the parameters"
        )
    plain = {s: sympy.Symbol(str(s)) for s in expression.free_symbols}
    result = expression.xreplace(plain)
    if not result.has(sympy.Piecewise, sympy.floor, sympy.ceiling):
        result = sympy.expand(result)
    return result
