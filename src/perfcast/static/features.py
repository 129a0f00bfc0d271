"""Instrument C sources for run-time features: a source-to-source rewriter on libclang.

Every site is found by its cursor in clang's syntax tree and rewritten by inserting text at
offsets of the original file (the token extents clang reports), never by searching the text:

* each assignment to a scalar variable outside loops (``x = e``, ``x += e``, ``int x = e``)
  records the variable's value after it (kind ``assign``; a site assigned twice is two
  features);
* each ``if`` counts its two outcomes (kinds ``branch:then`` and ``branch:else``);
* each loop counts its trips (kind ``loop``): a ``for`` or ``while`` its condition's true
  outcomes, a ``do`` loop the evaluations of its condition;
* each call of an MPI communication routine counts its calls (``mpi_calls``) and, when its
  count and datatype arguments have no side effects, its bytes (``mpi_bytes``);
* ``MPI_Finalize`` first reduces the features over the ranks (and the run's time, written
  as ``elapsed``, starts when ``MPI_Init`` returns), and
  ``#pragma perfcast features_end`` writes them when an early phase of the run ends.

A feature is named ``file:line:kind:name`` (``name`` the variable, the loop keyword, the MPI
routine), made unique with ``#2``, ``#3`` on a line that has several. Sites spelled by a macro
(whose text is the macro's use, not the code) are left alone and listed as skipped. The
runtime is the header ``perfcast_features.h`` (package data), copied beside the rewritten
sources, so they build with the original command.
"""

from __future__ import annotations

import bisect
import json
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from clang.cindex import Cursor, CursorKind, Token, TokenKind, TranslationUnit, TypeKind

from perfcast.core.errors import InputError
from perfcast.static.cursors import LOOPS, children, operator, strip
from perfcast.static.frontend import parse_sources
from perfcast.static.include_paths import source_include_flags

HEADER = "perfcast_features.h"

#: MPI routines whose traffic is counted: name -> (index of the count, index of the datatype),
#: or None for calls counted without a size.
MPI_ROUTINES: dict[str, tuple[int, int] | None] = {
    "MPI_Send": (1, 2), "MPI_Isend": (1, 2), "MPI_Ssend": (1, 2), "MPI_Rsend": (1, 2),
    "MPI_Bsend": (1, 2), "MPI_Recv": (1, 2), "MPI_Irecv": (1, 2), "MPI_Bcast": (1, 2),
    "MPI_Sendrecv": (1, 2), "MPI_Sendrecv_replace": (1, 2), "MPI_Reduce": (2, 3),
    "MPI_Allreduce": (2, 3), "MPI_Iallreduce": (2, 3), "MPI_Scan": (2, 3), "MPI_Exscan": (2, 3),
    "MPI_Gather": (1, 2), "MPI_Scatter": (1, 2), "MPI_Allgather": (1, 2),
    "MPI_Alltoall": (1, 2), "MPI_Gatherv": (1, 2), "MPI_Allgatherv": (1, 2),
    "MPI_Barrier": None, "MPI_Wait": None, "MPI_Waitall": None, "MPI_Alltoallv": None,
    "MPI_Scatterv": None, "MPI_Probe": None, "MPI_Iprobe": None, "MPI_Test": None,
}  # fmt: skip

_SCALAR_TYPES = {
    TypeKind.BOOL, TypeKind.CHAR_U, TypeKind.UCHAR, TypeKind.CHAR_S, TypeKind.SCHAR,
    TypeKind.USHORT, TypeKind.UINT, TypeKind.ULONG, TypeKind.ULONGLONG, TypeKind.SHORT,
    TypeKind.INT, TypeKind.LONG, TypeKind.LONGLONG, TypeKind.FLOAT, TypeKind.DOUBLE,
    TypeKind.LONGDOUBLE, TypeKind.ENUM,
}  # fmt: skip
#: Operators whose presence in an argument makes evaluating it twice unsafe.
_SIDE_EFFECTS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--"}
#: Kinds of statements whose children are in statement position.
_STATEMENT_PARENTS = {
    CursorKind.COMPOUND_STMT, CursorKind.CASE_STMT, CursorKind.DEFAULT_STMT,
    CursorKind.LABEL_STMT,
}  # fmt: skip


