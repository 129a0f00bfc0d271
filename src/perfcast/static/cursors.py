"""Small helpers over libclang cursors: operator spellings, cast stripping, sub-tree walks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import overload

from clang.cindex import Cursor, CursorKind

TRANSPARENT = {CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR}
LOOPS = {CursorKind.FOR_STMT, CursorKind.WHILE_STMT, CursorKind.DO_STMT}


def children(cursor: Cursor) -> list[Cursor]:
    """The cursor's children as a list."""
    return list(cursor.get_children())


def strip(cursor: Cursor) -> Cursor:
    """Skip implicit casts, parentheses and C-style casts down to the expression they wrap."""
    while True:
        kids = children(cursor)
        if cursor.kind in TRANSPARENT and len(kids) == 1:
            cursor = kids[0]
        elif cursor.kind == CursorKind.CSTYLE_CAST_EXPR and kids:
            cursor = kids[-1]
        else:
            return cursor


def operator(cursor: Cursor) -> str:
    """The operator token of a unary, binary or compound-assignment expression ("" if unknown)."""
    tokens = list(cursor.get_tokens())
    kids = children(cursor)
    if not tokens or not kids:
        return ""
    if cursor.kind == CursorKind.UNARY_OPERATOR:
        if tokens[0].extent.start.offset == kids[0].extent.start.offset and len(tokens) > 1:
            return "post" + tokens[-1].spelling
        return tokens[0].spelling
    end = kids[0].extent.end.offset
    for token in tokens:
        if token.extent.start.offset >= end:
            return token.spelling
    return ""


def walk(cursor: Cursor) -> Iterator[Cursor]:
    """Pre-order walk of the sub-tree (the cursor itself first)."""
    yield cursor
    for child in cursor.get_children():
        yield from walk(child)


def contains(outer: Cursor, inner: Cursor) -> bool:
    """True when ``inner`` lies inside ``outer``'s source extent (same file)."""
    return (
        outer.extent.start.offset <= inner.extent.start.offset
        and inner.extent.end.offset <= outer.extent.end.offset
        and str(outer.extent.start.file) == str(inner.extent.start.file)
    )


@overload
def key(cursor: None) -> None: ...
@overload
def key(cursor: Cursor) -> str: ...
def key(cursor: Cursor | None) -> str | None:
    """A program-wide identity for a declaration (its USR, or file:offset when it has none)."""
    if cursor is None:
        return None
    usr = cursor.get_usr()
    if usr:
        return usr
    return f"{cursor.location.file}:{cursor.location.offset}"


def assignment_target(cursor: Cursor) -> Cursor | None:
    """The declaration an assignment, ``++``/``--`` or compound assignment writes, if simple."""
    kids = children(cursor)
    if not kids:
        return None
    target = strip(kids[0])
    if target.kind in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
        return target.referenced
    return None


def is_write(cursor: Cursor) -> bool:
    """True for ``=``, compound assignments and increments/decrements."""
    if cursor.kind == CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
        return True
    if cursor.kind == CursorKind.BINARY_OPERATOR:
        return operator(cursor) == "="
    if cursor.kind == CursorKind.UNARY_OPERATOR:
        return operator(cursor) in ("++", "--", "post++", "post--")
    return False
