"""perfcast.region for Python programs: context manager, decorator, nesting, threads, output."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest
from region_helpers import by_key, read_records

import perfcast
from perfcast.measure import regions


def recorded(prefix: str) -> dict[tuple[str, str], float]:
    """This process's records of the call paths starting with ``prefix``."""
    return {k: v for k, v in by_key(regions.records()).items() if k[0].startswith(prefix)}


def test_exported_from_the_package():
    assert perfcast.region is regions.region
    assert "region" in perfcast.__all__


def test_context_manager_nesting_and_visits():
    with perfcast.region("cm_outer"):
        for _ in range(3):
            with perfcast.region("inner"):
                time.sleep(0.002)
        with perfcast.region("inner"), perfcast.region("leaf"):
            pass
    table = recorded("cm_outer")
    assert {k: v for (k, m), v in table.items() if m == "visits"} == {
        "cm_outer": 1,
        "cm_outer->inner": 4,
        "cm_outer->inner->leaf": 1,
    }
    assert table[("cm_outer", "time")] >= table[("cm_outer->inner", "time")] >= 0.006


def test_decorator_named_and_unnamed():
    @perfcast.region("dec_named")
    def named(x):
        return unnamed(x) + 1

    @perfcast.region()
    def unnamed(x):
        return x * 2

    assert named(4) == 9 and named(1) == 3
    assert named.__name__ == "named"
    table = recorded("dec_named")
    qualname = unnamed.__qualname__
    assert table[("dec_named", "visits")] == 2
    assert table[(f"dec_named->{qualname}", "visits")] == 2


def test_decorated_coroutine_is_timed_while_awaited():
    @perfcast.region("async_region")
    async def pause():
        await asyncio.sleep(0.02)
        return "done"

    assert asyncio.run(pause()) == "done"
    table = recorded("async_region")
    assert table[("async_region", "visits")] == 1
    assert table[("async_region", "time")] >= 0.02


def test_exception_closes_the_region():
    with pytest.raises(KeyError), perfcast.region("raising"):
        raise KeyError("x")
    with perfcast.region("after_raise"):
        pass
    assert recorded("after_raise") and ("raising->after_raise", "visits") not in recorded("rai")


def test_threads_record_separately_and_merge(capsys):
    def worker():
        for _ in range(50):
            with perfcast.region("thread_work"), perfcast.region("step"):
                pass

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    with perfcast.region("thread_work"):
        for thread in threads:
            thread.join()
    table = recorded("thread_work")
    assert table[("thread_work", "visits")] == 201  # summed over threads
    assert table[("thread_work->step", "visits")] == 200
    assert capsys.readouterr().err == ""


def test_mismatched_exit_is_reported_and_ignored(capsys):
    outer, inner = perfcast.region("mm_outer"), perfcast.region("mm_inner")
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    assert capsys.readouterr().err == (
        "perfcast: region 'mm_outer' ends while 'mm_inner' is the innermost open region; ignored\n"
    )
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    assert capsys.readouterr().err == (
        "perfcast: region 'mm_outer' ends without an open region; ignored\n"
    )
    assert recorded("mm_outer")[("mm_outer->mm_inner", "visits")] == 1


def test_bad_names_are_rejected():
    with pytest.raises(ValueError, match="non-empty string"):
        perfcast.region("")
    with pytest.raises(ValueError, match="non-empty string"):
        perfcast.region(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="can only decorate"), perfcast.region():
        pass


SCRIPT = """
import time
import perfcast

@perfcast.region()
def solve():
    with perfcast.region("spmv"):
        time.sleep(0.01)

with perfcast.region("main"):
    for _ in range(3):
        solve()
perfcast.region("left_open").__enter__()
"""


def run_script(output: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PERFCAST_OUTPUT"}
    if output is not None:
        env["PERFCAST_OUTPUT"] = output
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )


@pytest.mark.slow
def test_program_appends_records_at_exit(tmp_path):
    out = tmp_path / "out.jsonl"
    result = run_script(str(out))
    assert result.stderr == (
        "perfcast: region 'left_open' still open at the end of measurement;"
        " its time is counted up to here\n"
    )
    records = read_records(out)
    assert [(r["kernel"], r["metric"]) for r in records] == [
        ("main", "time"),
        ("main", "visits"),
        ("main->solve", "time"),
        ("main->solve", "visits"),
        ("main->solve->spmv", "time"),
        ("main->solve->spmv", "visits"),
        ("left_open", "time"),
        ("left_open", "visits"),
    ]
    table = by_key(records)
    assert table[("main->solve->spmv", "visits")] == 3
    assert 0.03 <= table[("main->solve->spmv", "time")] <= table[("main", "time")]
    run_script(str(out))
    assert len(read_records(out)) == 2 * len(records)


def test_nothing_written_without_perfcast_output(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PERFCAST_OUTPUT"},
    )
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_dash_writes_to_stderr():
    result = run_script("-")
    lines = [line for line in result.stderr.splitlines() if line.startswith("{")]
    assert '{"kernel": "main->solve", "metric": "visits", "value": 3}' in lines


def test_unwritable_output_is_reported(tmp_path):
    target = tmp_path / "missing" / "out.jsonl"
    result = subprocess.run(
        [sys.executable, "-c", "import perfcast\nwith perfcast.region('a'):\n    pass\n"],
        env={**os.environ, "PERFCAST_OUTPUT": str(target)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0
    assert result.stderr.startswith(f"perfcast: cannot write PERFCAST_OUTPUT '{target}': ")
    assert "No such file or directory" in result.stderr