@dataclass(frozen=True)
class Feature:
    """One instrumented feature.

    Attributes
    ----------
    name : str
        ``file:line:kind:name``, the run table's column.
    kind : str
        ``assign``, ``branch:then``, ``branch:else``, ``loop``, ``mpi_calls`` or ``mpi_bytes``.
    file : str
    line : int
    """

    name: str
    kind: str
    file: str
    line: int

    @property
    def counter(self) -> bool:
        """Whether its value is a count (summed over ranks) rather than a variable's value."""
        return self.kind != "assign"


@dataclass
class InstrumentedSource:
    """A rewritten source.

    Attributes
    ----------
    original, path : Path
        The source read and the instrumented copy written.
    features : list of Feature
    skipped : list of str
        Sites left alone, each with its line and why (spelled by a macro, MPI not included).
    """

    original: Path
    path: Path
    features: list[Feature] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Wrap:
    """Text to put around the original bytes ``start:end`` (``replace``: instead of them)."""

    start: int
    end: int
    prefix: str
    suffix: str = ""
    replace: bool = False


def header_path() -> Path:
    """The runtime header shipped with perfcast."""
    return Path(str(files("perfcast.static") / "c" / HEADER))


def instrument_features(
    sources: Sequence[str | Path],
    output: str | Path,
    compile_args: Sequence[str] = (),
    parameters: Sequence[str] = (),
) -> list[InstrumentedSource]:
    """Rewrite C sources into ``output`` (with the runtime header and ``features.json``).

    Parameters
    ----------
    sources : sequence of str or Path
        C files, parsed with ``compile_args`` (``-I``, ``-D`` as the build uses them).
    output : str or Path
        Directory for the instrumented copies (created); it must not hold a source itself.
    compile_args : sequence of str
        Flags for parsing; the MPI wrapper's include flags are added when ``mpicc`` exists.
    parameters : sequence of str
        Variables that are the program's input parameters: the first assignment to each is
        named just by the variable (a column ``n`` rather than ``app.c:12:assign:n``).

    Returns
    -------
    list of InstrumentedSource

    Raises
    ------
    InputError
        When a source is missing or clang reports an error in it, two sources share a file
        name, or ``output`` is the directory of a source, a file or cannot be created.
    """
    out = Path(output)
    names = [Path(s).name for s in sources]
    if len(set(names)) != len(names):
        raise InputError("two sources share a file name; instrument them into separate folders")
    for source in sources:
        if Path(source).resolve().parent == out.resolve():
            raise InputError("the output folder holds this source; choose another", source)
    if out.exists() and not out.is_dir():
        raise InputError("the output folder is a file; choose a folder", out)
    parsed, _ = parse_sources(sources, [*compile_args, *source_include_flags()])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create the output folder ({error.strerror})", out) from None
    shutil.copyfile(header_path(), out / HEADER)
    results = []
    named: set[str] = set()
    for unit in parsed:
        result = InstrumentedSource(unit.path, out / unit.path.name)
        # clang's offsets count bytes of the file as it is (CRLF line ends included)
        data = unit.path.read_bytes()
        text = _rewrite(_Rewriter(unit.unit, unit.path, data, result, parameters, named))
        result.path.write_bytes(text)
        results.append(result)
    manifest = {
        "features": [
            {"name": f.name, "kind": f.kind, "file": f.file, "line": f.line}
            for r in results
            for f in r.features
        ],
        "skipped": [s for r in results for s in r.skipped],
    }
    (out / "features.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return results


class _Rewriter:
    """Collects the wraps and features of one translation unit."""

    def __init__(
        self,
        unit,
        path: Path,
        data: bytes,
        result: InstrumentedSource,
        parameters: Sequence[str] = (),
        named: set[str] | None = None,
    ) -> None:
        self.parameters = set(parameters)
        self.named = named if named is not None else set()
        self.unit = unit
        self.path = path
        self.data = data
        self.result = result
        self.wraps: list[_Wrap] = []
        self.kinds: list[int] = []
        self.lines: dict[tuple[int, str], int] = {}
        top = [c for c in unit.cursor.get_children() if self._here(c)]
        self.macros = [
            (c.extent.start.offset, c.extent.end.offset)
            for c in top
            if c.kind == CursorKind.MACRO_INSTANTIATION
        ]
        self.definitions = [
            (c.extent.start.offset, c.extent.end.offset)
            for c in top
            if c.kind == CursorKind.MACRO_DEFINITION
        ]
        self.mpi = False
        # comments are no code: a directive binds the statement after a comment between them
        self.file_tokens = [
            t for t in unit.get_tokens(extent=unit.cursor.extent) if t.kind != TokenKind.COMMENT
        ]
        directives = _directives(self.file_tokens, data, _pragma_macros(unit))
        self.directed = _loop_directives(self.file_tokens, directives)
        self.atomic = _atomic_statements(self.file_tokens, directives)
        self.token_offsets: list[int] | None = None

    def _here(self, cursor: Cursor) -> bool:
        file = cursor.extent.start.file
        return file is not None and Path(file.name) == self.path

    def _tokens(self, cursor: Cursor) -> list[Token]:
        """The cursor's tokens if they are the text at its extent in this file, else none.

        A statement expanded from a macro has its extent at the macro's use but its tokens,
        and their offsets, in the macro's definition: in a header (glibc's ``assert`` holds an
        ``if``) or further up this file (``#define LOAD(f) do { ... } while (0)``).
        """
        tokens = list(cursor.get_tokens())
        if not tokens:
            return []
        first, last = tokens[0], tokens[-1]
        for token in (first, last):
            file = token.location.file
            if file is None or Path(file.name) != self.path:
                return []
        if first.extent.start.offset != cursor.extent.start.offset:
            return []
        return tokens

    def feature(self, line: int, kind: str, name: str) -> int:
        """Register a feature; returns its index."""
        if kind == "assign" and name in self.parameters and name not in self.named:
            self.named.add(name)
            base = name
        else:
            base = f"{self.path.name}:{line}:{kind}:{name}"
        count = self.lines.get((line, f"{kind}:{name}"), 0) + 1
        self.lines[(line, f"{kind}:{name}")] = count
        self.result.features.append(
            Feature(base if count == 1 else f"{base}#{count}", kind, str(self.path), line)
        )
        self.kinds.append(0 if kind != "assign" else 1)
        return len(self.result.features) - 1

    def safe(self, start: int, end: int) -> bool:
        """Whether wrapping ``start:end`` keeps every macro use whole and no macro's body is
        touched (a site whose tokens are spelled in a ``#define``)."""
        if any(d_start <= start <= d_end for d_start, d_end in self.definitions):
            return False
        for m_start, m_end in self.macros:
            if m_start < start < m_end or m_start < end < m_end:
                return False
            if start == m_start and end < m_end:
                return False
        return start < end

    def skip(self, cursor: Cursor, why: str) -> None:
        self.result.skipped.append(f"{self.path.name}:{cursor.extent.start.line}: {why}")

    # ------------------------------------------------------------------ walking

    def run(self) -> None:
        for cursor in self.unit.cursor.get_children():
            if (
                cursor.kind == CursorKind.FUNCTION_DECL
                and cursor.is_definition()
                and self._here(cursor)
            ):
                self.visit(cursor, in_loop=False, statement=False)

    def visit(self, cursor: Cursor, in_loop: bool, statement: bool) -> None:
        kind = cursor.kind
        if cursor.extent.start.offset in self.atomic and kind != CursorKind.COMPOUND_STMT:
            if kind in _ATOMIC_SITES:
                self.skip(cursor, "statement under an atomic directive (its form is fixed)")
            return
        if kind == CursorKind.IF_STMT:
            self.branch(cursor)
        elif kind in LOOPS:
            self.loop(cursor)
        elif kind == CursorKind.CALL_EXPR:
            self.call(cursor)
        elif statement and not in_loop:
            if kind in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR):
                self.assignment(cursor)
            elif kind == CursorKind.DECL_STMT:
                self.declaration(cursor)
        kids = children(cursor)
        for index, child in enumerate(kids):
            child_statement = (
                kind in _STATEMENT_PARENTS
                or (kind == CursorKind.IF_STMT and index > 0)
                or (statement and kind == CursorKind.BINARY_OPERATOR and operator(cursor) == ",")
            )
            self.visit(child, in_loop or kind in LOOPS, child_statement)

    # ------------------------------------------------------------------ sites

    def branch(self, cursor: Cursor) -> None:
        tokens = self._tokens(cursor)
        condition = _parenthesized(tokens, 0)
        if not tokens or tokens[0].spelling != "if" or condition is None:
            self.skip(cursor, "if statement spelled by a macro")
            return
        start, end = condition
        if not self.safe(start, end):
            self.skip(cursor, "if condition partly in a macro")
            return
        line = cursor.extent.start.line
        index = self.feature(line, "branch:then", "if")
        self.feature(line, "branch:else", "if")
        self.wraps.append(_Wrap(start, end, f"PERFCAST_BRANCH({index}, ", ")"))

    def loop(self, cursor: Cursor) -> None:
        tokens = self._tokens(cursor)
        keyword = {
            CursorKind.FOR_STMT: "for",
            CursorKind.WHILE_STMT: "while",
            CursorKind.DO_STMT: "do",
        }[cursor.kind]
        if not tokens or tokens[0].spelling != keyword:
            self.skip(cursor, f"{keyword} loop spelled by a macro")
            return
        line = cursor.extent.start.line
        if cursor.extent.start.offset in self.directed:
            self.directed_loop(cursor, self.directed[cursor.extent.start.offset])
            return
        if cursor.kind == CursorKind.DO_STMT:
            condition = children(cursor)[-1]
            start, end = condition.extent.start.offset, condition.extent.end.offset
            if not self._tokens(condition) or not self.safe(start, end):
                self.skip(cursor, "do loop condition partly in a macro")
                return
            index = self.feature(line, "loop", keyword)
            self.wraps.append(_Wrap(start, end, f"PERFCAST_DO({index}, ", ")"))
            return
        span = _parenthesized(tokens, 0)
        if span is None:
            self.skip(cursor, f"{keyword} loop header not found")
            return
        if cursor.kind == CursorKind.FOR_STMT:
            found = _for_condition(tokens)
            if found is None:
                self.skip(cursor, "for loop header spelled by a macro")
                return
            start, end = found
        else:
            start, end = span
        if start == end:  # for (;;): an empty condition is true
            index = self.feature(line, "loop", keyword)
            self.wraps.append(_Wrap(start, start, f"PERFCAST_LOOP({index}, 1)"))
            return
        if not self.safe(start, end):
            self.skip(cursor, f"{keyword} loop condition partly in a macro")
            return
        index = self.feature(line, "loop", keyword)
        self.wraps.append(_Wrap(start, end, f"PERFCAST_LOOP({index}, ", ")"))

    def directed_loop(self, cursor: Cursor, nest: int) -> None:
        """A loop an OpenMP or OpenACC directive binds: its header must stay as written, so the
        trips are counted at the start of its body (of the innermost of a ``collapse(n)``
        nest, whose outer loops are left alone)."""
        body = children(cursor)[-1]
        if nest > 1:
            self.skip(cursor, f"for loop under a collapse({nest}) directive (counted innermost)")
            inner = body
            while inner.kind == CursorKind.COMPOUND_STMT and len(children(inner)) == 1:
                inner = children(inner)[0]
            if inner.kind == CursorKind.FOR_STMT:
                self.directed[inner.extent.start.offset] = nest - 1
            return
        tokens = self._tokens(body)
        braced = bool(tokens) and (tokens[0].spelling, tokens[-1].spelling) == ("{", "}")
        if braced:  # the body goes into a block of its own, so its declarations stay first
            start, end = tokens[0].extent.end.offset, tokens[-1].extent.start.offset
        else:  # one statement (an expression, if, loop...): braced together with the counter
            start = body.extent.start.offset
            end = self._statement_end(tokens[-1]) if tokens else None
        if end is None or not self.safe(start, end):
            self.skip(cursor, "for loop under a loop directive: its body is spelled by a macro")
            return
        index = self.feature(cursor.extent.start.line, "loop", "for")
        counter = f"PERFCAST_HIT({index});"
        if braced:
            self.wraps.append(_Wrap(start, end, f" {counter} {{", "} "))
        else:
            self.wraps.append(_Wrap(start, end, f"{{ {counter} ", " }"))

    def _statement_end(self, last: Token) -> int | None:
        """End offset of the statement whose extent ends with token ``last``: that token when
        it closes a block or is a ``;``, else the ``;`` right after it (an expression's extent,
        also at the end of an ``if`` or a loop, stops before its semicolon)."""
        if last.spelling in ("}", ";"):
            return int(last.extent.end.offset)
        return self._semicolon_after(last)

    def _semicolon_after(self, token: Token) -> int | None:
        """End offset of the ``;`` right after ``token`` in this file, if that is what follows."""
        if self.token_offsets is None:
            self.token_offsets = [t.extent.start.offset for t in self.file_tokens]
        after = bisect.bisect_right(self.token_offsets, token.extent.start.offset)
        if after < len(self.file_tokens) and self.file_tokens[after].spelling == ";":
            return int(self.file_tokens[after].extent.end.offset)
        return None

    def assignment(self, cursor: Cursor) -> None:
        spelled = operator(cursor)
        if spelled not in _SIDE_EFFECTS - {"++", "--"}:
            return
        target = strip(children(cursor)[0])
        if target.kind != CursorKind.DECL_REF_EXPR or not _scalar(target.type):
            return
        tokens = [t.spelling for t in self._tokens(cursor)]
        start, end = cursor.extent.start.offset, cursor.extent.end.offset
        if spelled not in tokens or target.spelling not in tokens or not self.safe(start, end):
            self.skip(cursor, f"assignment to {target.spelling} spelled by a macro")
            return
        index = self.feature(cursor.extent.start.line, "assign", target.spelling)
        self.wraps.append(_Wrap(end, end, f", PERFCAST_VALUE({index}, {target.spelling})"))

    def declaration(self, cursor: Cursor) -> None:
        tokens = self._tokens(cursor)
        end = cursor.extent.end.offset
        if (
            not tokens
            or tokens[-1].spelling != ";"
            or not self.safe(cursor.extent.start.offset, end)
        ):
            self.skip(cursor, "declaration spelled by a macro")
            return
        spelled = {t.spelling for t in tokens}
        inserts = []
        for variable in children(cursor):
            if (
                variable.kind != CursorKind.VAR_DECL
                or not _scalar(variable.type)
                or not _has_initializer(variable)
                or variable.spelling not in spelled
            ):
                continue
            index = self.feature(variable.extent.start.line, "assign", variable.spelling)
            inserts.append(f" PERFCAST_VALUE({index}, {variable.spelling});")
        if inserts:
            self.wraps.append(_Wrap(end, end, "".join(inserts)))

    def call(self, cursor: Cursor) -> None:
        name = cursor.spelling
        if name not in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize", *MPI_ROUTINES):
            return
        tokens = self._tokens(cursor)
        start, end = cursor.extent.start.offset, cursor.extent.end.offset
        if not tokens or tokens[0].spelling != name or not self.safe(start, end):
            self.skip(cursor, f"{name} call spelled by a macro")
            return
        if not self.mpi:
            self.skip(cursor, f"{name}: mpi.h is not included before the first function")
            return
        if name == "MPI_Finalize":
            self.wraps.append(_Wrap(start, end, "(perfcast_features_finalize(), ", ")"))
            return
        if name.startswith("MPI_Init"):  # the run's time starts when MPI is up
            self.wraps.append(_Wrap(start, end, "perfcast_features_after_init(", ")"))
            return
        line = cursor.extent.start.line
        size = MPI_ROUTINES[name]
        arguments = list(cursor.get_arguments())
        if size is not None and len(arguments) > max(size):
            count, datatype = arguments[size[0]], arguments[size[1]]
            if _pure(count) and _pure(datatype):
                index = self.feature(line, "mpi_calls", name)
                self.feature(line, "mpi_bytes", name)
                texts = [self._text(count), self._text(datatype)]
                prefix = f"PERFCAST_MPI({index}, {texts[0]}, {texts[1]}, "
                self.wraps.append(_Wrap(start, end, prefix, ")"))
                return
        index = self.feature(line, "mpi_calls", name)
        self.wraps.append(_Wrap(start, end, f"PERFCAST_MPI_CALL({index}, ", ")"))

    def pragmas(self) -> None:
        """``#pragma perfcast features_end`` lines, found as tokens, become snapshots."""
        tokens = self.file_tokens
        for i in range(len(tokens) - 3):
            window = [_spelling(t) for t in tokens[i : i + 4]]
            same_line = tokens[i].location.line == tokens[i + 3].location.line
            if window == ["#", "pragma", "perfcast", "features_end"] and same_line:
                start, end = tokens[i].extent.start.offset, tokens[i + 3].extent.end.offset
                self.wraps.append(_Wrap(start, end, "PERFCAST_SNAPSHOT();", replace=True))

    def _text(self, cursor: Cursor) -> str:
        return self.data[cursor.extent.start.offset : cursor.extent.end.offset].decode()


