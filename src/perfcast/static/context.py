"""Where the walk is: the loop levels, guards and bindings that hold at a statement."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import sympy
from clang.cindex import Cursor

from perfcast.static.frontend import ParsedSource
from perfcast.static.symbolic import Level, Undefined

# Anything that goes wrong while counting one kernel makes that kernel undef, never the whole file.
FAILURES = (Undefined, ArithmeticError, TypeError, ValueError, RecursionError, StopIteration)


def describe(error: Exception) -> str:
    """The text of an undef reason for any failure."""
    if isinstance(error, Undefined):
        return str(error)
    return f"the analysis failed here ({type(error).__name__}: {error})"


@dataclass(frozen=True)
class Context:
    """What holds at a point of a function: enclosing levels, guards, bindings, seeds."""

    function: str
    levels: tuple[Level, ...] = ()
    guards: tuple = ()
    undef: str | None = None
    bindings: tuple[tuple[str, sympy.Expr | None, Cursor], ...] = ()
    seeds: tuple[Cursor, ...] = ()
    region: str = ""  # innermost enclosing function, loop or branch block
    depth: int = 0  # enclosing loops, countable or not
    notes: tuple[str, ...] = ()  # assumptions the counts below rest on (error paths not taken)

    def changed(self, **changes: Any) -> Context:
        """A copy with ``changes``: what ``dataclasses.replace`` makes, without its checks of
        every field at each call (the walk makes one at nearly every statement)."""
        copy = object.__new__(Context)
        fields = copy.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return copy

    def binding(self, name: str):
        """``(value, loop)`` bound to a variable key, or None."""
        for bound, value, loop in reversed(self.bindings):
            if bound == name:
                return value, loop
        return None


@dataclass
class KernelRecord:
    """A function or loop found by the walk, with the context its body runs in."""

    name: str
    kind: str
    cursor: Cursor
    source: ParsedSource
    depth: int
    context: Context


@dataclass
class CallRecord:
    """A call with its context and its arguments (each an Expr or the reason it is unknown).

    ``translate`` gives the arguments; it runs when they are first asked for, since most
    calls' arguments are never substituted (the callee's counts name no argument).
    """

    context: Context
    translate: Callable[[], list] = list

    @cached_property
    def arguments(self) -> list:
        """The translated arguments."""
        return self.translate()
