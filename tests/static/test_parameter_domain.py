"""Static counts hold for parameters that are integers >= 1: evaluated, fixed or profiled at a
value below 1 they are refused (verify20e J18: ``k < (m + 40) / 8`` modeled as
``floor(m/8) + 5`` passes gave -94 instructions at m = -100, where the program runs 18)."""

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

from perfcast.api import analyze_source, instruction_mix
from perfcast.core.errors import InputError
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

SOURCE = PROGRAMS_DIR / "shifted_bound.c"
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    directory = tmp_path_factory.mktemp("shifted_bound")
    return compile_c("gcc", "-O0", SOURCE, directory / "shifted_bound"), directory


def test_the_count_is_right_at_a_parameter_of_at_least_one(built):
    binary, directory = built
    profile = run_callgrind(binary, (3,), directory)
    truth = measured_mix(read_binary(binary), read_callgrind(profile))["shifted_passes"]["total"]
    mix = instruction_mix(binary, analyze_source([SOURCE], ["m"]), ["m"])
    assert mix.functions["shifted_passes"].evaluate({"m": 3})["total"] == truth


@pytest.mark.parametrize("value", [-100.0, -41.0, 0.0, 0.5, float("nan")])
def test_a_count_is_refused_below_one_instead_of_given(built, value):
    binary, _ = built
    mix = instruction_mix(binary, analyze_source([SOURCE], ["m"]), ["m"])
    with pytest.raises(InputError, match="integer >= 1") as raised:
        mix.functions["shifted_passes"].evaluate({"m": value})
    assert raised.value.reason == "bad-parameter-value"


def test_fixing_or_profiling_below_one_is_refused(built):
    binary, directory = built
    profile = run_callgrind(binary, (-41,), directory)
    with pytest.raises(InputError, match="m = -41"):
        analyze_source([SOURCE], ["m"], values={"m": -41})
    with pytest.raises(InputError, match=f"m = -41 \\(the run of {profile}\\)"):
        instruction_mix(
            binary, analyze_source([SOURCE], ["m"]), ["m"], profiles=[({"m": -41}, profile)]
        )


def test_the_command_line_refuses_a_fixed_value_below_one(built):
    binary, _ = built
    done = subprocess.run(
        [sys.executable, "-m", "perfcast.cli", "static", str(SOURCE), "--param", "m=0.5",
         "--binary", str(binary), "--no-cache"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "m = 0.5" in done.stderr and "integer >= 1" in done.stderr
    assert "Traceback" not in done.stderr
