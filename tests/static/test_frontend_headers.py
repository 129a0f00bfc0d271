"""Headers: an error in one names the header, its line and the include chain; clang's own
intrinsics headers parse."""

from __future__ import annotations

import pytest

from perfcast.core.errors import InputError
from perfcast.static import analyze
from perfcast.static.frontend import builtin_include_flags


def test_an_error_in_a_header_names_the_header_and_the_chain(tmp_path):
    (tmp_path / "bad.h").write_text("int ok(void);\nint broken(void) { return 1 +; }\n")
    (tmp_path / "mid.h").write_text('#include "bad.h"\n')
    source = tmp_path / "a.c"
    source.write_text('#include <stdio.h>\n#include "mid.h"\nint main(void) { return 0; }\n')
    with pytest.raises(InputError) as caught:
        analyze([source], [])
    error = caught.value
    assert error.source == str(tmp_path / "bad.h")
    assert error.line == 2
    assert f"included from {tmp_path / 'mid.h'}:1, from {source}:2" in str(error)


@pytest.mark.skipif(not builtin_include_flags(), reason="no compiler headers on this machine")
def test_a_file_using_sse_intrinsics_parses(tmp_path):
    source = tmp_path / "sse.c"
    source.write_text(
        "#include <xmmintrin.h>\n"
        "void add(float *a, const float *b, int n) {\n"
        "  for (int i = 0; i < n; i += 4)\n"
        "    _mm_storeu_ps(a + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));\n"
        "}\n"
        "int main(void) { float a[8] = {0}, b[8] = {0}; add(a, b, 8); return 0; }\n"
    )
    report = analyze([source], [])
    assert report.kernel("add:loop@3").count == 2


def test_sizeof_is_the_value_clang_computes(tmp_path):
    source = tmp_path / "sizeof.c"
    source.write_text(
        "double a[10];\n"
        "int main(void) {\n"
        "  for (unsigned long i = 0; i < sizeof(a) / sizeof(a[0]); i++)\n"
        "    a[i] = 1;\n"
        "  return 0;\n"
        "}\n"
    )
    assert analyze([source], []).kernel("main:loop@3").count == 10


def test_an_mpi_program_with_perfcast_regions_parses_without_flags(tmp_path):
    source = tmp_path / "mpi_regions.c"
    source.write_text(
        "#include <mpi.h>\n"
        '#include "perfcast.h"\n'
        "void work(int n, double *a) {\n"
        "  for (int i = 0; i < n; i++) a[i] += 1.0;\n"
        "}\n"
        "int main(int argc, char **argv) {\n"
        "  double a[64];\n"
        "  MPI_Init(&argc, &argv);\n"
        "  work(64, a);\n"
        "  MPI_Finalize();\n"
        "  return 0;\n"
        "}\n"
    )
    report = analyze([source], ["n"])
    assert str(report.kernel("work:loop@4").count) == "n"
