"""The probes on this machine: a surface with L1 faster than memory, a readable profile."""

from __future__ import annotations

import shutil

import pytest

from perfcast import cli
from perfcast.api import load_machine, probe_machine, save_machine
from perfcast.measure.probe import cache_geometry, probe_hit_rates


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_quick_probe_gives_a_monotone_enough_surface(tmp_path):
    profile = probe_machine(quick=True, largest_working_set=32 * 1024**2, name="here")
    load = profile.memory["load"]
    assert load["l1"] > load["memory"]  # first-level cache faster than the largest set
    stride8 = sorted(
        (p["working_set"], p["bandwidth"])
        for p in profile.surface
        if p["pattern"] == "stride8" and p["access"] == "load"
    )
    assert stride8[0][0] == 4096 and stride8[-1][0] == 32 * 1024**2
    assert stride8[0][1] > stride8[-1][1]
    assert all(p["spread"] >= 0.0 for p in profile.surface)
    for kind in ("add.f64.scalar", "mul.f32.vector", "div.f64.scalar", "fma.f64.vector"):
        assert profile.fp[kind] > 0
    assert profile.fp["div.f64.scalar"] < profile.fp["add.f64.scalar"]
    # independent integer adds issue faster than one per nanosecond; a mispredicted branch
    # costs a pipeline refill (a few to a few tens of nanoseconds)
    assert profile.core["instructions"] > 1.0
    assert 0.5 < profile.core["misprediction_penalty"] < 100.0
    # prefetched stride-1 streams beat line-by-line (stride-8) access beyond the first level
    assert profile.stream["load"]["ll"] > profile.memory["load"]["ll"]
    path = tmp_path / "machine.json"
    save_machine(profile, path)
    again = load_machine(path)
    assert again.memory == profile.memory and again.fp == profile.fp
    assert again.stream == profile.stream and again.core == profile.core
    assert again.extra["probe"]["quick"] is True


def test_cache_geometry_reads_sysfs_layout(tmp_path):
    for index, (level, kind, size) in enumerate(
        [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"),
         (3, "Unified", "30M")]
    ):  # fmt: skip
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        files = {"level": level, "type": kind, "size": size, "ways_of_associativity": 12,
                 "coherency_line_size": 64}  # fmt: skip
        for name, value in files.items():
            (folder / name).write_text(f"{value}\n")
    cache, notes = cache_geometry(tmp_path)
    assert cache["D1"] == {"size": 48 * 1024, "associativity": 12, "line": 64}
    assert cache["LL"]["size"] == 30 * 1024**2
    assert notes == []
    fallback, notes = cache_geometry(tmp_path / "absent")
    assert fallback["D1"]["size"] == 32768 and notes


def test_probe_hit_rates_follow_the_access_pattern():
    cache = {"D1": {"size": 32768, "line": 64}, "LL": {"size": 1 << 20, "line": 64}}
    assert probe_hit_rates("stride1", 16384, cache) == (1.0, 1.0)
    assert probe_hit_rates("stride1", 1 << 19, cache) == (1 - 8 / 64, 1.0)
    assert probe_hit_rates("stride8", 1 << 22, cache) == (0.0, 0.0)
    # cumulative: a stream beyond the last level still hits the first level 7 times in 8
    assert probe_hit_rates("stride1", 1 << 22, cache) == (1 - 8 / 64, 1 - 8 / 64)
    l1_hit, ll_hit = probe_hit_rates("random", 1 << 21, cache)
    assert l1_hit == pytest.approx(32768 / (1 << 21))
    assert ll_hit == pytest.approx(0.5)  # half of the working set fits the last level


@pytest.mark.parametrize("largest", ["-5", "0", "4096"])
def test_a_largest_working_set_below_four_first_level_caches_is_refused(tmp_path, capsys, largest):
    # -5 raised IndexError and 4096 StatisticsError after compiling and running the probes;
    # 0 silently measured up to the default.
    status = cli.main(["probe", "--quick", "--largest", largest, "-o", str(tmp_path / "m.json")])
    error = capsys.readouterr().err
    assert status == 2
    assert "at least 4 first-level caches" in error and "Traceback" not in error


@pytest.mark.parametrize("out", ["DIR", "DIR/absent/m.json"])
def test_a_profile_that_cannot_be_written_is_refused_before_probing(tmp_path, capsys, out):
    # The probes ran (a minute or more) and only then was the write refused.
    out = out.replace("DIR", str(tmp_path))
    assert cli.main(["probe", "--quick", "-o", out]) == 2
    error = capsys.readouterr().err
    assert f"{out}: cannot write the profile" in error and "Traceback" not in error


def test_a_largest_working_set_beyond_the_memory_is_refused(tmp_path, capsys):
    # 1e20 bytes: every probe up to 32 GiB ran, then one failed to allocate (exit 1, no reason).
    argv = ["probe", "--quick", "--largest", str(10**20), "-o", str(tmp_path / "m.json")]
    assert cli.main(argv) == 2
    assert "must fit in half of this machine's memory" in capsys.readouterr().err
