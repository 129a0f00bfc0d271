"""perfcast's C region library, compiled with gcc and run as real programs."""

from __future__ import annotations

import subprocess

import pytest
from region_helpers import build, by_key, read_records, run

from perfcast.measure.instrument import library_dir

NESTED = r"""
#include "perfcast.h"
static void leaf(void) { PERFCAST_REGION_BEGIN("leaf"); PERFCAST_REGION_END("leaf"); }
int main(void) {
    PERFCAST_REGION_BEGIN("outer");
    for (int i = 0; i < 3; i++) {
        PERFCAST_REGION_BEGIN("inner");
        leaf();
        leaf();
        PERFCAST_REGION_END("inner");
    }
    leaf();
    PERFCAST_REGION_END("outer");
    for (int i = 0; i < 7; i++) leaf();
    return 0;
}
"""


def test_nesting_gives_call_paths_with_exact_visits(tmp_path):
    binary = build(tmp_path, NESTED)
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    records = read_records(out)
    table = by_key(records)
    assert [r["kernel"] for r in records if r["metric"] == "visits"] == [
        "outer",
        "outer->inner",
        "outer->inner->leaf",
        "outer->leaf",
        "leaf",
    ]
    visits = {k: v for (k, m), v in table.items() if m == "visits"}
    assert visits == {
        "outer": 1,
        "outer->inner": 3,
        "outer->inner->leaf": 6,
        "outer->leaf": 1,
        "leaf": 7,
    }
    assert table[("app", "ranks")] == 1
    assert set(m for _, m in table) == {"time", "visits", "ranks"}
    assert (
        table[("outer", "time")]
        >= table[("outer->inner", "time")]
        >= table[("outer->inner->leaf", "time")]
        > 0
    )
    assert isinstance(table[("leaf", "visits")], int)


