"""Signatures of real programs under valgrind: exact feature counts, MPI ranks, the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from perfcast import cli
from perfcast.api import collect_rank_signatures, collect_signature, merge_signatures

REPO = Path(__file__).resolve().parents[2]
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")

# 1000 iterations of one multiply and one add in double precision (scalar: no vectorizing),
# 3 times; the arrays are 8000 bytes each, inside any first-level cache after the first pass.
AXPY = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void axpy(int n, double a, const double *x, double *y) {
    for (int i = 0; i < n; i++) y[i] = y[i] + a * x[i];
}
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1.0; }
    for (int r = 0; r < 3; r++) axpy(n, 1.5, x, y);
    printf("%g\n", y[n - 1]);
    return 0;
}
"""


def _compile(tmp_path: Path) -> Path:
    source = tmp_path / "axpy.c"
    source.write_text(AXPY)
    binary = tmp_path / "axpy"
    subprocess.run(
        ["gcc", "-O2", "-fno-tree-vectorize", "-ffp-contract=off", "-g", "-o", str(binary),
         str(source)],
        check=True,
    )  # fmt: skip
    return binary


def _features(signature, kernel: str) -> dict[str, float]:
    frame = signature.frame
    rows = frame[frame["kernel"] == kernel]
    return dict(zip(rows["metric"], rows["value"], strict=True))


@needs_valgrind
def test_signature_counts_the_loop_exactly(tmp_path):
    binary = _compile(tmp_path)
    signature = collect_signature([str(binary), "1000"], point={"n": 1000})
    axpy = _features(signature, "fn:axpy")
    assert axpy["fp.mul.f64.scalar"] == 3000
    assert axpy["fp.add.f64.scalar"] == 3000
    # x[i] and y[i], plus the return address each of the 3 'ret's reads from the stack
    assert axpy["loads"] == 6000 + 3
    assert axpy["stores"] == 3000
    assert axpy["bytes.loaded"] == 48000 + 3 * 8
    assert axpy["bytes.stored"] == 24000
    # main's initialization left x and y (16 KB) in the 32 KB first-level cache
    assert axpy["l1.hit_rate"] == 1.0 and axpy["l1.misses"] == 0
    assert axpy["ll.cumulative_hit_rate"] == 1.0 and axpy["ll.misses"] == 0
    assert "ll.hit_rate" not in axpy  # the earlier format's local rate is not written
    # one loop branch per iteration; the predictor learns the loop, missing at most its exits
    assert axpy["branches"] >= 3000
    assert 0 <= axpy["branch.mispredictions"] <= 30
    blocks = [k for k in signature.kernels if k.startswith("bb:axpy+")]
    assert sum(_features(signature, b).get("fp.mul.f64.scalar", 0) for b in blocks) == 3000
    lines = [k for k in signature.kernels if k.startswith("line:axpy.c:")]
    assert sum(_features(signature, k).get("stores", 0) for k in lines) >= 3000
    assert signature.metadata["signature"]["ranks"] == 1
    assert axpy["instructions.rank_spread"] == 0.0  # one rank: no spread, but the element exists


@needs_valgrind
def test_a_smaller_first_level_cache_lowers_the_hit_rate(tmp_path):
    binary = _compile(tmp_path)
    command = [str(binary), "4000"]  # 64 KB of data
    large = collect_signature(command, cache={"D1": "131072,8,64"})
    small = collect_signature(command, cache={"D1": "4096,8,64"})
    assert _features(large, "fn:axpy")["l1.hit_rate"] == pytest.approx(1.0, abs=1e-3)
    # 4 KB hold neither array: every 8 iterations (24 accesses) miss one line of x and of y
    assert _features(small, "fn:axpy")["l1.hit_rate"] == pytest.approx(1 - 2 / 24, abs=0.005)


@needs_valgrind
@pytest.mark.slow
def test_mpi_signature_chooses_the_busiest_rank_and_keeps_the_spread(tmp_path):
    if shutil.which("mpicc") is None:
        pytest.skip("needs mpicc")
    program = tmp_path / "cg"
    subprocess.run(
        ["mpicc", "-O2", "-g", "-DPERFCAST_DISABLE", f"-I{REPO}/src/perfcast/measure/c", "-o",
         str(program), str(REPO / "examples" / "cg" / "cg.c"), "-lm"],
        check=True,
    )  # fmt: skip
    one = collect_signature([str(program), "64", "5"])
    two, every_rank = collect_rank_signatures([str(program), "64", "5"], ranks=2)
    meta = two.metadata["signature"]
    assert [s.metadata["signature"]["rank"] for s in every_rank] == [0, 1]
    assert meta["ranks_known"]  # Open MPI names the profiles by rank
    assert every_rank[meta["chosen_rank"]].frame.equals(two.frame)
    assert len(meta["rank_instructions"]) == 2
    assert meta["rank_instructions"][meta["chosen_rank"]] == max(meta["rank_instructions"])
    assert "instructions.rank_spread" in two.metric_names
    spmv_one = _features(one, "fn:cg_spmv")["fp.mul.f64.scalar"]
    spmv_two = _features(two, "fn:cg_spmv")["fp.mul.f64.scalar"]
    assert spmv_two == pytest.approx(spmv_one / 2, rel=0.05)  # the rows are divided
    merged = merge_signatures([one, two])
    assert sorted(merged.points()[:, 0]) == [1.0, 2.0]


