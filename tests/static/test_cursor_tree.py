"""The speed machinery of the static analysis changes nothing it computes: children read from
the unit's one-traversal tree are libclang's own, macros read on demand are the definitions in
force, and the garbage collector comes back after an analysis, also after an error."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from clang.cindex import Cursor, CursorKind

from perfcast.core.errors import InputError
from perfcast.static import analyze
from perfcast.static.cursors import children, walk
from perfcast.static.frontend import parse_sources
from perfcast.static.parameter_check import check_parameters
from perfcast.static.program import collect

HERE = Path(__file__).parent
SOURCES = sorted((HERE / "programs").glob("*.c")) + sorted((HERE / "corpus").glob("*.c"))


def _node(cursor: Cursor) -> tuple:
    """What identifies a node of the syntax tree (libclang's cursor equality also compares the
    enclosing declaration it remembers, which a walk started at a statement leaves empty)."""
    extent = cursor.extent
    return (cursor.hash, cursor.kind, cursor.spelling, extent.start.offset, extent.end.offset)


def _libclang_walk(cursor: Cursor) -> list[Cursor]:
    """Pre-order walk asking libclang for every cursor's children (no tree)."""
    found = [cursor]
    for child in cursor.get_children():
        found.extend(_libclang_walk(child))
    return found


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_tree_children_are_libclangs_children(source):
    parsed, _ = parse_sources([source], [f"-I{source.parent}"])
    root = parsed[0].unit.cursor
    expected = _libclang_walk(root)
    walked = list(walk(root))
    assert len(walked) == len(expected) > 100
    for mine, theirs in zip(walked, expected, strict=True):
        assert _node(mine) == _node(theirs)
        assert [_node(c) for c in children(mine)] == [_node(c) for c in theirs.get_children()]


def test_a_cursor_outside_the_tree_still_has_its_children(tmp_path):
    source = tmp_path / "a.c"
    source.write_text("static int table[3] = {1, 2, 3};\nint main(void) { return table[1]; }\n")
    parsed, _ = parse_sources([source], [])
    reference = next(c for c in walk(parsed[0].unit.cursor) if c.kind == CursorKind.DECL_REF_EXPR)
    declaration = reference.referenced
    assert declaration.spelling == "table"
    found = [_node(c) for c in children(declaration)]
    assert found == [_node(c) for c in declaration.get_children()]
    assert CursorKind.INIT_LIST_EXPR in [node[1] for node in found]


def test_a_macro_is_read_as_last_defined(tmp_path):
    source = tmp_path / "a.c"
    source.write_text(
        "#define SIZE 10\n#define SCALE(x) ((x) * SIZE)\n#undef SIZE\n#define SIZE n\n"
        "int n;\nint main(void) { int s = 0; for (int i = 0; i < SCALE(2); i++) s++; "
        "return s; }\n"
    )
    parsed, _ = parse_sources([source], [])
    program = collect(parsed)
    assert program.macros["SIZE"].body == ("n",)
    assert program.macros["SCALE"].function_like
    assert "SCALE" in program.macros and "NOT_A_MACRO" not in program.macros
    assert program.macros.get("NOT_A_MACRO") is None
    assert program.macro_names_parameter("SCALE", {"n"})
    assert not program.macro_names_parameter("SCALE", {"x"})


def test_a_parameter_named_only_in_a_header_is_known(tmp_path):
    (tmp_path / "sizes.h").write_text("extern int rows;\n")
    source = tmp_path / "a.c"
    source.write_text('#include "sizes.h"\nint main(void) { return 0; }\n')
    parsed, _ = parse_sources([source], [])
    check_parameters(parsed, ["rows"])
    with pytest.raises(InputError, match="'cols' occurs in none of the sources"):
        check_parameters(parsed, ["rows", "cols"])


@pytest.mark.parametrize("broken", [False, True])
def test_the_garbage_collector_is_back_after_an_analysis(tmp_path, broken):
    source = tmp_path / "a.c"
    source.write_text("int main(void) { return 0 +; }\n" if broken else "int main(void) {}\n")
    assert gc.isenabled()
    if broken:
        with pytest.raises(InputError):
            analyze([source], [])
    else:
        assert analyze([source], []).kernel("main").count == 1
    assert gc.isenabled()
