"""A campaign killed with SIGKILL mid-run and resumed loses and repeats no run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from campaign_helpers import RECORDING_PROGRAM, cli_subprocess_argv, compile_c, processes_with

from perfcast.io.campaign_results import load_results

POINTS = [1, 2, 3, 4, 5, 6]
REPETITIONS = 2


def run_lines(path: Path) -> list[str]:
    complete = path.read_text().split("\n")[:-1]  # drop whatever follows the last newline
    return [line for line in complete if json.loads(line)["type"] == "run"]


@pytest.mark.slow
def test_sigkill_mid_campaign_then_resume_loses_and_repeats_nothing(tmp_path: Path) -> None:
    program = compile_c(tmp_path / "bin", "napper", RECORDING_PROGRAM)
    campaign = tmp_path / "nap.toml"
    campaign.write_text(
        f'command = "{program} {{n}}"\nrepetitions = {REPETITIONS}\n'
        f'[parameters]\nn = {POINTS}\n[environment]\nSLEEP_US = "200000"\n'
    )
    results = tmp_path / "nap.results.jsonl"
    first = subprocess.Popen(
        cli_subprocess_argv(["run", str(campaign)]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if results.exists() and len(run_lines(results)) >= 3:
                break
            assert first.poll() is None, first.stderr.read().decode()
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.wait(timeout=30)
        first.stderr.close()
    assert first.returncode == -signal.SIGKILL
    before = run_lines(results)
    total = len(POINTS) * REPETITIONS
    assert 3 <= len(before) < total, "the kill came too late to test a resume"

    second = subprocess.run(
        cli_subprocess_argv(["run", str(campaign)]), capture_output=True, text=True, timeout=120
    )
    assert second.returncode == 0, second.stderr
    assert f"{total - len(before)} runs done, {len(before)} already recorded" in second.stderr

    after = run_lines(results)
    assert after[: len(before)] == before  # the first run's completed results are intact
    keys = Counter(
        (json.loads(line)["point"]["n"], json.loads(line)["repetition"]) for line in after
    )
    expected = {(n, r) for n in POINTS for r in range(REPETITIONS)}
    assert set(keys) == expected
    assert all(count == 1 for count in keys.values())

    experiment = load_results(results)
    visits = experiment.frame[experiment.frame.metric == "visits"]
    assert len(visits) == total
    assert (visits.value == 2 * visits.n).all()


@pytest.mark.slow
def test_sigterm_ends_perfcast_and_the_running_program(tmp_path: Path) -> None:
    program = compile_c(tmp_path / "bin", "hanger", RECORDING_PROGRAM)
    campaign = tmp_path / "hang.toml"
    campaign.write_text(
        f'command = "{program} {{n}}"\n[parameters]\nn = [7, 8]\n'
        '[environment]\nHANG_AT = "7"\nSLEEP_US = "1"\n'
    )
    runner = subprocess.Popen(
        cli_subprocess_argv(["run", str(campaign), "--seed", "1"]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = processes_with(f"{program} 7")
            if found:
                break
            time.sleep(0.05)
        assert found, "the hanging program never started"
        runner.send_signal(signal.SIGTERM)
        _, stderr = runner.communicate(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 130
    assert "perfcast: interrupted" in stderr
    assert processes_with(f"{program} 7") == []
