"""Whole-program facts the counting needs: definitions, call sites, writes, macros.

Collected once over every translation unit so that calls and globals work across files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from clang.cindex import Cursor, CursorKind, TypeKind

from perfcast.static.cursors import (
    LOOPS,
    assignment_target,
    children,
    contains,
    declares_only,
    expansion_span,
    in_file,
    key,
    offset_of,
    operator,
    referenced,
    single_pass,
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


class MacroTable(Mapping[str, Macro]):
    """Macro definitions by name, read from a definition's tokens only when first asked for
    (a file including large headers defines thousands; the analysis looks up a few)."""

    def __init__(self) -> None:
        self._definitions: dict[str, Cursor] = {}
        self._read: dict[str, Macro] = {}

    def define(self, cursor: Cursor) -> None:
        """Record a MACRO_DEFINITION cursor (a later definition of a name replaces it)."""
        self._definitions[cursor.spelling] = cursor
        self._read.pop(cursor.spelling, None)

    def __getitem__(self, name: str) -> Macro:
        found = self._read.get(name)
        if found is None:
            found = self._read[name] = _macro(self._definitions[name])
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    def __iter__(self) -> Iterator[str]:
        return iter(self._definitions)

    def __len__(self) -> int:
        return len(self._definitions)


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
    indirect_reason: dict[str, str] = field(default_factory=dict)
    call_targets: dict[int, str] = field(default_factory=dict)
    writes: dict[str, list[Cursor]] = field(default_factory=lambda: defaultdict(list))
    write_function: dict[int, str] = field(default_factory=dict)
    address_of: set[str] = field(default_factory=set)
    initializers: dict[str, Cursor] = field(default_factory=dict)
    macros: MacroTable = field(default_factory=MacroTable)
    instantiations: dict[tuple[str, int], tuple[int, str]] = field(default_factory=dict)
    instantiation_offsets: set[int] = field(default_factory=set)
    writes_globals: dict[str, set[str]] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)
    ambiguous: set[str] = field(default_factory=set)
    loops: list[Cursor] = field(default_factory=list)
    # What each function (by name) and file-scope variable (``var:`` and its key) names:
    # functions (called or not) and variables (``var:`` keys); and the file of each variable
    references: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    variable_files: dict[str, str] = field(default_factory=dict)
    # The returns, gotos and if statements of each function (by name), in walk order
    control: dict[str, list[Cursor]] = field(default_factory=lambda: defaultdict(list))
    _variables_named: dict[str, set[str]] = field(default_factory=dict, repr=False)

    def variables_named(self, name: str) -> set[str]:
        """Keys of the variables (not function arguments) that function bodies refer to by
        ``name`` (computed once per name)."""
        if name not in self._variables_named:
            found: set[str] = set()
            for function in self.functions.values():
                for node in walk(function):
                    if node.kind == CursorKind.DECL_REF_EXPR and node.spelling == name:
                        declaration = referenced(node)
                        if declaration is not None and declaration.kind == CursorKind.VAR_DECL:
                            found.add(key(declaration))
            self._variables_named[name] = found
        return self._variables_named[name]

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
            if node.kind in references and key(referenced(node)) == target:
                return False
        return not any(contains(loop, write) for loop in self.loops)

    def writes_of(self, declaration: Cursor | None) -> list[Cursor]:
        """Every assignment, compound assignment or increment of the declaration."""
        return self.writes.get(key(declaration) or "", [])

    def macro_at(self, cursor: Cursor) -> str | None:
        """Name of the macro whose expansion is exactly this expression, if any."""
        extent = cursor.extent
        if offset_of(extent.start) not in self.instantiation_offsets:
            return None
        found = self.instantiations.get((str(extent.start.file), extent.start.offset))
        if found and found[0] == extent.end.offset:
            return found[1]
        return None

    def macro_names_parameter(self, name: str, parameters: set[str]) -> bool:
        """True when the macro's replacement names a parameter, directly or through other
        macros (a function-like macro's own argument names do not count)."""
        pending, seen = [name], set()
        while pending:
            current = pending.pop()
            if current in parameters:
                return True
            definition = self.macros.get(current)
            if current in seen or definition is None:
                continue
            seen.add(current)
            body = list(definition.body)
            if definition.function_like and ")" in body:
                close = body.index(")")
                arguments = set(body[1:close])
                body = [t for t in body[close + 1 :] if t not in arguments]
            pending.extend(body)
        return False

    def callee(self, call: Cursor) -> str:
        """The function a call runs: its name, or the one target of a function pointer."""
        return self.call_targets.get(call.hash, call.spelling)

    def function_writes(self, name: str) -> set[str]:
        """Keys of globals and struct members written by the function or anything it calls."""
        return self.writes_globals.get(name, set())


def initializer(declaration: Cursor) -> Cursor | None:
    """The initializer expression of a variable declaration, if it has one."""
    kids = [k for k in children(declaration) if k.kind != CursorKind.TYPE_REF]
    if not kids:
        return None
    bound = offset_of(kids[-1].extent.start)
    before = None  # the last token ending before the last child (tokens come in file order)
    for token in declaration.get_tokens():
        if offset_of(token.extent.end) > bound:
            break
        before = token
    if before is not None and before.spelling == "=":
        return kids[-1]
    return None


def collect(sources: list[ParsedSource]) -> Program:
    """Gather the program facts of all parsed sources."""
    program = Program(sources)
    callee_refs: set[int] = set()
    function_refs: list[Cursor] = []
    pointers = _PointerUses()
    for source in sources:
        unit = source.unit
        file_names: dict[int, str] = {}
        for cursor in children(unit.cursor):
            if cursor.kind == CursorKind.INCLUSION_DIRECTIVE:
                continue
            location = cursor.location
            if location.is_in_system_header or not in_file(location):
                continue
            if cursor.kind == CursorKind.MACRO_DEFINITION:
                program.macros.define(cursor)
            elif cursor.kind == CursorKind.MACRO_INSTANTIATION:
                # An expansion's location is the start of its extent.
                file, start, end = expansion_span(cursor, file_names)
                program.instantiations[(str(file), start)] = (end, cursor.spelling)
                program.instantiation_offsets.add(start)
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
            if cursor.kind not in _MACROS and not declares_only(cursor):
                _scan(program, cursor, source, callee_refs, function_refs, pointers)
    _resolve_pointers(program, pointers, [r for r in function_refs if r.hash not in callee_refs])
    _close_global_writes(program)
    return program


_MACROS = {CursorKind.MACRO_DEFINITION, CursorKind.MACRO_INSTANTIATION}
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
        and offset_of(tokens[1].extent.start) == offset_of(tokens[0].extent.end)
    )
    return Macro(cursor.spelling, tuple(t.spelling for t in tokens[1:]), function_like)


