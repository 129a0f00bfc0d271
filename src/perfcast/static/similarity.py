"""Static similarity of loops: a canonical form of each loop's dependence structure.

The canonical form is the loop's syntax tree with every variable (and struct member) renamed by
order of first occurrence (``v0``, ``v1``, ...) and every literal replaced by ``LIT``; statement
kinds, operators and called functions stay. Because each use and definition keeps its renamed
variable, two loops with the same form have the same statements, operations, control nesting and
def-use (data dependence) edges up to variable names. Loops are clustered by the hash of the form.
"""

from __future__ import annotations

import hashlib

from clang.cindex import Cursor, CursorKind

from perfcast.static.cursors import children, key, operator

_LITERALS = {
    CursorKind.INTEGER_LITERAL,
    CursorKind.FLOATING_LITERAL,
    CursorKind.CHARACTER_LITERAL,
    CursorKind.STRING_LITERAL,
}
_OPERATORS = {
    CursorKind.BINARY_OPERATOR,
    CursorKind.COMPOUND_ASSIGNMENT_OPERATOR,
    CursorKind.UNARY_OPERATOR,
}


def canonical_form(loop: Cursor) -> str:
    """The alpha-renamed, literal-free serialisation of ``loop``'s syntax tree."""
    names: dict[str | None, str] = {}

    def rename(identity: str | None) -> str:
        if identity not in names:
            names[identity] = f"v{len(names)}"
        return names[identity]

    def form(cursor: Cursor) -> str:
        kind = cursor.kind
        kids = [k for k in children(cursor) if k.kind != CursorKind.TYPE_REF]
        if kind in (CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR) and len(kids) == 1:
            return form(kids[0])
        if kind in _LITERALS:
            return "LIT"
        if kind == CursorKind.DECL_REF_EXPR:
            referenced = cursor.referenced
            if referenced is not None and referenced.kind == CursorKind.FUNCTION_DECL:
                return f"fn:{cursor.spelling}"
            return rename(key(referenced))
        label = kind.name
        if kind in _OPERATORS:
            label += f"[{operator(cursor)}]"
        elif kind == CursorKind.MEMBER_REF_EXPR:
            label += f"[{rename('member:' + str(key(cursor.referenced)))}]"
        elif kind == CursorKind.VAR_DECL:
            label += f"[{rename(key(cursor))}:{cursor.type.get_canonical().spelling}]"
        return label + "(" + ",".join(form(k) for k in kids) + ")"

    return form(loop)


def fingerprint(loop: Cursor) -> str:
    """Short hash of :func:`canonical_form`."""
    return hashlib.sha1(canonical_form(loop).encode()).hexdigest()[:16]
