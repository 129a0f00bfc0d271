"""The shortcuts past the clang bindings (issue 20, speed) answer what the bindings answer:
the declaration a reference names, offsets, whether a location is in a file, declaration keys,
and the functions a header declares noreturn (files that never say it are not tokenized)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clang.cindex import Cursor, conf

from perfcast.static.cursors import in_file, key, offset_of, referenced, walk
from perfcast.static.error_paths import noreturn_functions
from perfcast.static.frontend import parse_sources
from perfcast.static.program import collect

HERE = Path(__file__).parent
SOURCES = sorted((HERE / "programs").glob("*.c")) + sorted((HERE / "corpus").glob("*.c"))


def _nodes(source: Path) -> list[Cursor]:
    parsed, _ = parse_sources([source], [f"-I{source.parent}"])
    return list(walk(parsed[0].unit.cursor))


def _identity(cursor: Cursor | None) -> tuple | None:
    if cursor is None:
        return None
    return (cursor.kind, cursor.spelling, cursor.hash, cursor.location.line, cursor.get_usr())


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_shortcuts_answer_as_the_bindings(source):
    nodes = _nodes(source)
    named = 0
    for node in nodes:
        # the bindings' own call, on a fresh copy so that nothing cached answers
        theirs = conf.lib.clang_getCursorReferenced(node)
        mine = referenced(node)
        assert _identity(mine) == _identity(theirs)
        assert node.referenced is mine  # kept where the bindings keep it
        named += mine is not None
        for location in (node.extent.start, node.extent.end, node.location):
            assert offset_of(location) == location.offset
            assert in_file(location) == (location.file is not None)
        if node.kind.is_declaration():
            expected = node.get_usr() or f"{node.location.file}:{node.location.offset}"
            assert key(node) == expected
            assert key(node) == expected  # the second answer comes from the unit's table
    assert named > 10


def test_noreturn_found_in_a_header_and_not_guessed_elsewhere(tmp_path):
    (tmp_path / "die.h").write_text(
        "_Noreturn void die(const char *why);\n"
        "static inline int twice(int x) { return 2 * x; }\n"
        "_Noreturn void die(const char *why) { for (;;) { } }\n"
    )
    (tmp_path / "plain.h").write_text("static inline int half(int x) { return x / 2; }\n")
    source = tmp_path / "main.c"
    source.write_text(
        '#include "die.h"\n#include "plain.h"\n'
        'static void fail(void) { die("x"); }\n'
        "int main(int argc, char **argv) { if (argc > 3) fail(); return twice(half(argc)); }\n"
    )
    parsed, _ = parse_sources([source], [])
    program = collect(parsed)
    found = noreturn_functions(program.functions)
    assert {"die", "fail"} <= found
    assert not {"twice", "half", "main"} & found