def test_time_is_inclusive_seconds(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include <time.h>
#include "perfcast.h"
int main(void) {
    struct timespec pause = {0, 30000000};
    PERFCAST_REGION_BEGIN("sleep");
    nanosleep(&pause, 0);
    PERFCAST_REGION_BEGIN("nested");
    nanosleep(&pause, 0);
    PERFCAST_REGION_END("nested");
    PERFCAST_REGION_END("sleep");
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    run([str(binary)], out)
    table = by_key(read_records(out))
    assert 0.06 <= table[("sleep", "time")] < 1.0
    assert 0.03 <= table[("sleep->nested", "time")] < table[("sleep", "time")]


def test_mismatched_end_is_reported_and_ignored(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include "perfcast.h"
int main(void) {
    PERFCAST_REGION_BEGIN("a");
    PERFCAST_REGION_BEGIN("b");
    PERFCAST_REGION_END("a");
    PERFCAST_REGION_END("b");
    PERFCAST_REGION_END("a");
    PERFCAST_REGION_END("a");
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr.splitlines() == [
        'perfcast: PERFCAST_REGION_END("a") does not match the innermost open region "b"; ignored',
        'perfcast: PERFCAST_REGION_END("a") without an open region; ignored',
    ]
    table = by_key(read_records(out))
    assert table[("a", "visits")] == 1 and table[("a->b", "visits")] == 1


def test_region_open_at_exit_is_reported_and_counted(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include <time.h>
#include "perfcast.h"
int main(void) {
    struct timespec pause = {0, 20000000};
    PERFCAST_REGION_BEGIN("forgotten");
    nanosleep(&pause, 0);
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert 'region "forgotten" still open at the end of measurement' in result.stderr
    assert by_key(read_records(out))[("forgotten", "time")] >= 0.02


def test_nothing_written_without_perfcast_output(tmp_path):
    binary = build(tmp_path, NESTED)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run([str(binary)], None, cwd=tmp_path)
    assert result.stdout == "" and result.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_output_dash_writes_to_stderr(tmp_path):
    binary = build(tmp_path, NESTED)
    result = run([str(binary)], "-")
    assert '{"kernel": "outer->inner->leaf", "metric": "visits", "value": 6}' in (
        result.stderr.splitlines()
    )


def test_runs_append_complete_blocks(tmp_path):
    binary = build(tmp_path, NESTED)
    out = tmp_path / "out.jsonl"
    run([str(binary)], out)
    first = out.read_text()
    run([str(binary)], out)
    assert out.read_text().startswith(first)
    records = read_records(out)
    half = len(first.splitlines())
    assert len(records) == 2 * half
    keys = [(r["kernel"], r["metric"]) for r in records]
    assert keys[:half] == keys[half:]


def test_killed_run_leaves_no_record(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include <signal.h>
#include <unistd.h>
#include "perfcast.h"
int main(void) {
    PERFCAST_REGION_BEGIN("a");
    PERFCAST_REGION_END("a");
    kill(getpid(), SIGKILL);
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    result = subprocess.run([str(binary)], env={"PERFCAST_OUTPUT": str(out)})
    assert result.returncode == -9
    assert not out.exists()


def test_dynamic_names_are_keyed_by_text(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include <stdio.h>
#include "perfcast.h"
int main(void) {
    char name[16];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "step%d", i % 3);
        PERFCAST_REGION_BEGIN_DYNAMIC(name);
        PERFCAST_REGION_END_DYNAMIC(name);
    }
    char copy[16] = "step0";
    PERFCAST_REGION_BEGIN_DYNAMIC(copy);
    PERFCAST_REGION_END_DYNAMIC("step0");
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    table = by_key(read_records(out))
    assert {k: v for (k, m), v in table.items() if m == "visits"} == {
        "step0": 3,
        "step1": 2,
        "step2": 2,
    }


def test_same_text_from_different_translation_units_merges(tmp_path):
    (tmp_path / "other.c").write_text(
        "#include <time.h>\n"
        '#include "perfcast.h"\n'
        "void other(void) {\n"
        "    struct timespec pause = {0, 30000000};\n"
        '    PERFCAST_REGION_BEGIN("common");\n'
        "    nanosleep(&pause, 0);\n"
        '    PERFCAST_REGION_END("common");\n'
        "}\n"
        'void end_elsewhere(void) { PERFCAST_REGION_END("outer"); }\n'
    )
    binary = build(
        tmp_path,
        r"""
#include <time.h>
#include "perfcast.h"
void other(void);
void end_elsewhere(void);
int main(void) {
    struct timespec pause = {0, 30000000};
    PERFCAST_REGION_BEGIN("outer");
    other();
    PERFCAST_REGION_BEGIN("common");
    nanosleep(&pause, 0);
    PERFCAST_REGION_END("common");
    PERFCAST_REGION_BEGIN_DYNAMIC("common");
    PERFCAST_REGION_END("common");
    end_elsewhere();
    return 0;
}
""",
        str(tmp_path / "other.c"),
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    records = read_records(out)
    assert [r["kernel"] for r in records] == ["outer"] * 2 + ["outer->common"] * 2 + ["app"]
    table = by_key(records)
    assert table[("outer->common", "visits")] == 3
    assert table[("outer", "visits")] == 1
    assert 0.06 <= table[("outer->common", "time")] <= table[("outer", "time")]


def test_json_escapes_names(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include "perfcast.h"
int main(void) {
    PERFCAST_REGION_BEGIN("say \"hi\"\\now\t");
    PERFCAST_REGION_END("say \"hi\"\\now\t");
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    run([str(binary)], out)
    assert by_key(read_records(out))[('say "hi"\\now\t', "visits")] == 1


def test_threads_record_separately_and_merge_by_path(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include <pthread.h>
#include "perfcast.h"
static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        PERFCAST_REGION_BEGIN("work");
        PERFCAST_REGION_BEGIN("step");
        PERFCAST_REGION_END("step");
        PERFCAST_REGION_END("work");
    }
    return 0;
}
int main(void) {
    pthread_t threads[4];
    PERFCAST_REGION_BEGIN("main");
    for (int t = 0; t < 4; t++) pthread_create(&threads[t], 0, worker, 0);
    for (int t = 0; t < 4; t++) pthread_join(threads[t], 0);
    PERFCAST_REGION_END("main");
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    table = by_key(read_records(out))
    assert next(iter(table)) == ("main", "time")  # threads in order of their first region
    assert table[("work", "visits")] == 4000
    assert table[("work->step", "visits")] == 4000
    assert table[("main", "visits")] == 1


def test_disabled_build_records_nothing(tmp_path):
    binary = build(tmp_path, NESTED, "-DPERFCAST_DISABLE", library=False)
    out = tmp_path / "out.jsonl"
    run([str(binary)], out)
    assert not out.exists()


def test_library_compiles_cleanly_as_cxx_and_pedantic_c(tmp_path):
    binary = build(
        tmp_path,
        NESTED.replace("int main(void)", "int main()"),
        "-Wextra",
        compiler="g++",
        name="app.cpp",
    )
    out = tmp_path / "out.jsonl"
    run([str(binary)], out)
    assert by_key(read_records(out))[("outer->inner->leaf", "visits")] == 6
    for flags in (["-std=c11", "-pedantic", "-Wextra"], ["-DPERFCAST_DISABLE", "-pedantic"]):
        subprocess.run(
            [
                "gcc",
                *flags,
                "-Werror",
                "-c",
                str(library_dir() / "perfcast.c"),
                "-o",
                str(tmp_path / "perfcast.o"),
            ],
            check=True,
        )


@pytest.mark.parametrize("pie", ["-pie", "-no-pie"])
def test_instrument_functions_records_named_functions(tmp_path, pie):
    binary = build(
        tmp_path,
        r"""
#include <stdio.h>
#include "perfcast.h"
static int square(int x) { return x * x; }
int sum_squares(int n) { int s = 0; for (int i = 0; i < n; i++) s += square(i); return s; }
int main(void) {
    int s = 0;
    for (int i = 0; i < 5; i++) s += sum_squares(10);
    PERFCAST_REGION_BEGIN("tail");
    s += square(3);
    PERFCAST_REGION_END("tail");
    printf("%d\n", s);
    return 0;
}
""",
        "-O0",
        "-finstrument-functions",
        "-fPIE" if pie == "-pie" else "-fno-PIE",
        pie,
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stdout == "1434\n" and result.stderr == ""
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    assert visits == {
        "main": 1,
        "main->sum_squares": 5,
        "main->sum_squares->square": 50,
        "main->tail": 1,
        "main->tail->square": 1,
    }


def test_repeated_misuse_is_reported_ten_times_then_counted(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include "perfcast.h"
int main(void) {
    for (int i = 0; i < 1000; i++) PERFCAST_REGION_END("never_begun");
    return 0;
}
""",
    )
    result = run([str(binary)], tmp_path / "out.jsonl")
    lines = result.stderr.splitlines()
    assert (
        lines[:10]
        == ['perfcast: PERFCAST_REGION_END("never_begun") without an open region; ignored'] * 10
    )
    assert lines[10:] == [
        "perfcast: further region errors are counted, not shown",
        "perfcast: 1000 region errors in total",
    ]


def test_many_regions_grow_the_tables(tmp_path):
    binary = build(
        tmp_path,
        r"""
#include <stdio.h>
#include "perfcast.h"
int main(void) {
    char name[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 700; i++) {
            snprintf(name, sizeof name, "r%d", i);
            PERFCAST_REGION_BEGIN_DYNAMIC(name);
            PERFCAST_REGION_BEGIN("inner");
            PERFCAST_REGION_END("inner");
            PERFCAST_REGION_END_DYNAMIC(name);
        }
    return 0;
}
""",
    )
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    expected = {f"r{i}": 2 for i in range(700)} | {f"r{i}->inner": 2 for i in range(700)}
    assert visits == expected


def test_unwritable_output_is_reported(tmp_path):
    binary = build(tmp_path, NESTED)
    target = tmp_path / "missing" / "out.jsonl"
    result = run([str(binary)], target)
    assert result.stderr == (
        f'perfcast: cannot open PERFCAST_OUTPUT "{target}": No such file or directory\n'
    )