@needs_valgrind
def test_signature_command_writes_an_experiment(tmp_path, capsys):
    binary = _compile(tmp_path)
    out = tmp_path / "sig.json"
    ranks = tmp_path / "ranks"
    argv = ["signature", "-o", str(out), "--every-rank", str(ranks), "--", str(binary), "500"]
    assert cli.main(argv) == 0
    assert [p.name for p in ranks.iterdir()] == ["p1-rank0.json"]
    document = json.loads(out.read_text())
    assert document["format"] == "perfcast-experiment"
    assert any(m["kernel"] == "fn:axpy" for m in document["measurements"])


def test_signature_of_a_missing_program_is_bad_input(tmp_path, capsys):
    status = cli.main(["signature", "-o", str(tmp_path / "s.json"), "--", "/nonexistent/prog"])
    assert status == 2
    assert "/nonexistent/prog" in capsys.readouterr().err


@needs_valgrind
def test_campaign_metric_signature_collects_one_signature_per_point(tmp_path):
    from perfcast.api import extrapolate_signature, load_campaign, run_campaign

    binary = _compile(tmp_path)
    spec = tmp_path / "sig.toml"
    spec.write_text(
        f'command = "{binary} {{n}}"\nmetrics = ["signature"]\nrepetitions = 3\n'
        "[parameters]\nn = [250, 500, 1000]\n"
    )
    result = run_campaign(load_campaign(spec))
    assert result.failures == []
    assert result.executed == 3  # deterministic: one run per point
    frame = result.experiment.frame
    muls = frame[(frame.kernel == "fn:axpy") & (frame.metric == "fp.mul.f64.scalar")]
    assert sorted(muls.value) == [750, 1500, 3000]
    extrapolated = extrapolate_signature(result.experiment, "n=4000")
    element = next(
        e for e in extrapolated.elements
        if e.kernel == "fn:axpy" and e.feature == "fp.mul.f64.scalar"
    )  # fmt: skip
    assert element.form == "linear"
    assert element.value == pytest.approx(12000)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--timeout", "nan"], "--timeout must be a positive number"),
        (["--timeout", "-1"], "--timeout must be a positive number"),
        (["--cache", "D1=a,b,c"], "whole numbers"),
        (["--cache", "D1=1000,3,64"], "powers of two"),
        (["--cache", "LL=4294967296,16,64"], "below 2 GiB"),
        (["--ranks", "1,1"], "lists a rank count twice"),
        (["--every-rank", "FILE"], "--every-rank names a directory"),
        (["-o", "DIR"], "is a directory"),
        (["-o", "sig.unknown"], "cannot tell the output format"),
    ],
)
def test_bad_signature_options_are_refused_before_the_run(tmp_path, capsys, options, message):
    # --timeout nan, --every-rank FILE raised tracebacks (the latter after the whole run);
    # a cache valgrind refuses failed with exit 1 after starting it; --ranks 1,1 ran twice,
    # then failed merging; -o DIR or an unknown suffix lost the finished run.
    (tmp_path / "FILE").write_text("")
    (tmp_path / "DIR").mkdir()
    options = [str(tmp_path / o) if o in ("FILE", "DIR", "sig.unknown") else o for o in options]
    argv = ["signature", "-o", str(tmp_path / "s.json"), *options, "--", "/nonexistent/prog"]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error
    assert "no such program" not in error  # refused before looking at the program


@pytest.mark.parametrize(("ranks", "tool"), [("1", "valgrind"), ("2", "mpirun")])
def test_a_missing_valgrind_or_mpirun_is_named(tmp_path, capsys, monkeypatch, ranks, tool):
    # Without them on PATH, FileNotFoundError escaped as a traceback when the run started.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if tool == "mpirun":
        valgrind = shutil.which("valgrind")
        if valgrind is None:
            pytest.skip("needs valgrind, to find mpirun missing after it")
        (bin_dir / "valgrind").symlink_to(valgrind)
    monkeypatch.setenv("PATH", str(bin_dir))
    argv = ["signature", "-o", str(tmp_path / "s.json"), "--ranks", ranks, "--", "/bin/true"]
    assert cli.main(argv) == 1
    error = capsys.readouterr().err
    assert f"{tool} is not installed" in error and "Traceback" not in error