def _scan(
    program: Program,
    top: Cursor,
    source: ParsedSource,
    callee_refs: set[int],
    function_refs: list[Cursor],
    pointers: _PointerUses,
) -> None:
    function = top.spelling if top.kind == CursorKind.FUNCTION_DECL else ""
    entity = f"var:{key(top)}" if top.kind == CursorKind.VAR_DECL else function
    if top.kind == CursorKind.VAR_DECL:
        program.variable_files[entity] = str(top.location.file)
    # the loops of the definition a name stands for (not of a second one of the same name)
    listed = bool(function) and program.functions.get(function) == top
    pointer_types = pointers.declarations
    control = program.control[function] if listed else []
    for cursor in walk(top):
        kind = cursor.kind
        if kind in LOOPS and listed and not single_pass(cursor):
            program.loops.append(cursor)
        if kind in _CONTROL:
            control.append(cursor)
        if kind not in _SCANNED:
            continue
        if kind == CursorKind.VAR_DECL:
            init = initializer(cursor)
            if init is not None:
                program.initializers[key(cursor)] = init
                if _is_function_pointer(cursor):
                    pointers.stores.append((cursor, init))
        elif kind == CursorKind.CALL_EXPR:
            kids = children(cursor)
            callee = _callee(kids[0]) if kids else None
            named = referenced(callee) if callee is not None else None
            if callee is None:
                pass
            elif named is None or named.kind == CursorKind.FUNCTION_DECL:
                callee_refs.add(callee.hash)
                program.calls[cursor.spelling].append(
                    CallSite(function, cursor.spelling, cursor, source)
                )
                program.calls_from[function].add(cursor.spelling)
            else:
                pointers.calls.append(CallSite(function, callee.spelling, cursor, source))
                pointers.callee_refs.add(callee.hash)
        elif kind in _REFERENCES:
            named = referenced(cursor)
            if named is None:
                continue
            named_kind = named.kind
            if named_kind == CursorKind.FUNCTION_DECL:
                function_refs.append(cursor)
                program.references[entity].add(named.spelling)
                continue
            # a declaration's type is asked once, however often it is referenced
            identity = bytes(named)
            pointer = pointer_types.get(identity)
            if pointer is None:
                pointer = pointer_types[identity] = _is_function_pointer(named)
            if pointer:
                pointers.references.append(cursor)
            if named_kind == CursorKind.VAR_DECL:
                program.references[entity].add(f"var:{key(named)}")
        else:
            spelled = operator(cursor)
            if _writes(kind, spelled):
                target = assignment_target(cursor)
                if target is not None:
                    program.writes[key(target)].append(cursor)
                    program.write_function[cursor.hash] = function
                    if _is_function_pointer(target):
                        value = children(cursor)[1] if spelled == "=" else None
                        pointers.stores.append((target, value))
                        pointers.written_refs.add(strip(children(cursor)[0]).hash)
            if kind == CursorKind.UNARY_OPERATOR and spelled == "&":
                target = strip(children(cursor)[0]) if children(cursor) else None
                if target is not None and target.kind in _REFERENCES:
                    named = referenced(target)
                    if named is not None:
                        program.address_of.add(key(named))


