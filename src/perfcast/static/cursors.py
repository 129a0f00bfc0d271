"""Small helpers over libclang cursors: operator spellings, cast stripping, sub-tree walks."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from functools import cache
from typing import overload

from clang.cindex import (
    Cursor,
    CursorKind,
    File,
    SourceLocation,
    TranslationUnit,
    c_object_p,
    conf,
)

TRANSPARENT = {CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR}
LOOPS = {CursorKind.FOR_STMT, CursorKind.WHILE_STMT, CursorKind.DO_STMT}

# Name of the attribute a translation unit keeps its tree of children in (see _tree).
_TREE = "_perfcast_children"
# Name of the attribute a cursor of that tree keeps its own children in.
_KIDS = "_perfcast_kids"
# Name of the attribute a translation unit keeps the keys of its cursors in (see key).
_KEYS = "_perfcast_keys"
_RECURSE = 2  # CXChildVisit_Recurse
_CONTINUE = 1  # CXChildVisit_Continue: the next sibling, not this cursor's children
_LANGUAGE_C = 1  # CXLanguage_C
# Declarations whose children hold no statement or expression that runs (a header's types
# and prototypes are most of a unit): the tree leaves them out, children() asks libclang.
_TYPE_DECLARATIONS = {
    CursorKind.TYPEDEF_DECL,
    CursorKind.STRUCT_DECL,
    CursorKind.UNION_DECL,
    CursorKind.ENUM_DECL,
}


def children(cursor: Cursor) -> list[Cursor]:
    """The cursor's children as a list.

    Read from the unit's tree, which one libclang traversal fills the first time any cursor of
    the unit is asked; a cursor the traversal did not produce (a declaration reached through
    ``referenced``, say) asks libclang itself. The nodes are libclang's; a statement's cursor
    remembers its enclosing declaration even below another statement (``get_children`` on a
    statement leaves it empty), which only cursor equality and ``semantic_parent`` see.
    """
    found = getattr(cursor, _KIDS, None)  # a cursor of the tree holds its children
    if found is not None:
        return list(found)
    unit = getattr(cursor, "_tu", None)
    if unit is not None:
        found = _tree(unit).get(bytes(cursor))
        if found is not None:
            return list(found)
    return list(cursor.get_children())


class _TreeCursor(Cursor):
    """A cursor perfcast made itself (in the unit's tree, see :func:`_tree`, or as what a
    reference names, see :func:`referenced`): its kind is read once, when it is made, and
    kept as a plain attribute; a cursor of the tree also keeps the list of its children.

    The bindings' ``kind`` property converts libclang's number at every use (an analysis asks
    a few hundred thousand times); here it is an attribute of the instance.
    """

    kind = None  # set per instance where it is made


# The traversal's callback, whose cursors are made as _TreeCursor (the bindings' callback type
# makes plain cursors), and libclang's visit declared for it: a function object of its own, so
# the bindings' declaration (used by get_children) stays as it is.
_TREE_VISIT = ctypes.CFUNCTYPE(ctypes.c_int, _TreeCursor, _TreeCursor, ctypes.py_object)


@cache
def _visit_children() -> Callable:
    function = conf.lib["clang_visitChildren"]  # indexing makes a new function object
    function.argtypes = [Cursor, _TREE_VISIT, ctypes.py_object]
    function.restype = ctypes.c_uint
    return function


def _tree(unit: TranslationUnit) -> dict[bytes, list[Cursor]]:
    """Children of every cursor of the unit, keyed by the cursor's bytes (libclang's identity
    of a cursor), from a single recursive visit inside libclang.

    Python's ``get_children`` per node costs a libclang call, a callback and a null-cursor
    comparison per child; the whole-unit visit costs one callback per node, and the cursors
    it makes are shared, so the properties they cache (extent, spelling) are computed once.
    Each cursor of the visit also keeps its kind and its list of children (the list of the
    dictionary, so that a cursor met twice has, like its key, the children of its last visit).
    """
    tree: dict[bytes, list[Cursor]] | None = getattr(unit, _TREE, None)
    if tree is not None:
        return tree
    root = unit.cursor
    tree = {bytes(root): []}
    kinds: dict[int, CursorKind] = {}  # libclang's number -> the bindings' kind

    def visit(child: _TreeCursor, parent: _TreeCursor, _data: object) -> int:
        child._tu = unit
        number = child._kind_id
        kind = kinds.get(number)
        if kind is None:
            kind = kinds[number] = CursorKind.from_id(number)
        child.kind = kind
        tree[bytes(parent)].append(child)
        if kind in _MAY_DECLARE_ONLY and declares_only(child):
            return _CONTINUE
        identity = bytes(child)
        kids = tree.get(identity)
        if kids is None:
            kids = tree[identity] = []
        else:
            kids.clear()  # a cursor met twice gets the children of its last visit
        child._perfcast_kids = kids  # _KIDS
        return _RECURSE

    _visit_children()(root, _TREE_VISIT(visit), None)
    setattr(unit, _TREE, tree)
    return tree


@cache
def _referenced_function() -> Callable:
    function = conf.lib["clang_getCursorReferenced"]  # a function object of its own
    function.argtypes = [Cursor]
    function.restype = _TreeCursor
    return function


@cache
def _null_cursor() -> bytes:
    return bytes(conf.lib.clang_getNullCursor())


def referenced(cursor: Cursor) -> Cursor | None:
    """``cursor.referenced``, the declaration a reference names (None for none), in one
    libclang call instead of the bindings' three, with its kind read once.

    Kept where the bindings keep it, so that ``cursor.referenced`` gives the same object.
    """
    if hasattr(cursor, "_referenced"):
        found: Cursor | None = cursor._referenced
        return found
    made = _referenced_function()(cursor)
    if bytes(made) == _null_cursor():  # what the bindings compare with
        found = None
    else:
        made._tu = cursor._tu
        made.kind = CursorKind.from_id(made._kind_id)
        found = made
    cursor._referenced = found
    return found


def release_tree(unit: TranslationUnit) -> None:
    """Drop the unit's tree of children (see :func:`children`), which a cursor of the unit
    asking for its children builds again."""
    if hasattr(unit, _TREE):
        delattr(unit, _TREE)


# The kinds declares_only can be true of.
_MAY_DECLARE_ONLY = _TYPE_DECLARATIONS | {CursorKind.FUNCTION_DECL}


def declares_only(cursor: Cursor) -> bool:
    """True for a C type declaration or a C function's prototype: nothing in it runs.

    Not for C++, whose classes hold methods and whose prototypes default arguments.
    """
    kind = cursor.kind
    if kind == CursorKind.FUNCTION_DECL:
        if cursor.is_definition():
            return False
    elif kind not in _TYPE_DECLARATIONS:
        return False
    language = _libclang_function("clang_getCursorLanguage", ctypes.c_int)
    return language is not None and language(cursor) == _LANGUAGE_C


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


# Spellings of clang's CX_BinaryOperatorKind and CX_UnaryOperatorKind (index = enum value).
_BINARY_SPELLINGS = (
    "", ".*", "->*", "*", "/", "%", "+", "-", "<<", ">>", "<=>", "<", ">", "<=", ">=", "==",
    "!=", "&", "^", "|", "&&", "||", "=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=",
    "^=", "|=", ",",
)  # fmt: skip
_UNARY_SPELLINGS = (
    "", "post++", "post--", "++", "--", "&", "*", "+", "-", "~", "!", "__real", "__imag",
    "__extension__", "co_await",
)  # fmt: skip


@cache
def _libclang_function(name: str, result: type | None, *arguments: type) -> Callable | None:
    """A libclang C function (by default of one cursor), or None when the loaded library lacks
    it (operator kinds came with libclang 17)."""
    try:
        function = getattr(conf.lib, name)
    except AttributeError:
        return None
    function.argtypes = list(arguments or (Cursor,))
    function.restype = result
    return function


def operator(cursor: Cursor) -> str:
    """The operator of a unary, binary or compound-assignment expression ("" if unknown).

    Asked of clang's AST, so it is right when operands come from macro expansions (whose
    source tokens lie in the macro definitions); read from the tokens with older libclang.
    """
    if cursor.kind in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR):
        binary = _libclang_function("clang_getCursorBinaryOperatorKind", ctypes.c_int)
        if binary is not None:
            index = binary(cursor)
            return _BINARY_SPELLINGS[index] if 0 <= index < len(_BINARY_SPELLINGS) else ""
    elif cursor.kind == CursorKind.UNARY_OPERATOR:
        unary = _libclang_function("clang_getCursorUnaryOperatorKind", ctypes.c_int)
        if unary is not None:
            index = unary(cursor)
            return _UNARY_SPELLINGS[index] if 0 <= index < len(_UNARY_SPELLINGS) else ""
    return _operator_from_tokens(cursor)


def _operator_from_tokens(cursor: Cursor) -> str:
    tokens = list(cursor.get_tokens())
    kids = children(cursor)
    if not tokens or not kids:
        return ""
    if cursor.kind == CursorKind.UNARY_OPERATOR:
        if offset_of(tokens[0].extent.start) == offset_of(kids[0].extent.start) and len(tokens) > 1:
            return "post" + tokens[-1].spelling
        return tokens[0].spelling
    end = offset_of(kids[0].extent.end)
    for token in tokens:
        if offset_of(token.extent.start) >= end:
            return token.spelling
    return ""


def integer_value(cursor: Cursor) -> int | None:
    """The value clang computes for an integer constant expression (a literal, ``sizeof``,
    an expansion of macros), or None when it is not one or libclang cannot evaluate it."""
    handle = ctypes.c_void_p
    evaluate = _libclang_function("clang_Cursor_Evaluate", handle)
    kind = _libclang_function("clang_EvalResult_getKind", ctypes.c_int, handle)
    unsigned = _libclang_function("clang_EvalResult_isUnsignedInt", ctypes.c_uint, handle)
    as_unsigned = _libclang_function("clang_EvalResult_getAsUnsigned", ctypes.c_ulonglong, handle)
    as_signed = _libclang_function("clang_EvalResult_getAsLongLong", ctypes.c_longlong, handle)
    dispose = _libclang_function("clang_EvalResult_dispose", None, handle)
    if (
        evaluate is None
        or kind is None
        or unsigned is None
        or as_unsigned is None
        or as_signed is None
        or dispose is None
    ):
        return None
    result = evaluate(cursor)
    if not result:
        return None
    try:
        if kind(result) != 1:  # CXEval_Int
            return None
        return int(as_unsigned(result) if unsigned(result) else as_signed(result))
    finally:
        dispose(result)


def spelling_location(cursor: Cursor) -> tuple[str | None, int]:
    """``(file name, offset)`` libclang gives as the spelling of the cursor's first token.

    For a token a macro argument supplies it is where the argument is written (``N`` in
    ``BOUND(x, N)``), where ``cursor.location`` is the start of the outer macro's use.
    ``(None, 0)`` for text from the command line.
    """
    arguments = (SourceLocation,) + (ctypes.c_void_p,) * 4
    function = _libclang_function("clang_getSpellingLocation", None, *arguments)
    if function is None:
        return None, 0
    file, line, column, offset = c_object_p(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    function(
        cursor.extent.start,
        ctypes.byref(file),
        ctypes.byref(line),
        ctypes.byref(column),
        ctypes.byref(offset),
    )
    if not file:
        return None, 0
    return File(file).name, int(offset.value)


def expansion_span(cursor: Cursor, names: dict[int, str]) -> tuple[str | None, int, int]:
    """``(file name, start offset, end offset)`` of the cursor's extent at its expansion.

    What ``str(cursor.location.file)``, ``cursor.location.offset`` and
    ``cursor.extent.end.offset`` give, in two libclang calls instead of the bindings' objects
    per location (a header-heavy unit has thousands of macro expansions). ``names`` caches the
    file names by libclang's file handle: one dictionary per unit, as handles are the unit's.
    """
    extent = cursor.extent
    handle, offset, end = c_object_p(), ctypes.c_uint(), ctypes.c_uint()
    locate = conf.lib.clang_getInstantiationLocation  # as the bindings declare it
    locate(extent.start, ctypes.byref(handle), None, None, ctypes.byref(offset))
    locate(extent.end, None, None, None, ctypes.byref(end))
    if not handle:
        return None, int(offset.value), int(end.value)
    identity = ctypes.cast(handle, ctypes.c_void_p).value or 0
    name = names.get(identity)
    if name is None:
        name = names[identity] = File(handle).name
    return name, int(offset.value), int(end.value)


def in_file(location: SourceLocation) -> bool:
    """``location.file is not None`` without the bindings' objects for its file, line, column
    and offset (one libclang call for the file alone)."""
    handle = c_object_p()
    conf.lib.clang_getInstantiationLocation(location, ctypes.byref(handle), None, None, None)
    return bool(handle)


def line_of(location: SourceLocation) -> int:
    """``location.line`` (at the expansion), without the column, offset and file object the
    bindings make with it."""
    line = ctypes.c_uint()
    conf.lib.clang_getInstantiationLocation(location, None, ctypes.byref(line), None, None)
    return int(line.value)


def offset_of(location: SourceLocation) -> int:
    """``location.offset`` (at the expansion), without the line and column the bindings
    compute with it (finding a line is most of the cost of asking for an offset)."""
    offset = ctypes.c_uint()
    conf.lib.clang_getInstantiationLocation(location, None, None, None, ctypes.byref(offset))
    return int(offset.value)


def single_pass(loop: Cursor) -> bool:
    """True for ``do { ... } while (0)``: a block that runs once (the body of many macros)."""
    if loop.kind != CursorKind.DO_STMT:
        return False
    kids = children(loop)
    return len(kids) == 2 and integer_value(kids[1]) == 0


def walk(cursor: Cursor) -> Iterator[Cursor]:
    """Pre-order walk of the sub-tree (the cursor itself first)."""
    pending = [cursor]
    while pending:
        node = pending.pop()
        yield node
        found = getattr(node, _KIDS, None)
        pending.extend(reversed(found if found is not None else children(node)))


def contains(outer: Cursor, inner: Cursor) -> bool:
    """True when ``inner`` lies inside ``outer``'s source extent (same file)."""
    return (
        offset_of(outer.extent.start) <= offset_of(inner.extent.start)
        and offset_of(inner.extent.end) <= offset_of(outer.extent.end)
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
    unit = getattr(cursor, "_tu", None)
    known: dict[bytes, str] | None = getattr(unit, _KEYS, None) if unit is not None else None
    if known is None:
        known = {}
        if unit is not None:
            setattr(unit, _KEYS, known)
    identity = bytes(cursor)  # the same declaration is reached through many references
    found = known.get(identity)
    if found is None:
        usr = cursor.get_usr()
        found = known[identity] = usr or f"{cursor.location.file}:{cursor.location.offset}"
    return found


def assignment_target(cursor: Cursor) -> Cursor | None:
    """The declaration an assignment, ``++``/``--`` or compound assignment writes, if simple."""
    kids = children(cursor)
    if not kids:
        return None
    target = strip(kids[0])
    if target.kind in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
        return referenced(target)
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
