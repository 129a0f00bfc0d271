"""Hybrid control-flow graphs from LLVM IR (issue 18), checked against hand-drawn graphs."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from perfcast.api import build_flags
from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.static.hcfg import CATEGORIES, build_graphs

pytestmark = pytest.mark.skipif(
    shutil.which("clang-16") is None and shutil.which("clang") is None, reason="needs clang"
)

CONDITIONAL_LOOP = """\
void f(double *a) {
  for (int i = 0; i < 100; i++) {
    if (a[i] > 0.0)
      a[i] = a[i] * 2.0;
  }
}
"""

NEST = """\
void mm(int n, double *a, double *b, double *c) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++)
        s += a[i*n+k] * b[k*n+j];
      c[i*n+j] = s;
    }
}
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def by_line_and_role(graph):
    """Nodes keyed by what they do, so the test does not depend on LLVM's block order."""
    roles = {}
    for node in graph.nodes:
        ops = dict(node.opcodes)
        if node.kind == "exit":
            roles["exit"] = node
        elif "ret" in ops:
            roles["return"] = node
        elif "fcmp" in ops:
            roles["test"] = node
        elif "fmul" in ops:
            roles["then"] = node
        elif "icmp" in ops:
            roles["latch"] = node
        else:
            roles["entry"] = node
    return roles


def test_function_graph_matches_the_hand_drawn_graph(tmp_path):
    source = write(tmp_path, "f.c", CONDITIONAL_LOOP)
    (graph,) = build_graphs(source, scope="function")
    assert graph.function == "f" and graph.scope == "function" and graph.line == 1
    role = by_line_and_role(graph)
    assert set(role) == {"entry", "test", "then", "latch", "return"}
    ids = {name: node.id for name, node in role.items()}
    drawn = {
        ("entry", "test"): 1.0,
        ("test", "then"): 0.5,
        ("test", "latch"): 0.5,
        ("then", "latch"): 1.0,
        ("latch", "test"): 0.99,  # constant trip count 100: stays with (100 - 1) / 100
        ("latch", "return"): 0.01,
    }
    edges = {(e.source, e.target): e.probability for e in graph.edges}
    assert set(edges) == {(ids[a], ids[b]) for a, b in drawn}
    for (a, b), probability in drawn.items():
        assert edges[(ids[a], ids[b])] == pytest.approx(probability)
    depth = {name: node.loop_depth for name, node in role.items()}
    assert depth == {"entry": 0, "test": 1, "then": 1, "latch": 1, "return": 0}
    mix = dict(zip(CATEGORIES, role["then"].mix, strict=True))
    assert mix["floating_point"] == 1 and mix["memory"] == 1 and mix["control"] == 1
    assert role["then"].dominant in ("floating_point", "memory", "control")
    assert role["test"].dominant == "memory"  # getelementptr and load beat fcmp and br
    assert not graph.notes  # the trip count was known


def test_probabilities_sum_to_one_per_node_and_loops_get_an_exit(tmp_path):
    source = write(tmp_path, "mm.c", NEST)
    graphs = build_graphs(source)
    assert [(g.scope, g.line) for g in graphs] == [("function", 1), ("loop", 2)]
    for graph in graphs:
        for node in graph.nodes:
            out = graph.successors(node.id)
            if out:
                assert sum(e.probability for e in out) == pytest.approx(1.0)
            else:
                assert node.kind == "exit" or "ret" in dict(node.opcodes)
    function, loop = graphs
    assert max(n.loop_depth for n in function.nodes) == 3
    assert sorted({n.loop_depth for n in loop.nodes if n.kind == "block"}) == [1, 2, 3]
    assert [n.kind for n in loop.nodes].count("exit") == 1
    assert any("loop-branch heuristic" in note for note in function.notes)
    innermost = max(function.nodes, key=lambda n: n.loop_depth)
    assert dict(innermost.opcodes)["load"] == 2
    # a[i*n+k] moves with unit stride along k (reused within a line); b[k*n+j] strides by n
    assert innermost.reuse[-1] == 1 and sum(innermost.reuse) == 2


