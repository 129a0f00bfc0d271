"""The source text of an ``if`` statement's condition, for messages that name a guard.

A static report names an ``if`` block ``function:if@LINE:then`` (or ``:else``); a message about
code that such a block guards should show the condition as the user wrote it (before macro
expansion): ``timer_on``, ``argc > 42 && !strcmp(argv[0], "")``. The text is read from the
source file at the block's line: the parenthesized expression after the first ``if`` there,
whitespace collapsed.
"""

from __future__ import annotations

import re
from pathlib import Path

_BLOCK_NAME = re.compile(r":(if|switch)@(\d+):(then|else|cases)$")
_IF = re.compile(r"\b(if|switch)\s*\(")
_LONGEST = 80  # characters of a condition shown before it is cut with "..."
_LINES_SCANNED = 20  # lines a condition may span


def if_line(block_name: str) -> int | None:
    """Line of the ``if`` (or ``switch``) statement of a block's name (``f:if@12:then`` -> 12),
    or None."""
    found = _BLOCK_NAME.search(block_name)
    return int(found.group(2)) if found else None


def is_else(block_name: str) -> bool:
    """True for the ``else`` arm of an ``if`` statement (``f:if@12:else``)."""
    found = _BLOCK_NAME.search(block_name)
    return found is not None and found.group(3) == "else"


def is_switch(block_name: str) -> bool:
    """True for the cases of a ``switch`` statement (``f:switch@12:cases``)."""
    found = _BLOCK_NAME.search(block_name)
    return found is not None and found.group(1) == "switch"


def condition_text(path: str, line: int) -> str | None:
    """The condition of the ``if`` (or ``switch``) statement starting at ``line`` of ``path``.

    Parameters
    ----------
    path : str
        Source file.
    line : int
        1-based line of the ``if`` keyword.

    Returns
    -------
    str or None
        The text between the condition's parentheses, whitespace collapsed and cut after
        80 characters; None when the file cannot be read or holds no ``if (`` (``switch (``)
        at that line.
    """
    lines = _lines(path)
    if not 0 < line <= len(lines):
        return None
    text = "\n".join(lines[line - 1 : line - 1 + _LINES_SCANNED])
    start = _IF.search(text.split("\n", 1)[0])
    if start is None:
        return None
    depth = 0
    for index in range(start.end() - 1, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            condition = " ".join(text[start.end() : index].split())
            if len(condition) > _LONGEST:
                return condition[: _LONGEST - 3] + "..."
            return condition
    return None


def line_text(path: str, line: int) -> str | None:
    """Line ``line`` of ``path``, whitespace collapsed and cut after 80 characters (for an
    ``if`` that a macro's expansion holds: its condition is not in the text), or None."""
    lines = _lines(path)
    if not 0 < line <= len(lines) or not lines[line - 1].strip():
        return None
    text = " ".join(lines[line - 1].split())
    return text if len(text) <= _LONGEST else text[: _LONGEST - 3] + "..."


def _lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(errors="replace").splitlines())
    except OSError:
        return ()