#: Words of an OpenMP or OpenACC directive that bind it to the loop that follows.
_LOOP_DIRECTIVE_WORDS = frozenset({"for", "simd", "loop", "taskloop", "distribute"})


def _directives(
    tokens: Sequence[Token], data: bytes, pragma_macros: dict[str, list[str]]
) -> list[tuple[list[str], int]]:
    """Every OpenMP or OpenACC directive of the file: its words after ``omp``/``acc`` and the
    index of the first token of the statement it binds (past comments and preprocessor lines
    such as the ``#endif`` of ``#ifdef _OPENMP``). A directive is a ``#pragma`` line, the
    ``_Pragma("omp ...")`` operator, or a macro whose definition is such an operator
    (``pragma_macros``: its name and words)."""
    found: list[tuple[list[str], int]] = []
    i = 0
    while i < len(tokens):
        spelling = _spelling(tokens[i])
        words: list[str] | None = None
        if spelling == "#":  # a preprocessor line: a #pragma, else skipped whole (#define)
            end = _directive_end(data, tokens[i].extent.start.offset)
            j = i + 1
            line = []
            while j < len(tokens) and tokens[j].extent.start.offset < end:
                line.append(_spelling(tokens[j]))
                j += 1
            if len(line) > 1 and line[0] == "pragma" and line[1] in ("omp", "acc"):
                words = line[2:]
        elif spelling == "_Pragma" and i + 3 < len(tokens) and _spelling(tokens[i + 1]) == "(":
            words = _pragma_operator_words(_spelling(tokens[i + 2]))
            j = i + 4 if _spelling(tokens[i + 3]) == ")" else i + 3
        elif spelling in pragma_macros and tokens[i].kind == TokenKind.IDENTIFIER:
            words = pragma_macros[spelling]
            j = i + 1
        else:
            i += 1
            continue
        if words is not None:
            found.append((words, _after_directives(tokens, j, data)))
        i = max(j, i + 1)
    return found


