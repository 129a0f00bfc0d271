"""Search spaces with values no C macro can spell (TOML's nan and inf, booleans, arrays or
tables as a fixed define) are refused naming the file, line and key, before anything is built:
they were passed to the compiler as text (``-DN=[1, 2]``) and every configuration failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfcast.analyze.tuning import load_space
from perfcast.cli import main
from perfcast.core.errors import InputError


@pytest.mark.parametrize(
    ("body", "key", "line"),
    [
        ("[macros]\nUNROLL = [1, nan]\n", "macros.UNROLL", 2),
        ("[macros]\nUNROLL = [inf]\n", "macros.UNROLL", 2),
        ('[flags]\nopt = ["-O2", -inf]\n', "flags.opt", 2),
        ("[macros]\nUNROLL = [1]\n[defines]\nN = [1, 2]\n", "defines.N", 4),
        ("[macros]\nUNROLL = [1]\n[defines]\nN = {a = 1}\n", "defines.N", 4),
        ("[macros]\nUNROLL = [1]\n[defines]\nN = true\n", "defines.N", 4),
        ("[macros]\nUNROLL = [1]\n[defines]\n\nN = nan\n", "defines.N", 5),
    ],
)
def test_values_without_a_c_spelling_are_refused(
    tmp_path: Path, body: str, key: str, line: int
) -> None:
    path = tmp_path / "space.toml"
    path.write_text(body)
    with pytest.raises(InputError, match=key) as refused:
        load_space(path)
    assert refused.value.source == str(path) and refused.value.line == line


def test_strings_and_finite_numbers_are_kept_as_their_text(tmp_path: Path) -> None:
    path = tmp_path / "space.toml"
    path.write_text('[macros]\nUNROLL = [1, 2.5, "4"]\n[defines]\nN = 24\nT = "double"\n')
    space = load_space(path)
    assert space.macros == {"UNROLL": ("1", "2.5", "4")}
    assert space.defines == {"N": "24", "T": "double"}


def test_tune_exits_2_on_such_a_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = tmp_path / "space.toml"
    space.write_text("[macros]\nUNROLL = [1]\n[defines]\nN = [1, 2]\n")
    source = tmp_path / "k.c"
    source.write_text("int main(void) { return 0; }\n")
    status = main(["tune", str(source), "--function", "main", "--space", str(space)])
    assert status == 2
    error = capsys.readouterr().err
    assert f"{space}:4" in error and "defines.N" in error and "Traceback" not in error


def test_toml_nested_too_deeply_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    # tomllib recurses once per array level and raised RecursionError, a traceback.
    path = tmp_path / "space.toml"
    path.write_text("[macros]\nU = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError, match="nested too deeply") as refused:
        load_space(path)
    assert refused.value.source == str(path)
