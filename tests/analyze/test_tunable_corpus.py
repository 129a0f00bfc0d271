"""The corpus' tunable programs: every code variant selected by macros computes the same result."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess

import pytest

from benchmarks.kernel_corpus import (
    KERNELS,
    c_program,
    code_parameters,
    kernel,
    tunable_program,
    working_size,
)

CLANG = shutil.which("clang-16") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CLANG is None, reason="needs clang")


def output_of(source, tmp_path, flags):
    binary = tmp_path / ("bin" + "".join(re.sub(r"\W", "", f) for f in flags))
    subprocess.run([CLANG, "-O1", *flags, "-o", str(binary), str(source)], check=True)
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout


def test_code_parameters_follow_what_each_kernel_allows():
    assert code_parameters(kernel("matmul")) == {
        "ORDER": (0, 1, 2),
        "TILE": (0, 16),
        "INTERLEAVE": (1, 4),
    }
    assert code_parameters(kernel("axpy2")) == {"FISSION": (0, 1), "INTERLEAVE": (1, 4)}
    assert code_parameters(kernel("scale_shift")) == {"FUSION": (0, 1), "INTERLEAVE": (1, 4)}
    assert code_parameters(kernel("dot")) == {"INTERLEAVE": (1, 4)}


@pytest.mark.parametrize(
    "name",
    [
        "matmul",
        "scale_shift",
        *(pytest.param(n, marks=pytest.mark.slow) for n in ("heat3d", "mvt", "axpy2")),
    ],
)
def test_every_code_variant_prints_the_original_result(tmp_path, name):
    chosen = kernel(name)
    source = tmp_path / f"{name}.c"
    source.write_text(tunable_program(chosen))
    size = working_size(chosen)
    original = tmp_path / f"{name}_original.c"
    original.write_text(c_program(chosen, size))
    reference = output_of(original, tmp_path, [])
    code = {k: v for k, v in code_parameters(chosen).items() if k != "INTERLEAVE"}
    variants = set()
    for values in itertools.product(*code.values()):
        flags = [f"-D{k}={v}" for k, v in zip(code, values, strict=True)]
        assert output_of(source, tmp_path, [*flags, "-DINTERLEAVE=4", "-DUNROLL=2"]) == reference
        preprocessed = subprocess.run(
            [CLANG, "-E", "-P", *flags, str(source)], capture_output=True, text=True, check=True
        ).stdout
        variants.add(preprocessed)
    assert len(variants) == len(list(itertools.product(*code.values())))  # all distinct code


def test_working_sizes_exceed_the_first_level_cache_but_stay_small():
    for chosen in KERNELS:
        n = working_size(chosen)
        elements = sum(eval(count.format(n=n)) for _, count in chosen.arrays.values())  # noqa: S307
        assert 32 * 1024 < 8 * elements <= 192 * 1024 or n == 16, chosen.name