def _pragma_operator_words(literal: str) -> list[str] | None:
    """The words after ``omp``/``acc`` of a ``_Pragma`` string literal, else None."""
    if len(literal) < 2 or not literal.endswith('"'):
        return None
    words = re.findall(r"\w+|[^\s\w]", literal[literal.index('"') + 1 : -1])
    return words[1:] if words and words[0] in ("omp", "acc") else None


def _pragma_macros(unit: TranslationUnit) -> dict[str, list[str]]:
    """Macros (of the file or its headers) whose definition is ``_Pragma("omp ...")``: their
    names and the directive's words."""
    macros: dict[str, list[str]] = {}
    for cursor in unit.cursor.get_children():
        if cursor.kind != CursorKind.MACRO_DEFINITION:
            continue
        body = [_spelling(t) for t in cursor.get_tokens()][1:]
        if len(body) >= 3 and body[0] == "_Pragma" and body[1] == "(":
            words = _pragma_operator_words(body[2])
            if words is not None:
                macros[cursor.spelling] = words
    return macros


def _loop_directives(
    tokens: Sequence[Token], directives: Sequence[tuple[list[str], int]]
) -> dict[int, int]:
    """Loops bound by OpenMP or OpenACC loop directives (of :func:`_directives`): the byte
    offset of the first token after each directive, and how many nested loops it binds
    (``collapse(n)``, ``ordered(n)``; 1 otherwise)."""
    bound: dict[int, int] = {}
    for words, j in directives:
        if j == len(tokens) or not _LOOP_DIRECTIVE_WORDS.intersection(words):
            continue
        nest = 1
        for k in range(len(words) - 3):
            clause, opening, number, closing = words[k : k + 4]
            if clause in ("collapse", "ordered") and (opening, closing) == ("(", ")"):
                nest = max(nest, int(number)) if number.isdigit() else nest
        bound[tokens[j].extent.start.offset] = nest
    return bound