def test_loop_and_function_selection_and_errors(tmp_path):
    source = write(tmp_path, "mm.c", NEST)
    (loop,) = build_graphs(source, function="mm", loop=2)
    assert loop.label.endswith("mm.c:mm:2")
    with pytest.raises(InputError, match="no function 'nope'.*defined: mm"):
        build_graphs(source, function="nope")
    with pytest.raises(InputError, match="no outermost loop starts at line 3"):
        build_graphs(source, loop=3)


def test_graph_command_json_and_dot(tmp_path, capsys):
    source = write(tmp_path, "f.c", CONDITIONAL_LOOP)
    assert main(["graph", str(source), "--scope", "loop"]) == 0
    data = json.loads(capsys.readouterr().out)
    (graph,) = data["graphs"]
    assert graph["format"] == "perfcast-hcfg" and graph["version"] == 1
    assert graph["scope"] == "loop" and graph["line"] == 2
    assert graph["categories"] == list(CATEGORIES)
    assert {"id", "mix", "dominant", "loop_depth", "reuse", "opcodes"} <= set(graph["nodes"][0])
    assert main(["graph", str(source), "--format", "dot", "--function", "f"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "') and dot.count("->") == 6 + 5


def test_a_loop_with_scope_function_is_refused(tmp_path, capsys):
    # 'graph --loop 2 --scope function' printed the loop's graph, not a function's.
    source = write(tmp_path, "f.c", CONDITIONAL_LOOP)
    assert main(["graph", str(source), "--loop", "2", "--scope", "function"]) == 2
    captured = capsys.readouterr()
    assert "--scope function" in captured.err and captured.out == ""


def test_code_that_does_not_compile_gives_the_compiler_message_and_status_2(tmp_path, capsys):
    source = write(tmp_path, "bad.c", "int f( {\n")
    assert main(["graph", str(source)]) == 2
    error = capsys.readouterr().err
    assert f"{source}: does not compile" in error and "expected" in error
    assert "Traceback" not in error
    assert main(["graph", str(tmp_path / "missing.c")]) == 2
    assert "no such C file" in capsys.readouterr().err


PROFILED = """\
#include <stdio.h>
void f(double *a, int n) {
  for (int i = 0; i < n; i++) {
    if (i % 10 < 3)
      a[i] = a[i] * 2.0;
  }
}
int main(int argc, char **argv) {
  static double a[100000];
  int n = argc > 1 ? 1000 : 10;
  f(a, n);
  printf("%f\\n", a[0]);
  return 0;
}
"""


def test_profiled_probabilities_are_the_measured_branch_shares(tmp_path, capsys):
    source = write(tmp_path, "p.c", PROFILED)
    (graph,) = build_graphs(source, function="f", scope="loop", profile=["big"])
    assert graph.probabilities == "profile"
    then = next(n for n in graph.nodes if "fmul" in dict(n.opcodes))
    into_then = [e.probability for e in graph.edges if e.target == then.id]
    assert into_then == [pytest.approx(301 / 1002)]  # 300 of 1000 iterations (counts + 1)
    back = [e for e in graph.edges if e.target == 0 and e.source != then.id]
    assert back and back[0].probability == pytest.approx(1000 / 1001, rel=1e-3)
    for node in graph.nodes:
        out = graph.successors(node.id)
        if out:
            assert sum(e.probability for e in out) == pytest.approx(1.0)
    assert main(["graph", str(source), "--function", "f", "--profile", "--scope", "loop"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["graphs"][0]["probabilities"] == "profile"
    failing = write(tmp_path, "fails.c", "int main(void) { return 3; }\n")
    assert main(["graph", str(failing), "--profile"]) == 2
    assert "profiled run exited with status 3" in capsys.readouterr().err


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.skipif(shutil.which("mpicc") is None, reason="needs MPI headers")
def test_graphs_of_the_repository_examples_name_their_source_loops():
    flags = build_flags("compile")
    graphs = build_graphs(EXAMPLES / "jacobi" / "jacobi.c", function="jacobi_compute", flags=flags)
    function, loop = graphs
    assert (function.line, loop.line) == (37, 39)
    assert sorted({n.loop_depth for n in loop.nodes if n.kind == "block"})[-1] == 2
    (dot,) = build_graphs(EXAMPLES / "cg" / "cg.c", function="cg_dot", scope="loop", flags=flags)
    assert dot.line == 75
    assert dict(dot.nodes[0].opcodes).get("llvm.fmuladd.f64") == 1  # sum += x[k] * y[k]
    assert dot.nodes[0].dominant == "memory"


TRIANGLE = """\
void tri(double *x) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < i; j++)
      x[i] += x[j];
}
int main(void) {
  static double x[N];
  tri(x);
  return 0;
}
"""


def test_symbolic_loop_counts_give_the_mean_trip_counts(tmp_path, capsys):
    source = write(tmp_path, "t.c", TRIANGLE)
    flags = ["-DN=40"]
    (heuristic,) = build_graphs(source, function="tri", scope="function", flags=flags)
    assert heuristic.notes and "loop-branch heuristic" in heuristic.notes[0]
    (counted,) = build_graphs(source, function="tri", scope="function", flags=flags, counts=True)
    assert not counted.notes
    stays = sorted(e.probability for e in counted.edges if e.probability not in (0.5, 1.0))
    # outer: 40 trips per entry; inner: 780 iterations over 40 entries = 19.5 per entry
    expected = [1 / 40, 1 / 19.5, 1 - 1 / 19.5, 1 - 1 / 40]
    assert stays == pytest.approx(sorted(expected))
    assert main(["graph", str(source), "--function", "tri", "--counts", "--flag=-DN=40"]) == 0
    assert json.loads(capsys.readouterr().out)["graphs"][0]["notes"] == []


def test_a_file_clang_takes_for_a_linker_input_is_bad_input(tmp_path, capsys):
    # clang compiled nothing from 'k.json' and exited 0: reading its IR raised FileNotFoundError.
    source = tmp_path / "k.json"
    source.write_text("int f(int x) { return x; }\n")
    (tmp_path / "k.c").write_text("int f(int x) { return x; }\n")
    assert main(["graph", str(source)]) == 2
    error = capsys.readouterr().err
    assert f"{source}: clang made no code of it" in error and "Traceback" not in error
    assert main(["graph", str(tmp_path / "k.c"), "--flag=-fsyntax-only"]) == 2
    assert "a flag stops clang" in capsys.readouterr().err


def test_a_profiled_program_printing_bytes_that_are_not_utf8_is_profiled(tmp_path, capsys):
    # The profiled run's output was decoded strictly: UnicodeDecodeError ended the command.
    source = tmp_path / "bytes.c"
    source.write_bytes(
        b"#include <stdio.h>\nint main(int argc, char **argv) {\n"
        b"  int s = 0;\n  for (int i = 0; i < argc * 10; i++) if (i % 3) s += i;\n"
        b'  printf("%d \\xff\\n", s);\n  return 0;\n}\n'
    )
    assert main(["graph", str(source), "--profile"]) == 0
    assert json.loads(capsys.readouterr().out)["graphs"][0]["probabilities"] == "profile"


def test_a_perfcast_clang_that_is_not_installed_is_named(tmp_path, capsys, monkeypatch):
    # PERFCAST_CLANG=/nonexistent/clang raised FileNotFoundError from subprocess.
    source = write(tmp_path, "f.c", "int f(int x) { return x; }\n")
    monkeypatch.setenv("PERFCAST_CLANG", "/nonexistent/clang")
    assert main(["graph", str(source)]) == 1
    error = capsys.readouterr().err
    assert "PERFCAST_CLANG names '/nonexistent/clang'" in error and "Traceback" not in error


def test_a_file_name_that_is_not_utf8_is_graphed(tmp_path):
    # clang writes the file name's bytes into the IR: reading it raised UnicodeDecodeError.
    source = Path(os.fsdecode(bytes(tmp_path) + b"/x\xff.c"))
    source.write_text("int f(int x) { return x; }\n")
    (graph,) = build_graphs(source)
    assert graph.function == "f" and graph.nodes
