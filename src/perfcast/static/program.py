"""Whole-program facts the counting needs: definitions, call sites, writes, macros.

Collected once over every translation unit so that calls and globals work across files.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from clang.cindex import Cursor, CursorKind

from perfcast.static.cursors import (
    LOOPS,
    assignment_target,
    children,
    contains,
    is_write,
    key,
    operator,
    strip,
    walk,
)
from perfcast.static.frontend import ParsedSource


@dataclass(frozen=True)
class Macro:
    """An object-like or function-like macro and the tokens of its body."""

    name: str
    body: tuple[str, ...]
    function_like: bool
    file: str = ""
    offsets: tuple[int, ...] = ()  # where each body token is written in the file


@dataclass(frozen=True)
class CallSite:
    """One call of a defined function."""

    caller: str
    callee: str
    cursor: Cursor
    source: ParsedSource


@dataclass
class Program:
    """Facts over all translation units."""

    sources: list[ParsedSource]
    functions: dict[str, Cursor] = field(default_factory=dict)
    function_source: dict[str, ParsedSource] = field(default_factory=dict)
    calls: dict[str, list[CallSite]] = field(default_factory=lambda: defaultdict(list))
    calls_from: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    address_taken_functions: set[str] = field(default_factory=set)
    writes: dict[str, list[Cursor]] = field(default_factory=lambda: defaultdict(list))
    write_function: dict[int, str] = field(default_factory=dict)
    address_of: set[str] = field(default_factory=set)
    initializers: dict[str, Cursor] = field(default_factory=dict)
    macros: dict[str, Macro] = field(default_factory=dict)
    instantiations: dict[tuple[str, int], tuple[int, str]] = field(default_factory=dict)
    instantiation_offsets: set[int] = field(default_factory=set)
    writes_globals: dict[str, set[str]] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)
    ambiguous: set[str] = field(default_factory=set)
    loops: list[Cursor] = field(default_factory=list)

    def in_same_loop(self, first: Cursor, second: Cursor) -> bool:
        """True when some loop contains both cursors."""
        return any(contains(loop, first) and contains(loop, second) for loop in self.loops)

    def is_setup(self, write: Cursor) -> bool:
        """True for ``v = value`` outside every loop where ``value`` does not read ``v``."""
        if write.kind != CursorKind.BINARY_OPERATOR or operator(write) != "=":
            return False
        target = key(assignment_target(write))
        value = children(write)[1]
        references = (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR)
        for node in walk(value):
            if node.kind in references and key(node.referenced) == target:
                return False
        return not any(contains(loop, write) for loop in self.loops)

    def writes_of(self, declaration: Cursor | None) -> list[Cursor]:
        """Every assignment, compound assignment or increment of the declaration."""
        return self.writes.get(key(declaration) or "", [])

    def macro_at(self, cursor: Cursor) -> str | None:
        """Name of the macro whose expansion is exactly this expression, if any."""
        extent = cursor.extent
        if extent.start.offset not in self.instantiation_offsets:
            return None
        found = self.instantiations.get((str(extent.start.file), extent.start.offset))
        if found and found[0] == extent.end.offset:
            return found[1]
        return None

    def macro_spelled_at(self, file: str, offset: int) -> str | None:
        """The macro whose value the token written at ``offset`` of ``file`` stands for.

        The macro used there, a macro named there inside another's definition, or the macro
        whose whole body is that token; None otherwise.
        """
        used = self.instantiations.get((file, offset))
        if used is not None:
            return used[1]
        for macro in self.macros.values():
            if macro.file != file or offset not in macro.offsets:
                continue
            token = macro.body[macro.offsets.index(offset)]
            if token in self.macros:
                return token
            return macro.name if len(macro.body) == 1 else None
        return None

    def macro_names_parameter(self, name: str, parameters: set[str]) -> bool:
        """True when the macro's body names a parameter, directly or through other macros."""
        pending, seen = [name], set()
        while pending:
            current = pending.pop()
            if current in parameters:
                return True
            definition = self.macros.get(current)
            if current in seen or definition is None:
                continue
            seen.add(current)
            pending.extend(definition.body)
        return False

    def function_writes(self, name: str) -> set[str]:
        """Keys of globals and struct members written by the function or anything it calls."""
        return self.writes_globals.get(name, set())


def initializer(declaration: Cursor) -> Cursor | None:
    """The initializer expression of a variable declaration, if it has one."""
    kids = [k for k in children(declaration) if k.kind != CursorKind.TYPE_REF]
    if not kids:
        return None
    last = kids[-1]
    before = [
        t for t in declaration.get_tokens() if t.extent.end.offset <= last.extent.start.offset
    ]
    if before and before[-1].spelling == "=":
        return last
    return None


