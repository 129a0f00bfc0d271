"""Measuring one tuning configuration: programs whose output or messages are not UTF-8."""

from __future__ import annotations

import shutil

import pytest

from perfcast.measure.kernel_runs import measure_configuration

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")

# Prints the byte 0xff (and, with -DBAD, fails to compile with that byte in the message).
PROGRAM = rb"""
#include <stdio.h>
int main(void) {
#ifdef BAD
    undeclared("\xff");
#endif
    printf("done \xff\n");
    return 0;
}
"""


@needs_cc
def test_a_program_printing_bytes_that_are_not_utf8_is_measured(tmp_path):
    # subprocess decoded its output strictly: UnicodeDecodeError ended 'perfcast tune'.
    source = tmp_path / "prog.c"
    source.write_bytes(PROGRAM)
    run = measure_configuration(
        source, "main", ["-O0"], compiler="cc", repetitions=1, count_instructions=False
    )
    assert run.error == "" and run.seconds is not None and run.seconds > 0
    assert run.output.startswith("done ")


@needs_cc
def test_a_compiler_message_that_is_not_utf8_is_the_error_of_the_evaluation(tmp_path):
    source = tmp_path / "prog.c"
    source.write_bytes(PROGRAM)
    run = measure_configuration(
        source, "main", ["-DBAD"], compiler="cc", repetitions=1, count_instructions=False
    )
    assert run.error.startswith("does not compile:") and run.seconds is None