_REFERENCES = (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR)
_CONTROL = {
    CursorKind.RETURN_STMT,
    CursorKind.GOTO_STMT,
    CursorKind.INDIRECT_GOTO_STMT,
    CursorKind.IF_STMT,
}


def _writes(kind: CursorKind, spelled: str) -> bool:
    """:func:`is_write` for an operator of ``kind`` whose :func:`operator` is ``spelled``."""
    if kind == CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
        return True
    if kind == CursorKind.BINARY_OPERATOR:
        return spelled == "="
    return kind == CursorKind.UNARY_OPERATOR and spelled in ("++", "--", "post++", "post--")


# The kinds _scan looks at (every other cursor only leads to these).
_SCANNED = {
    CursorKind.VAR_DECL,
    CursorKind.CALL_EXPR,
    CursorKind.DECL_REF_EXPR,
    CursorKind.MEMBER_REF_EXPR,
    CursorKind.BINARY_OPERATOR,
    CursorKind.COMPOUND_ASSIGNMENT_OPERATOR,
    CursorKind.UNARY_OPERATOR,
}


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


@dataclass
class _PointerUses:
    """Function-pointer variables as the scan finds them: values stored, calls, other uses."""

    stores: list[tuple[Cursor, Cursor | None]] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    references: list[Cursor] = field(default_factory=list)
    callee_refs: set[int] = field(default_factory=set)
    written_refs: set[int] = field(default_factory=set)
    # whether a declaration (by libclang's bytes of its cursor) is a function pointer
    declarations: dict[bytes, bool] = field(default_factory=dict)


def _is_function_pointer(declaration: Cursor) -> bool:
    kind = declaration.kind
    if kind not in (CursorKind.VAR_DECL, CursorKind.PARM_DECL, CursorKind.FIELD_DECL):
        return False
    canonical = declaration.type.get_canonical()
    return canonical.kind == TypeKind.POINTER and canonical.get_pointee().kind in (
        TypeKind.FUNCTIONPROTO,
        TypeKind.FUNCTIONNOPROTO,
    )


