"""Parameter names must name something in the sources: a typo is an error, not a silent
parameter that reaches nothing."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from perfcast.core.errors import InputError
from perfcast.static.frontend import ParsedSource

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_NOT_CODE = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL)
"""Comments, string and character literals: their words name nothing a parameter reaches."""
_KEYWORDS = frozenset(
    {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
        "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
        "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
        "typedef", "union", "unsigned", "void", "volatile", "while", "include", "define",
        "ifdef", "ifndef", "endif", "pragma",
    }
)  # fmt: skip


def check_parameters(
    sources: Sequence[ParsedSource], parameters: Sequence[str], compile_args: Sequence[str] = ()
) -> None:
    """Raise when a parameter name occurs in none of the sources (nor in a ``-D`` flag).

    Parameters
    ----------
    sources : sequence of ParsedSource
        The parsed translation units (their text is searched, and the headers they include).
    parameters : sequence of str
        The names to check.
    compile_args : sequence of str
        The compile flags: a macro defined by ``-DNAME`` counts as occurring.

    Raises
    ------
    InputError
        Reason ``unknown-parameter``, naming the parameter and the closest names of the sources.
    """
    if not parameters:
        return
    own: set[str] = set()  # identifiers of the sources themselves
    for source in sources:
        own.update(_IDENTIFIER.findall(_NOT_CODE.sub(" ", source.text)))
    for flag in compile_args:
        if flag.startswith("-D"):
            own.add(flag[2:].split("=", 1)[0])
    own -= _KEYWORDS
    if all(parameter in own for parameter in parameters):
        return
    included = _header_identifiers(sources)
    for parameter in parameters:
        if parameter in own or parameter in included:
            continue
        close = difflib.get_close_matches(parameter, sorted(own), n=6, cutoff=0.5)
        close = close or difflib.get_close_matches(parameter, sorted(included), n=6, cutoff=0.6)
        where = ", ".join(str(s.path) for s in sources)
        hint = f"names like it: {', '.join(close)}" if close else "no name in them is like it"
        raise InputError(
            f"parameter {parameter!r} occurs in none of the sources ({where}); {hint}",
            reason="unknown-parameter",
            value=parameter,
        )


def _header_identifiers(sources: Sequence[ParsedSource]) -> set[str]:
    """Identifiers of every header the sources include (read only when a name is missing
    from the sources themselves)."""
    included: set[str] = set()
    for source in sources:
        for inclusion in source.unit.get_includes():
            try:
                with open(inclusion.include.name, encoding="utf-8", errors="replace") as stream:
                    included.update(_IDENTIFIER.findall(_NOT_CODE.sub(" ", stream.read())))
            except OSError:
                continue
    return included