#: Statements under an atomic directive that would otherwise get a counter (a note says so).
_ATOMIC_SITES = frozenset(
    {CursorKind.IF_STMT, CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR}
)


def _atomic_statements(
    tokens: Sequence[Token], directives: Sequence[tuple[list[str], int]]
) -> frozenset[int]:
    """Byte offsets of the first token after each OpenMP or OpenACC ``atomic`` directive (of
    :func:`_directives`): the statement there has a form the directive fixes (``x += e;``, or
    the ``if`` of ``atomic compare``), so no counter may be added to it."""
    return frozenset(
        tokens[j].extent.start.offset
        for words, j in directives
        if j < len(tokens) and "atomic" in words
    )


def _after_directives(tokens: Sequence[Token], j: int, data: bytes) -> int:
    """Index of the first token from ``j`` on that is not part of a preprocessor line: the
    statement a directive binds also when ``#endif`` (of ``#ifdef _OPENMP``) or another
    directive line stands between them."""
    while j < len(tokens) and _spelling(tokens[j]) == "#":
        end = _directive_end(data, tokens[j].extent.start.offset)
        while j < len(tokens) and tokens[j].extent.start.offset < end:
            j += 1
    return j


def _directive_end(data: bytes, start: int) -> int:
    """Byte offset of the end of the preprocessor line starting at ``start`` (continued by
    backslashes)."""
    position = start
    while True:
        newline = data.find(b"\n", position)
        if newline < 0:
            return len(data)
        if not data[position:newline].rstrip(b"\r \t").endswith(b"\\"):
            return newline
        position = newline + 1


