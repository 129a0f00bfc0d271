"""Kernel matching on code-graph embeddings, and the corpus' variants (issue 18)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import numpy as np
import pytest

from benchmarks.kernel_corpus import KERNELS, kernel, rename, variant, write_program
from perfcast.analyze.matching import parse_query, rank, similar
from perfcast.cli import main
from perfcast.static.embedding import EMBEDDING_SIZE, embed, similarity
from perfcast.static.hcfg import build_graphs

CLANG = shutil.which("clang-16") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CLANG is None, reason="needs clang")


def loop_graph(path, name):
    return build_graphs(path, function=name, scope="loop")[0]


def run_program(path, tmp_path):
    binary = tmp_path / (path.stem + ".bin")
    subprocess.run([CLANG, "-O1", "-o", str(binary), str(path)], check=True)
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout


def test_a_kernel_is_identical_to_itself_and_closer_to_its_renamed_copy(tmp_path):
    original = write_program(kernel("gemv"), tmp_path)
    renamed = write_program(rename(kernel("gemv"), random.Random(1)), tmp_path, "renamed")
    other = write_program(kernel("jacobi2d"), tmp_path)
    g = loop_graph(original, "gemv")
    vector = embed(g)
    assert vector.shape == (EMBEDDING_SIZE,) and np.all(vector >= 0)
    assert similarity(vector, embed(loop_graph(original, "gemv"))) == pytest.approx(1.0, abs=1e-12)
    to_renamed = similarity(vector, embed(loop_graph(renamed, "gemv")))
    to_other = similarity(vector, embed(loop_graph(other, "jacobi2d")))
    assert to_renamed == pytest.approx(1.0, abs=1e-12)  # names do not reach the IR's structure
    assert 0.0 <= to_other < to_renamed


def test_rank_orders_candidates_and_similar_names_the_query(tmp_path):
    files = [write_program(k, tmp_path) for k in KERNELS[:6]]
    query = write_program(variant(kernel("bicg"), 2)[0], tmp_path, "query")
    line = loop_graph(query, "bicg").line
    found = similar(f"{query}:bicg:{line}", files, top=3)
    assert found.query.function == "bicg" and found.query.scope == "loop"
    scores = [m.similarity for m in found.matches]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert found.matches[0].function == "bicg"
    assert all(m.function != "main" for m in found.matches)
    with pytest.raises(ValueError, match="top"):
        rank(found.query, [found.query], top=0)


def test_parse_query(tmp_path):
    query = parse_query("a.c:f:12")  # compared with itself before: a check that cannot fail
    assert (query.file, query.function, query.line) == ("a.c", "f", 12)
    query = parse_query("a.c")
    assert (query.file, query.function, query.line) == ("a.c", None, None)
    query = parse_query("dir/a.c:f:12")
    assert (query.file, query.function, query.line) == ("dir/a.c", "f", 12)
    query = parse_query("a.c:f")
    assert (query.file, query.function, query.line) == ("a.c", "f", None)


def test_a_query_line_that_is_no_number_or_a_file_without_functions_says_so(tmp_path, capsys):
    # 'k.c:sum:abc' was reported as "k.c:sum: no such C file"; a file with no function as
    # "name the function to match (defined: )".
    source = write_program(kernel("dot"), tmp_path)
    assert main(["similar", f"{source}:dot:abc", str(source)]) == 2
    error = capsys.readouterr().err
    assert f"{source}: the loop's line must be a whole number, not 'abc'" in error
    empty = tmp_path / "empty.c"
    empty.write_text("")
    assert main(["similar", str(empty), str(source)]) == 2
    assert f"{empty}: defines no function to match" in capsys.readouterr().err


def test_similar_command_prints_ranked_json(tmp_path, capsys):
    files = [str(write_program(k, tmp_path)) for k in KERNELS[:4]]
    assert main(["similar", f"{files[1]}:gemv", *files, "--top", "2", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [set(m) for m in data["matches"]] == [
        {"file", "function", "line", "scope", "similarity"}
    ] * 2
    assert data["matches"][0]["function"] == "gemv"
    assert data["matches"][0]["similarity"] == pytest.approx(1.0)
    assert main(["similar", files[0], *files, "--top", "0"]) == 2


@pytest.mark.parametrize("name", ["matmul", "mvt", "trisolve", "spmv", "scale_shift", "variance"])
def test_variants_print_the_same_result(tmp_path, name):
    reference = run_program(write_program(kernel(name), tmp_path), tmp_path)
    applied = set()
    for seed in range(4):
        changed, how = variant(kernel(name), seed)
        applied.update(how)
        path = write_program(changed, tmp_path, f"{name}_{seed}")
        assert path.read_text() != (tmp_path / f"{name}.c").read_text()
        assert run_program(path, tmp_path) == reference, how
    assert applied  # something was done


@pytest.mark.slow
def test_every_transformation_keeps_every_kernel_equal(tmp_path):
    applied = set()
    for k in KERNELS:
        reference = run_program(write_program(k, tmp_path), tmp_path)
        for seed in range(8):
            changed, how = variant(k, seed)
            applied.update(how)
            path = write_program(changed, tmp_path, f"{k.name}_{seed}")
            assert run_program(path, tmp_path) == reference, (k.name, how)
    assert applied == {"fuse", "split", "reorder", "interchange", "tile", "strip", "unroll"}


def test_a_weak_best_match_is_reported(tmp_path, capsys):
    files = [str(write_program(kernel(name), tmp_path)) for name in ("heat3d", "spmv")]
    query = write_program(kernel("dot"), tmp_path)
    found = similar(f"{query}:dot", files, top=2)
    assert found.matches[0].similarity < 0.8
    assert found.notes and "may not carry over" in found.notes[0]
    assert main(["similar", f"{query}:dot", *files]) == 0
    assert "note: the closest match has similarity" in capsys.readouterr().out
    same = similar(f"{files[0]}:heat3d", files, top=1)
    assert same.matches[0].similarity == pytest.approx(1.0) and not same.notes
