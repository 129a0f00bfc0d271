"""Caliper-annotated code builds unchanged against perfcast's caliper/cali.h and records regions."""

from __future__ import annotations

from region_helpers import build, by_key, read_records, run

C_PROGRAM = r"""
#include <caliper/cali.h>
static void kernel(void) {
    CALI_MARK_FUNCTION_BEGIN;
    CALI_MARK_FUNCTION_END;
}
int main(void) {
    cali_init();
    CALI_MARK_BEGIN("main");
    CALI_WRAP_STATEMENT("init", int count = 4);
    CALI_MARK_LOOP_BEGIN(mainloop, "mainloop");
    for (int i = 0; i < count; i++) {
        CALI_MARK_ITERATION_BEGIN(mainloop, i);
        kernel();
        CALI_MARK_ITERATION_END(mainloop);
    }
    CALI_MARK_LOOP_END(mainloop);
    cali_begin_region("tail");
    cali_end_region("tail");
    CALI_MARK_PHASE_BEGIN("phase");
    CALI_MARK_PHASE_END("phase");
    CALI_MARK_END("main");
    return 0;
}
"""

CXX_PROGRAM = r"""
#include <caliper/cali.h>
#include <caliper/cali-manager.h>
#include <string>
static int work(int n) {
    CALI_CXX_MARK_FUNCTION;
    int s = 0;
    for (int i = 0; i < n; i++) {
        CALI_CXX_MARK_SCOPE("body");
        s += i;
    }
    return s;
}
int main() {
    cali::ConfigManager manager;
    manager.add("runtime-report");
    if (manager.error()) return 1;
    manager.start();
    std::string phase = "phase";
    CALI_MARK_BEGIN(phase.c_str());
    int s = work(3) + work(2);
    CALI_MARK_END(phase.c_str());
    manager.flush();
    return s == 4 ? 0 : 1;
}
"""


def test_c_annotations(tmp_path):
    binary = build(tmp_path, C_PROGRAM, "-Wextra")
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    assert visits == {
        "main": 1,
        "main->init": 1,
        "main->mainloop": 1,
        "main->mainloop->kernel": 4,
        "main->tail": 1,
        "main->phase": 1,
    }


def test_cxx_annotations_and_config_manager(tmp_path):
    binary = build(tmp_path, CXX_PROGRAM, "-Wextra", compiler="g++", name="app.cpp")
    out = tmp_path / "out.jsonl"
    result = run([str(binary)], out)
    assert result.stderr == ""
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    assert visits == {"phase": 1, "phase->work": 2, "phase->work->body": 5}


C89_PROGRAM = r"""
#include <caliper/cali.h>
static void step(void) {
    cali_begin_region("step");
    cali_end_region("step");
}
int main(void) {
    int i;
    cali_init();
    CALI_MARK_BEGIN("main");
    for (i = 0; i < 3; i++)
        step();
    CALI_MARK_END("main");
    return 0;
}
"""


def test_c89_code_builds_with_the_stand_in_header(tmp_path):
    binary = build(tmp_path, C89_PROGRAM, "-std=c89", "-Wextra", "-Werror")
    out = tmp_path / "out.jsonl"
    assert run([str(binary)], out).stderr == ""
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    assert visits == {"main": 1, "main->step": 3}
