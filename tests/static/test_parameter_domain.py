"""Static counts hold for sizes that are integers >= 1 and probabilities in [0, 1]: evaluated,
fixed or profiled at a negative value they are refused (verify20e J18: ``k < (m + 40) / 8``
modeled as ``floor(m/8) + 5`` passes gave -94 instructions at m = -100, where the program runs
18)."""

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


@pytest.mark.parametrize("value", [-100.0, -41.0, -0.5, float("nan")])
def test_a_negative_value_is_refused_instead_of_a_count(built, value):
    binary, _ = built
    mix = instruction_mix(binary, analyze_source([SOURCE], ["m"]), ["m"])
    with pytest.raises(InputError, match="integers >= 1") as raised:
        mix.functions["shifted_passes"].evaluate({"m": value})
    assert raised.value.reason == "bad-parameter-value"


def test_fixing_or_profiling_at_a_negative_value_is_refused(built):
    binary, directory = built
    profile = run_callgrind(binary, (-41,), directory)
    with pytest.raises(InputError, match="m = -41"):
        analyze_source([SOURCE], ["m"], values={"m": -41})
    with pytest.raises(InputError, match=f"m = -41 \\(the run of {profile}\\)"):
        instruction_mix(
            binary, analyze_source([SOURCE], ["m"]), ["m"], profiles=[({"m": -41}, profile)]
        )