def _spelling(token: Token) -> str:
    """A token's text; "" for one that is not UTF-8 (a comment or literal in Latin-1, say),
    which the bindings cannot decode and which is no word of a pragma anyway."""
    try:
        return str(token.spelling)
    except UnicodeDecodeError:
        return ""


def _rewrite(rewriter: _Rewriter) -> bytes:
    unit, path, data, result = rewriter.unit, rewriter.path, rewriter.data, rewriter.result
    insert_at, line = _prelude_position(unit, path, data)
    rewriter.mpi = _includes_mpi_before(unit, path, insert_at)
    rewriter.run()
    rewriter.pragmas()
    if not result.features:
        return data
    names = ", ".join(_c_string(json.dumps(f.name)[1:-1]) for f in result.features)
    kinds = ", ".join(str(k) for k in rewriter.kinds)
    prelude = (
        f"#define PERFCAST_FEATURES_COUNT {len(result.features)}\n"
        f"#define PERFCAST_FEATURES_NAMES {{{names}}}\n"
        f"#define PERFCAST_FEATURES_KINDS {{{kinds}}}\n"
        f'#include "{HEADER}"\n'
        f"#line {line} {_c_string(str(path))}\n"
    )
    wraps = [*rewriter.wraps, _Wrap(insert_at, insert_at, prelude)]
    return _apply(data, wraps)


