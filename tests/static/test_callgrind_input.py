"""Bad callgrind input for ``--profile``: a file cut short, a run point naming no parameter.

Both were taken silently (exit status 0): the costs of a truncated file stood in for measured
counts, and ``--profile out@m=3`` with no parameter ``m`` gave models in a symbol nobody
asked for. Each is now one message naming the file, exit status 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import cli
from perfcast.core.errors import InputError
from perfcast.static.callgrind import read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR  # noqa: E402

WHOLE = """# callgrind format
version: 1
positions: instr line
events: Ir
summary: 12

ob=(1) /bin/prog
fl=(1) prog.c
fn=(1) main
0x1000 3 5
+4 * 7
"""


def test_a_file_cut_short_is_an_error_naming_it(tmp_path):
    whole = tmp_path / "callgrind.whole"
    whole.write_text(WHOLE)
    assert read_callgrind(whole).total == 12
    cut = tmp_path / "callgrind.cut"
    cut.write_text(WHOLE.rsplit("+4", 1)[0])
    with pytest.raises(InputError, match="truncated callgrind file") as raised:
        read_callgrind(cut)
    assert str(cut) in str(raised.value)


def test_a_profile_point_must_name_parameters_of_the_analysis(tmp_path, capsys):
    source = PROGRAMS_DIR / "guarded_init.c"
    profile = tmp_path / "callgrind.out"
    profile.write_text(WHOLE)
    argv = ["static", str(source), "--param", "n", "--binary", str(tmp_path / "a.out")]
    status = cli.main([*argv, "--profile", f"{profile}@m=3"])
    error = capsys.readouterr().err
    assert status == 2
    assert "m is no --param of this analysis (parameters: n)" in error
    assert "Traceback" not in error
