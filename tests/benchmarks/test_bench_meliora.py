"""The search-saving benchmark's batched measurement agrees with the tuner's own (issue 18)."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.kernel_corpus import kernel, tunable_program
from benchmarks.meliora import _key, kernel_space, measure_kernel
from perfcast.analyze.tuning import load_space
from perfcast.measure.kernel_runs import measure_configuration

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("clang-16") is None or shutil.which("valgrind") is None,
        reason="needs clang-16 and valgrind",
    ),
]


def test_one_translation_unit_per_flag_setting_measures_what_separate_builds_measure(tmp_path):
    chosen = kernel("scale_shift")
    table = measure_kernel(chosen, tmp_path / "batch")
    space_file = tmp_path / "space.toml"
    space_file.write_text(kernel_space(chosen))
    space = load_space(space_file)
    assert set(table) == {_key(c) for c in space.all_configurations()}
    assert all(0 < row["instructions"] <= row["cycles"] for row in table.values())
    source = tmp_path / "scale_shift.c"
    source.write_text(tunable_program(chosen))
    configurations = space.all_configurations()
    for config in (configurations[0], configurations[-1]):
        run = measure_configuration(
            source, "scale_shift", space.compile_flags(config), repetitions=1, simulate_cache=True
        )
        assert run.instructions == table[_key(config)]["instructions"]
        assert run.cycles == pytest.approx(table[_key(config)]["cycles"], rel=0.01)
    default, fused = configurations[0], configurations[-1]
    assert fused["FUSION"] == "1" and default["FUSION"] == "0"
    assert table[_key(fused)]["cycles"] < table[_key(default)]["cycles"]