def collect(sources: list[ParsedSource]) -> Program:
    """Gather the program facts of all parsed sources."""
    program = Program(sources)
    callee_refs: set[int] = set()
    function_refs: list[Cursor] = []
    for source in sources:
        unit = source.unit
        for cursor in unit.cursor.get_children():
            if cursor.location.file is None or cursor.location.is_in_system_header:
                continue
            if cursor.kind == CursorKind.MACRO_DEFINITION:
                program.macros[cursor.spelling] = _macro(cursor)
            elif cursor.kind == CursorKind.MACRO_INSTANTIATION:
                start = cursor.extent.start
                program.instantiations[(str(start.file), start.offset)] = (
                    cursor.extent.end.offset,
                    cursor.spelling,
                )
                program.instantiation_offsets.add(start.offset)
            elif cursor.kind == CursorKind.FUNCTION_DECL and cursor.is_definition():
                name = cursor.spelling
                if name in program.functions:
                    first = program.functions[name].location
                    here = cursor.location
                    if (str(first.file), first.line) != (str(here.file), here.line):
                        program.ambiguous.add(name)
                        program.diagnostics.append(
                            f"{here.file}:{here.line}: function {name} is defined twice; its "
                            "calls cannot be told apart, so its kernels are undef (this "
                            "definition is not listed)"
                        )
                    continue
                program.functions[name] = cursor
                program.function_source[name] = source
            elif cursor.kind in _SCOPES:
                _report_unanalysed(program, cursor)
            if cursor.kind != CursorKind.INCLUSION_DIRECTIVE:
                _scan(program, cursor, source, callee_refs, function_refs)
    for ref in function_refs:
        if ref.hash not in callee_refs and ref.spelling in program.functions:
            program.address_taken_functions.add(ref.spelling)
    _close_global_writes(program)
    for function in program.functions.values():
        program.loops.extend(c for c in walk(function) if c.kind in LOOPS)
    return program


_SCOPES = {
    CursorKind.NAMESPACE,
    CursorKind.CLASS_DECL,
    CursorKind.STRUCT_DECL,
    CursorKind.CLASS_TEMPLATE,
    CursorKind.LINKAGE_SPEC,
}
_FUNCTION_LIKE = {
    CursorKind.FUNCTION_DECL,
    CursorKind.CXX_METHOD,
    CursorKind.CONSTRUCTOR,
    CursorKind.DESTRUCTOR,
    CursorKind.FUNCTION_TEMPLATE,
    CursorKind.CONVERSION_FUNCTION,
}


def _report_unanalysed(program: Program, scope: Cursor) -> None:
    """Say which C++ definitions (methods, namespaced functions, templates) are not analysed."""
    for cursor in walk(scope):
        if cursor.kind in _FUNCTION_LIKE and cursor.is_definition():
            program.diagnostics.append(
                f"{cursor.location.file}:{cursor.location.line}: {cursor.spelling} is not "
                "analysed (only file-scope C functions are); calls it makes are undef"
            )


def _macro(cursor: Cursor) -> Macro:
    tokens = list(cursor.get_tokens())
    function_like = (
        len(tokens) > 1
        and tokens[1].spelling == "("
        and tokens[1].extent.start.offset == tokens[0].extent.end.offset
    )
    return Macro(
        cursor.spelling,
        tuple(t.spelling for t in tokens[1:]),
        function_like,
        str(cursor.extent.start.file),
        tuple(t.extent.start.offset for t in tokens[1:]),
    )


def _scan(
    program: Program,
    top: Cursor,
    source: ParsedSource,
    callee_refs: set[int],
    function_refs: list[Cursor],
) -> None:
    function = top.spelling if top.kind == CursorKind.FUNCTION_DECL else ""
    for cursor in walk(top):
        kind = cursor.kind
        if kind == CursorKind.VAR_DECL:
            init = initializer(cursor)
            if init is not None:
                program.initializers[key(cursor)] = init
        elif kind == CursorKind.CALL_EXPR:
            kids = children(cursor)
            if kids:
                callee = strip(kids[0])
                if callee.kind == CursorKind.DECL_REF_EXPR:
                    callee_refs.add(callee.hash)
                    program.calls[cursor.spelling].append(
                        CallSite(function, cursor.spelling, cursor, source)
                    )
                    program.calls_from[function].add(cursor.spelling)
        elif kind == CursorKind.DECL_REF_EXPR:
            referenced = cursor.referenced
            if referenced is not None and referenced.kind == CursorKind.FUNCTION_DECL:
                function_refs.append(cursor)
        elif is_write(cursor):
            target = assignment_target(cursor)
            if target is not None:
                program.writes[key(target)].append(cursor)
                program.write_function[cursor.hash] = function
        if kind == CursorKind.UNARY_OPERATOR and operator(cursor) == "&":
            target = strip(children(cursor)[0]) if children(cursor) else None
            if target is not None and target.kind in (
                CursorKind.DECL_REF_EXPR,
                CursorKind.MEMBER_REF_EXPR,
            ):
                program.address_of.add(key(target.referenced))


def _close_global_writes(program: Program) -> None:
    direct: dict[str, set[str]] = defaultdict(set)
    for target, writes in program.writes.items():
        for write in writes:
            declaration = assignment_target(write)
            if declaration is not None and _is_shared(declaration):
                direct[program.write_function.get(write.hash, "")].add(target)
    for name in program.functions:
        seen: set[str] = set()
        stack = [name]
        found: set[str] = set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            found |= direct.get(current, set())
            stack.extend(program.calls_from.get(current, ()))
        program.writes_globals[name] = found


def _is_shared(declaration: Cursor) -> bool:
    """Globals and struct members can change behind a call; locals cannot."""
    if declaration.kind == CursorKind.FIELD_DECL:
        return True
    parent = declaration.semantic_parent
    return parent is not None and parent.kind == CursorKind.TRANSLATION_UNIT
