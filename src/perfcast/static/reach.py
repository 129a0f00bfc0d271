"""Parameter reach: which user parameters flow into a kernel's loop bounds and guards.

Follows every definition of each variable a bound or guard reads (initialisers, assignments,
compound assignments), macro bodies, and function arguments back through the call sites, so a
parameter reaches a kernel whenever any data flow connects them (an over-approximation, like
the "may" points-to relation of the hybrid method).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from clang.cindex import Cursor, CursorKind

from perfcast.static.cursors import children, key, walk
from perfcast.static.program import Program


class Reach:
    """Parameter reach over one program.

    Parameters
    ----------
    program : Program
    parameters : set of str
        User parameter names.
    """

    def __init__(self, program: Program, parameters: set[str]):
        self.program = program
        self.parameters = parameters
        self.call_seeds: Callable[[int], Iterable[Cursor]] = lambda _hash: ()
        self._functions: dict[str, set[str]] = {}
        self._arguments: dict[tuple[str, int], set[str]] = {}
        self._macro_cache: dict[str, set[str]] = {}

    def kernel(self, seeds: Iterable[Cursor], function: str) -> set[str]:
        """Parameters reaching a kernel with these bound/guard expressions in ``function``."""
        found, formals = self.closure(seeds)
        found |= self.function(function, ())
        for slot in formals:
            found |= self.argument(slot, ())
        return found

    def function(self, name: str, stack: tuple) -> set[str]:
        """Parameters that decide how often ``name`` is called."""
        if name in self._functions:
            return self._functions[name]
        if name in stack:
            return set()
        found: set[str] = set()
        for site in self.program.calls.get(name, []):
            params, formals = self.closure(self.call_seeds(site.cursor.hash))
            found |= params
            for slot in formals:
                found |= self.argument(slot, stack + (name,))
            if site.caller:
                found |= self.function(site.caller, stack + (name,))
        if not stack:
            self._functions[name] = found
        return found

    def argument(self, slot: tuple[str, int], stack: tuple) -> set[str]:
        """Parameters flowing into argument ``slot = (function, index)`` at its call sites."""
        if slot in self._arguments:
            return self._arguments[slot]
        if slot in stack:
            return set()
        function, index = slot
        found: set[str] = set()
        for site in self.program.calls.get(function, []):
            arguments = list(site.cursor.get_arguments())
            if index >= len(arguments):
                continue
            params, formals = self.closure([arguments[index]])
            found |= params
            for inner in formals:
                found |= self.argument(inner, stack + (slot,))
        if not stack:
            self._arguments[slot] = found
        return found

    def closure(self, seeds: Iterable[Cursor]) -> tuple[set[str], set[tuple[str, int]]]:
        """Parameters and formal arguments every definition behind ``seeds`` depends on."""
        params: set[str] = set()
        formals: set[tuple[str, int]] = set()
        visited: set[str] = set()
        stack = [s for s in seeds if s is not None]
        while stack:
            for node in walk(stack.pop()):
                start = node.extent.start
                macro = self.program.instantiations.get((str(start.file), start.offset))
                if macro is not None:
                    params |= self.macro(macro[1], set())
                if node.kind not in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
                    continue
                if node.spelling in self.parameters:
                    params.add(node.spelling)
                declaration = node.referenced
                if declaration is None:
                    continue
                if declaration.kind == CursorKind.PARM_DECL:
                    parent = declaration.semantic_parent
                    arguments = [key(a) for a in parent.get_arguments()] if parent else []
                    if key(declaration) in arguments:
                        formals.add((parent.spelling, arguments.index(key(declaration))))
                identity = key(declaration)
                if identity in visited or declaration.kind not in (
                    CursorKind.VAR_DECL,
                    CursorKind.PARM_DECL,
                    CursorKind.FIELD_DECL,
                ):
                    continue
                visited.add(identity)
                init = self.program.initializers.get(identity)
                if init is not None:
                    stack.append(init)
                for write in self.program.writes.get(identity, []):
                    stack.extend(children(write)[1:])
        return params, formals

    def macro(self, name: str, active: set[str]) -> set[str]:
        """Parameters named in a macro's body, through nested macros."""
        if name in self._macro_cache:
            return self._macro_cache[name]
        found = {name} if name in self.parameters else set()
        definition = self.program.macros.get(name)
        if definition is not None and name not in active:
            for token in definition.body:
                if not re.fullmatch(r"[A-Za-z_]\w*", token):
                    continue
                if token in self.parameters:
                    found.add(token)
                elif token in self.program.macros:
                    found |= self.macro(token, active | {name})
        if not active:
            self._macro_cache[name] = found
        return found