def _includes_mpi_before(unit, path: Path, offset: int) -> bool:
    """Whether ``mpi.h`` is read before byte ``offset`` of the file: included there, or by a
    header included there (a project's own ``comm.h`` or ``parallel.h``, as multi-file MPI
    codes do), at any depth."""
    includes: dict[str, set[str]] = {}
    pending = []
    for inclusion in unit.get_includes():
        source = inclusion.source.name if inclusion.source is not None else ""
        if Path(source) == path:
            if inclusion.location.offset < offset:
                pending.append(inclusion.include.name)
        else:
            includes.setdefault(source, set()).add(inclusion.include.name)
    seen: set[str] = set()
    while pending:
        header = pending.pop()
        if Path(header).name == "mpi.h":
            return True
        if header not in seen:
            seen.add(header)
            pending.extend(includes.get(header, ()))
    return False


def _prelude_position(unit, path: Path, data: bytes) -> tuple[int, int]:
    """Byte offset (start of a line) and line number where the runtime header goes: after the
    last include of the file that comes before its first function."""
    first_function = min(
        (
            c.extent.start.offset
            for c in unit.cursor.get_children()
            if c.kind == CursorKind.FUNCTION_DECL
            and c.extent.start.file is not None
            and Path(c.extent.start.file.name) == path
        ),
        default=len(data),
    )
    position, line = 0, 1
    for cursor in unit.cursor.get_children():
        file = cursor.extent.start.file
        if (
            cursor.kind == CursorKind.INCLUSION_DIRECTIVE
            and file is not None
            and Path(file.name) == path
            and cursor.extent.end.offset < first_function
        ):
            newline = data.find(b"\n", cursor.extent.end.offset)
            position = len(data) if newline < 0 else newline + 1
            line = cursor.extent.end.line + 1
    return position, line


