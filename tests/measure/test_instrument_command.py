"""`perfcast instrument`: the printed flags build a working instrumented program."""

from __future__ import annotations

import argparse
import shlex
import subprocess

import pytest
from region_helpers import by_key, read_records, run

from perfcast.commands import instrument as command
from perfcast.core.errors import InputError
from perfcast.measure.instrument import compile_flags, fortran_module, library_dir, link_arguments


def invoke(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["instrument", *argv])
    assert args.run(args) == 0
    return capsys.readouterr().out.strip()


def test_library_files_are_shipped():
    for name in (
        "perfcast.h",
        "perfcast.c",
        "perfcast.f90",
        "caliper/cali.h",
        "caliper/cali-manager.h",
        "caliper/cali_macros.h",
    ):
        assert (library_dir() / name).is_file(), name
    assert fortran_module() == library_dir() / "perfcast.f90"


def test_printed_flags(capsys):
    assert invoke(capsys, "--cflags") == f"-I{library_dir()}"
    assert invoke(capsys, "--cflags", "--functions") == (
        f"-I{library_dir()} -finstrument-functions"
    )
    assert invoke(capsys, "--libs") == f"{library_dir() / 'perfcast.c'} -ldl"
    assert invoke(capsys, "--fortran") == str(fortran_module())
    assert invoke(capsys, "--dir") == str(library_dir())


def test_functions_needs_cflags(capsys):
    with pytest.raises(InputError, match="--functions only goes with --cflags"):
        invoke(capsys, "--libs", "--functions")


def test_one_command_line_builds_an_instrumented_program(tmp_path, capsys):
    (tmp_path / "app.c").write_text(r"""
#include "perfcast.h"
static void step(void) { PERFCAST_REGION_BEGIN("step"); PERFCAST_REGION_END("step"); }
int main(void) { for (int i = 0; i < 3; i++) step(); return 0; }
""")
    line = (
        f"gcc -O2 app.c {invoke(capsys, '--cflags', '--functions')} "
        f"{invoke(capsys, '--libs')} -o app"
    )
    subprocess.run(shlex.split(line), cwd=tmp_path, check=True)
    out = tmp_path / "out.jsonl"
    run([str(tmp_path / "app")], out)
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    assert visits == {"main": 1, "main->step": 3, "main->step->step": 3}
    assert compile_flags() == [f"-I{library_dir()}"]
    assert link_arguments()[0].endswith("perfcast.c")
