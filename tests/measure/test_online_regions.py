"""Self-modeling Python programs: ``perfcast.online_region`` hands batches through a spool to a
real ``perfcast online serve`` process, which stores models and answers with back-off delays."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from perfcast.api import serve_spool, stored_models
from perfcast.measure.online_regions import OnlineRecorder
from perfcast.measure.online_spool import (
    control_path,
    fnv1a,
    pending_batches,
    read_control,
    write_control,
)

SRC = str(Path(__file__).resolve().parents[2] / "src")

PROGRAM = textwrap.dedent(
    """
    import sys
    import perfcast
    sizes = [int(s) for s in sys.argv[1].split(",")]
    for step in range(int(sys.argv[2])):
        n = sizes[step % len(sizes)]
        with perfcast.online_region("sum", n=n):
            sum(range(n))
    """
)


def test_fnv1a_matches_the_published_vectors() -> None:
    assert fnv1a(b"") == 0xCBF29CE484222325
    assert fnv1a(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a(b"foobar") == 0x85944171F73967E8


def test_recorder_hands_over_full_batches_and_applies_the_delay(tmp_path: Path) -> None:
    recorder = OnlineRecorder(str(tmp_path), batch=4)
    for i in range(6):
        with recorder.region("k", n=float(i)):
            pass
    (first,) = pending_batches(tmp_path)
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert [line["params"]["n"] for line in lines] == [0, 1, 2, 3]
    assert all(line["kernel"] == "k" and line["value"] >= 0 for line in lines)
    write_control(tmp_path, "k", "time", 1, 3)  # the collector judged batch 1: skip 3
    assert read_control(tmp_path, "k", "time") == (1, 3)
    assert control_path(tmp_path, "k", "time").parent.name == "control"
    for i in range(6, 8):
        with recorder.region("k", n=float(i)):
            pass
    # the second hand-over read the answer: the next 3 executions are skipped
    ran = []
    for i in range(5):
        with recorder.region("k", n=float(i)):
            ran.append(i)
    assert len(ran) == 5  # a skipped region still runs its body
    recorder.flush()
    last = [json.loads(line) for line in pending_batches(tmp_path)[-1].read_text().splitlines()]
    assert len(last) == 2 and last[0]["skipped"] == 3


@pytest.mark.slow
def test_runs_of_a_program_end_with_models_in_the_store(tmp_path: Path) -> None:
    spool, store = tmp_path / "spool", tmp_path / "models.db"
    environment = {**os.environ, "PYTHONPATH": SRC, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_BATCH": "64"}  # fmt: skip
    collector = subprocess.Popen(
        [sys.executable, "-m", "perfcast.cli", "online", "serve", "--store", str(store),
         "--spool", str(spool), "--batch", "64", "--app", "sums"],
        env=environment, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        runs = ["20000,40000,60000", "80000,100000,120000", "30000,90000,150000"]
        for sizes in runs:
            subprocess.run([sys.executable, "-c", PROGRAM, sizes, "1500"], env=environment,
                           check=True, timeout=120)  # fmt: skip
        deadline = time.monotonic() + 60
        while pending_batches(spool) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        collector.send_signal(signal.SIGTERM)
        _, err = collector.communicate(timeout=60)
    assert collector.returncode == 0, err
    (item,) = stored_models(store, application="sums")
    assert item["kernel"] == "sum" and item["measured"] + item["skipped"] == 3 * 1500
    assert item["model"] is not None and item["updates"] > 0
    assert item["model"]["parameters"] == ["n"]
    # no model is asserted beyond that: wall time on a machine shared with other jobs is
    # whatever the scheduler makes it (benchmarks/online.py measures with valgrind instead)


def test_a_bad_spool_file_is_rejected_and_serving_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    (spool / "0001-bad.jsonl").write_text('{"kernel": "k", "params": {"n": 1}, "value": "x"}\n')
    good = [json.dumps({"kernel": "k", "params": {"n": n}, "metric": "time", "value": n * 1.0})
            for n in (1, 2, 4, 8, 16, 32) * 4]  # fmt: skip
    (spool / "0002-good.jsonl").write_text("\n".join(good) + "\n")
    messages: list[str] = []
    count = serve_spool(spool, tmp_path / "s.db", batch=8, once=True,
                        on_rejected=messages.append)  # fmt: skip
    assert count == 1 and (spool / "0001-bad.rejected").exists()
    assert "0001-bad.jsonl:1" in messages[0]
    (item,) = stored_models(tmp_path / "s.db")
    assert item["measured"] == 24 and read_control(spool, "k", "time") is not None


def test_without_a_spool_a_region_only_runs_its_body(monkeypatch: pytest.MonkeyPatch) -> None:
    import perfcast
    from perfcast.measure import online_regions

    monkeypatch.delenv("PERFCAST_ONLINE_SPOOL", raising=False)
    monkeypatch.setattr(online_regions, "_configured", False)
    monkeypatch.setattr(online_regions, "_recorder", None)
    ran = []
    with perfcast.online_region("solve", n=4):
        ran.append(True)
    assert ran == [True] and online_regions._recorder is None