def _apply(data: bytes, wraps: Iterable[_Wrap]) -> bytes:
    """Insert every wrap's text; at one offset closings come first (innermost first), then
    openings (outermost first)."""
    events: list[tuple[int, int, int, bytes]] = []
    removed: list[tuple[int, int]] = []
    for wrap in wraps:
        length = wrap.end - wrap.start
        events.append((wrap.start, 1, -length, wrap.prefix.encode()))
        if wrap.suffix:
            events.append((wrap.end, 0, length, wrap.suffix.encode()))
        if wrap.replace:
            removed.append((wrap.start, wrap.end))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    out = bytearray()
    cursor = 0
    for offset, _, _, text in events:
        out += _kept(data, cursor, offset, removed)
        out += text
        cursor = max(cursor, offset)
    out += _kept(data, cursor, len(data), removed)
    return bytes(out)


def _kept(data: bytes, start: int, end: int, removed: list[tuple[int, int]]) -> bytes:
    """``data[start:end]`` without the removed spans."""
    pieces = bytearray()
    position = start
    for r_start, r_end in sorted(removed):
        if r_end <= position or r_start >= end:
            continue
        pieces += data[position : max(position, r_start)]
        position = max(position, r_end)
    if position < end:
        pieces += data[position:end]
    return bytes(pieces)


def _parenthesized(tokens, start: int) -> tuple[int, int] | None:
    """Byte span inside the first parenthesis pair at or after token ``start``."""
    depth = 0
    opening = None
    for i in range(start, len(tokens)):
        spelling = tokens[i].spelling
        if spelling == "(":
            if depth == 0:
                opening = i
            depth += 1
        elif spelling == ")":
            depth -= 1
            if depth == 0 and opening is not None:
                if opening + 1 == i:
                    end = tokens[i].extent.start.offset
                    return end, end
                return tokens[opening + 1].extent.start.offset, tokens[i - 1].extent.end.offset
    return None


def _for_condition(tokens) -> tuple[int, int] | None:
    """Byte span of a ``for`` header's condition (empty at the second ``;`` when absent)."""
    depth = 0
    semicolons: list[int] = []
    for i, token in enumerate(tokens):
        spelling = token.spelling
        if spelling in ("(", "[", "{"):
            depth += 1
        elif spelling in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                break
        elif spelling == ";" and depth == 1:
            semicolons.append(i)
    if len(semicolons) != 2:
        return None
    first, second = semicolons
    if first + 1 == second:
        offset = tokens[second].extent.start.offset
        return offset, offset
    return tokens[first + 1].extent.start.offset, tokens[second - 1].extent.end.offset


def _scalar(type_) -> bool:
    return type_.get_canonical().kind in _SCALAR_TYPES


def _has_initializer(variable: Cursor) -> bool:
    return any(
        c.kind not in (CursorKind.TYPE_REF, CursorKind.UNEXPOSED_ATTR)
        for c in variable.get_children()
    )


def _pure(cursor: Cursor) -> bool:
    """No call, assignment or increment anywhere in the expression."""
    stack = [cursor]
    while stack:
        node = stack.pop()
        if node.kind == CursorKind.CALL_EXPR:
            return False
        if (
            node.kind
            in (
                CursorKind.BINARY_OPERATOR,
                CursorKind.COMPOUND_ASSIGNMENT_OPERATOR,
                CursorKind.UNARY_OPERATOR,
            )
            and operator(node).replace("post", "") in _SIDE_EFFECTS
        ):
            return False
        stack.extend(node.get_children())
    return True


def _c_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
