"""Deterministic metrics: callgrind instruction counts and cachegrind cache behaviour."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from campaign_helpers import compile_c

from perfcast.measure.campaign import run_campaign
from perfcast.measure.spec import load_campaign
from perfcast.measure.valgrind import (
    Function,
    Profile,
    ProfileError,
    instruction_records,
    kernel_names,
    parse_profile,
    rank_max_records,
    sum_profiles,
)

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind missing")

LOOP_PROGRAM = r"""
#include <stdlib.h>

static double data[1 << 20];

__attribute__((noinline)) double work(long n) {
  double sum = 0;
  for (long i = 0; i < n; i++) sum += data[i] * 0.5;
  return sum;
}

__attribute__((noinline)) void fill(long n) {
  for (long i = 0; i < n; i++) data[i] = (double)i;
}

int main(int argc, char **argv) {
  long n = atol(argv[1]);
  fill(n);
  return work(n) < 0;
}
"""

HAND_WRITTEN = """\
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir Dr
summary: 1130 40

ob=(1) /bin/app
fl=(1) app.c
fn=(1) main
3 10 2
cfn=(2) solve
calls=1 5
4 1100 36
5 3

fn=(2)
6 100 6
cfn=(3) solve'2
calls=2 6
+1 1000 30

fn=(3)
* 990 28
cfn=(3)
calls=1 *
* 500 10
fl=(2) other.c
fn=(4) solve
1 7 2
"""


def test_callgrind_format_is_parsed_exactly(tmp_path: Path) -> None:
    path = tmp_path / "callgrind.out.1"
    path.write_text(HAND_WRITTEN)
    profile = parse_profile(path)
    assert profile.events == ["Ir", "Dr"]
    main = Function("main", "app.c", "/bin/app")
    solve = Function("solve", "app.c", "/bin/app")
    other = Function("solve", "other.c", "/bin/app")
    assert profile.exclusive == {main: [13, 2], solve: [1090, 34], other: [7, 2]}
    # main: own 13 + call 1100; solve: own 1090 + nothing but calls to itself
    assert profile.inclusive[main] == [1113, 38]
    assert profile.inclusive[solve] == [1090, 34]
    names = kernel_names(profile.exclusive)
    assert names == {main: "main", solve: "app.c:solve", other: "other.c:solve"}
    records = {(r["kernel"], r["metric"]): r["value"] for r in instruction_records(profile)}
    assert records == {
        ("main", "instructions"): 13,
        ("main", "instructions.inclusive"): 1113,
        ("app.c:solve", "instructions"): 1090,
        ("app.c:solve", "instructions.inclusive"): 1090,
        ("other.c:solve", "instructions"): 7,
        ("other.c:solve", "instructions.inclusive"): 7,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fn=main\n", "no 'events:' line"),
        ("events: Ir\nfn=(3)\n", r"name id \(3\) used before it is defined"),
        ("events: Ir\nfn=main\n1 2 3\n", "2 costs but 1 events"),
        ("events: Ir\nfn=main\n1 x\n", "not numbers"),
        ("events: Ir\n1 2\n", "cost line before"),
    ],
)
def test_malformed_profiles_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "callgrind.out.9"
    path.write_text(text)
    with pytest.raises(ProfileError, match=message):
        parse_profile(path)


@pytest.fixture(scope="module")
def loop_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_c(tmp_path_factory.mktemp("vg"), "loop", LOOP_PROGRAM)


def measure(tmp_path: Path, program: Path, metric: str, sizes: list[int], extra: str = ""):
    path = tmp_path / f"{metric}.toml"
    path.write_text(
        f'command = "{program} {{n}}"\nmetrics = ["{metric}"]\nseed = 1\n{extra}\n'
        f"[parameters]\nn = {sizes}\n"
    )
    result = run_campaign(load_campaign(path))
    assert result.failures == []
    frame = result.experiment.frame
    return {
        (row.kernel, row.metric, int(row.n)): row.value for row in frame.itertuples(index=False)
    }


@pytest.mark.slow
def test_callgrind_counts_are_exactly_linear_in_the_loop_length(
    tmp_path: Path, loop_program: Path
) -> None:
    sizes = [1000, 2000, 3000, 5000, 8000]
    values = measure(tmp_path, loop_program, "instructions", sizes)
    work = [values[("work", "instructions", n)] for n in sizes]
    per_iteration = (work[1] - work[0]) // (sizes[1] - sizes[0])
    assert per_iteration > 0
    constant = work[0] - per_iteration * sizes[0]
    assert work == [constant + per_iteration * n for n in sizes]  # exact, for every size
    startup = set()  # main's own instructions and its lazy symbol binding: fixed
    for n in sizes:
        inclusive = values[("main", "instructions.inclusive", n)]
        loops = values[("work", "instructions", n)] + values[("fill", "instructions", n)]
        startup.add(inclusive - loops - values[("atol", "instructions.inclusive", n)])
        assert values[("work", "instructions.inclusive", n)] == values[("work", "instructions", n)]
    (fixed,) = startup
    assert fixed > values[("main", "instructions", sizes[0])]
    assert not any(metric == "time" for _, metric, _ in values)


@pytest.mark.slow
def test_cachegrind_reports_every_cache_metric_with_configured_geometry(
    tmp_path: Path, loop_program: Path
) -> None:
    sizes = [4096, 16384]
    values = measure(
        tmp_path, loop_program, "cache", sizes, '[cache]\nD1 = "4096,2,64"\nLL = "65536,4,64"'
    )
    metrics = {m for k, m, _ in values if k == "work"}
    assert metrics == {
        "cache.reads",
        "cache.writes",
        "cache.d1_misses",
        "cache.ll_misses",
        "cache.d1_hit_rate",
        "cache.ll_hit_rate",
    }
    for n in sizes:
        reads = values[("work", "cache.reads", n)]
        d1 = values[("work", "cache.d1_misses", n)]
        ll = values[("work", "cache.ll_misses", n)]
        writes = values[("work", "cache.writes", n)]
        assert reads >= n  # one read of data[i] per iteration at least
        # streaming through n doubles misses D1 once per 64-byte line (8 doubles) at least
        assert d1 >= n // 8
        assert values[("work", "cache.d1_hit_rate", n)] == pytest.approx(1 - d1 / (reads + writes))
        assert values[("work", "cache.ll_hit_rate", n)] == pytest.approx(1 - ll / d1)
    # 16384 doubles (128 KiB) do not fit the 64 KiB LL that 4096 doubles (32 KiB) fit in
    assert values[("work", "cache.ll_misses", 16384)] >= 16384 // 8
    assert values[("work", "cache.ll_misses", 4096)] < 4096 // 8


def test_missing_profile_is_a_clear_error(tmp_path: Path) -> None:
    from perfcast.measure.valgrind import profile_records

    with pytest.raises(ProfileError, match="valgrind wrote no profile"):
        profile_records("instructions", tmp_path)


def test_cache_records_need_the_simulated_events(tmp_path: Path) -> None:
    from perfcast.measure.valgrind import cache_records

    path = tmp_path / "cachegrind.out.1"
    path.write_text("events: Ir\nfl=a.c\nfn=f\n1 10\n")
    with pytest.raises(ProfileError, match="no Dr, Dw, D1mr, D1mw, DLmr, DLmw events"):
        cache_records(parse_profile(path))


def test_rank_max_takes_the_largest_rank_and_sum_leaves_inputs_unchanged():
    work = Function("work", "app.c", "/bin/app")
    reduce = Function("reduce", "app.c", "/bin/app")
    rank0 = Profile(["Ir"], {work: [100], reduce: [900]}, {})
    rank1 = Profile(["Ir"], {work: [120], reduce: [30]}, {})
    records = {(r["kernel"], r["metric"]): r["value"] for r in rank_max_records([rank0, rank1])}
    assert records == {
        ("reduce", "instructions.rank_max"): 900,
        ("work", "instructions.rank_max"): 120,
    }
    total = sum_profiles([rank0, rank1])
    assert total.exclusive == {work: [220], reduce: [930]}
    assert rank0.exclusive == {work: [100], reduce: [900]}