def _callee(expression: Cursor) -> Cursor | None:
    """The name a call goes through: ``f``, ``fp``, ``(*fp)`` or ``s.fp`` (None otherwise)."""
    expression = strip(expression)
    while expression.kind == CursorKind.UNARY_OPERATOR and operator(expression) == "*":
        expression = strip(children(expression)[0])
    if expression.kind in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
        return expression
    return None


def _stored_function(value: Cursor | None) -> Cursor | None:
    """The function reference ``f`` or ``&f`` that a stored value is, if it is one."""
    if value is None:
        return None
    value = strip(value)
    if value.kind == CursorKind.UNARY_OPERATOR and operator(value) == "&":
        value = strip(children(value)[0])
    named = referenced(value) if value.kind == CursorKind.DECL_REF_EXPR else None
    if named is not None and named.kind == CursorKind.FUNCTION_DECL:
        return value
    return None


def _resolve_pointers(program: Program, pointers: _PointerUses, escaping: list[Cursor]) -> None:
    """Turn calls through a function pointer into call sites of its one target.

    A pointer resolves when it is a variable (not an argument or struct member) whose address
    is not taken, every value ever stored in it is the same function, and it is only called,
    never copied or passed on. A function whose address goes anywhere else gets a reason in
    ``program.indirect_reason`` and its kernels stay undef.
    """
    targets: dict[str, set[str | None]] = defaultdict(set)
    names: dict[str, str] = {}
    stored: set[int] = set()
    for variable, value in pointers.stores:
        reference = _stored_function(value)
        targets[key(variable)].add(reference.spelling if reference is not None else None)
        names[key(variable)] = variable.spelling
        if reference is not None:
            stored.add(reference.hash)
    problems: dict[str, str] = {}
    for reference in pointers.references:
        if reference.hash in pointers.callee_refs or reference.hash in pointers.written_refs:
            continue
        variable = reference.referenced
        problems.setdefault(
            key(variable),
            f"the function pointer {variable.spelling} is copied or passed on at "
            f"{reference.location.file}:{reference.location.line}",
        )
    for reference in escaping:
        name = reference.spelling
        if name in program.functions and reference.hash not in stored:
            program.indirect_reason.setdefault(
                name,
                f"the address of {name} is taken at {reference.location.file}:"
                f"{reference.location.line} and not only stored in a function pointer, so "
                "calls through it are not counted",
            )
    for site in pointers.calls:
        callee = _callee(children(site.cursor)[0])
        variable = callee.referenced if callee is not None else None
        if variable is None:
            continue
        identity = key(variable)
        functions = targets.get(identity, set())
        defined = sorted(f for f in functions if f is not None and f in program.functions)
        if variable.kind != CursorKind.VAR_DECL:
            what = "an argument" if variable.kind == CursorKind.PARM_DECL else "a struct member"
            problems.setdefault(identity, f"{variable.spelling} is {what}")
        elif identity in program.address_of:
            problems.setdefault(identity, f"the address of {variable.spelling} is taken")
        elif len(functions) != 1:
            values = ", ".join(sorted(f or "a value that is not a function" for f in functions))
            problems.setdefault(
                identity, f"{variable.spelling} is assigned {len(functions)} values ({values})"
            )
        problem = problems.get(identity)
        where = f"{site.source.path}:{site.cursor.location.line}"
        for name in defined:
            if problem is not None:
                program.indirect_reason.setdefault(
                    name,
                    f"{name} may be called through the function pointer {variable.spelling} "
                    f"at {where}, which cannot be resolved ({problem})",
                )
            else:
                program.call_targets[site.cursor.hash] = name
                program.calls[name].append(CallSite(site.caller, name, site.cursor, site.source))
                program.calls_from[site.caller].add(name)
