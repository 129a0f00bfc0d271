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

from perfcast.static.cursors import children, key, offset_of, walk
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
        self._functions: dict[str, set[str]] | None = None
        self._arguments: dict[tuple[str, int], set[str]] = {}
        self._macro_cache: dict[str, set[str]] = {}
        self._closures: dict[int, tuple[frozenset[str], frozenset[tuple[str, int]]]] = {}
        self._variables: dict[str, tuple[set, set, set]] = {}
        # the functions whose kernels are asked for and all their callers (None: every one);
        # what reaches them depends on the call sites of these functions only
        self.relevant: set[str] | None = None

    def forget_solution(self) -> None:
        """Drop the call-graph solution (after more call sites became relevant)."""
        self._functions = None

    def kernel(self, seeds: Iterable[Cursor], function: str) -> set[str]:
        """Parameters reaching a kernel with these bound/guard expressions in ``function``."""
        if not self.parameters:
            return set()  # only parameter names are ever found
        functions = self._solve()
        found, formals = self.closure(seeds)
        found |= functions.get(function, set())
        for slot in formals:
            found |= self._arguments.get(slot, set())
        return found

    def _solve(self) -> dict[str, set[str]]:
        """Fixed point of the call graph: what reaches each function and each argument.

        Solved once; returns what reaches each function, keeps what reaches each argument.
        """
        if self._functions is not None:
            return self._functions
        functions: dict[str, set[str]] = {name: set() for name in self.program.calls}
        arguments: dict[tuple[str, int], set[str]] = {}
        sites = []  # (callee, caller, params, formals) per call site, plus per argument
        argument_sites = []
        for callee, calls in self.program.calls.items():
            if callee not in self.program.functions:
                # What reaches a library function or its arguments is never asked: kernels
                # and formal arguments belong to defined functions.
                continue
            if self.relevant is not None and callee not in self.relevant:
                continue  # its callers are no callers of an analysed function
            for site in calls:
                params, formals = self.closure(self.call_seeds(site.cursor.hash))
                sites.append((callee, site.caller, params, formals))
                for index, argument in enumerate(site.cursor.get_arguments()):
                    params, formals = self.closure([argument])
                    argument_sites.append(((callee, index), params, formals))
                    arguments.setdefault((callee, index), set())
        changed = True
        while changed:
            changed = False
            for slot, params, formals in argument_sites:
                new = set(params).union(*(arguments.get(f, set()) for f in formals))
                if not new <= arguments[slot]:
                    arguments[slot] |= new
                    changed = True
            for callee, caller, params, formals in sites:
                new = set(params).union(*(arguments.get(f, set()) for f in formals))
                new |= functions.get(caller, set())
                if not new <= functions[callee]:
                    functions[callee] |= new
                    changed = True
        self._functions = functions
        self._arguments = arguments
        return functions

    def closure(self, seeds: Iterable[Cursor]) -> tuple[set[str], set[tuple[str, int]]]:
        """Parameters and formal arguments every definition behind ``seeds`` depends on."""
        params: set[str] = set()
        formals: set[tuple[str, int]] = set()
        for seed in seeds:
            if seed is None:
                continue
            if seed.hash not in self._closures:
                self._closures[seed.hash] = self._closure_of(seed)
            found, slots = self._closures[seed.hash]
            params |= found
            formals |= slots
        return params, formals

    def _closure_of(self, seed: Cursor) -> tuple[frozenset[str], frozenset[tuple[str, int]]]:
        params, formals, pending = self._references(seed)
        params, formals = set(params), set(formals)
        visited: set[str] = set()
        while pending:
            identity = pending.pop()
            if identity in visited:
                continue
            visited.add(identity)
            more_params, more_formals, more = self._definitions(identity)
            params |= more_params
            formals |= more_formals
            pending |= more - visited
        return frozenset(params), frozenset(formals)

    def _definitions(self, identity: str):
        """Direct references of every definition (initialiser, assignment) of a variable."""
        if identity not in self._variables:
            params: set[str] = set()
            formals: set[tuple[str, int]] = set()
            variables: set[str] = set()
            sources = [self.program.initializers.get(identity)]
            for write in self.program.writes.get(identity, []):
                sources.extend(children(write)[1:])
            for source in sources:
                if source is None:
                    continue
                found = self._references(source)
                params |= found[0]
                formals |= found[1]
                variables |= found[2]
            self._variables[identity] = (params, formals, variables)
        return self._variables[identity]

    def _references(self, cursor: Cursor):
        """Parameters, formal arguments and variables named directly inside ``cursor``."""
        params: set[str] = set()
        formals: set[tuple[str, int]] = set()
        variables: set[str] = set()
        offsets = self.program.instantiation_offsets
        for node in walk(cursor):
            start = node.extent.start
            if offset_of(start) in offsets:
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
            if declaration.kind in (
                CursorKind.VAR_DECL,
                CursorKind.PARM_DECL,
                CursorKind.FIELD_DECL,
            ):
                variables.add(key(declaration))
        return params, formals, variables

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
