"""Name patterns and Extra-P-style run names."""

from __future__ import annotations

import pytest

from perfcast.core.errors import InputError
from perfcast.io.patterns import NamePattern, guess_role, infer_name_values
from perfcast.io.profile_set import parse_param_options
from tests.io.importer_data import CUBE_MULTI, require


def test_pattern_compiles_to_named_numeric_groups():
    pattern = NamePattern("mm.x{x}y{y}z{z}.r{rep}")
    assert pattern.fields == ("x", "y", "z", "rep")
    assert pattern.parameters == ("x", "y", "z")
    assert pattern.regex.groupindex.keys() == {"x", "y", "z", "rep"}
    assert pattern.match("/data/mm.x10y1z25.r3") == {"x": 10.0, "y": 1.0, "z": 25.0, "rep": 3.0}


def test_pattern_strips_the_file_suffix_and_accepts_decimals_and_wildcards():
    assert NamePattern("{p}_cores").match("runs/343_cores.cali") == {"p": 343.0}
    assert NamePattern("run-*-n{n}").match("run-2024-05-n1.5e3.json") == {"n": 1500.0}
    assert NamePattern("a{a}").match("a2,5") == {"a": 2.5}


def test_pattern_with_slash_matches_the_last_path_components():
    pattern = NamePattern("p{p}/rep{rep}")
    assert pattern.match("/x/y/p16/rep2.cali") == {"p": 16.0, "rep": 2.0}


def test_pattern_that_does_not_match_names_the_file_and_the_pattern():
    with pytest.raises(InputError) as error:
        NamePattern("mm.x{x}.r{rep}").match("/sets/mm.x10y1.r1")
    assert error.value.source == "/sets/mm.x10y1.r1"
    assert "does not match the pattern 'mm.x{x}.r{rep}'" in str(error.value)


@pytest.mark.parametrize("template", ["mm.x.r1", "p{p}q{p}"])
def test_patterns_without_fields_or_with_a_repeated_field_are_rejected(template):
    with pytest.raises(InputError, match="pattern"):
        NamePattern(template)


def test_extrap_style_names_give_parameters_and_repetition():
    assert infer_name_values("mm.x25y10z1.r2") == {"rep": 2.0, "x": 25.0, "y": 10.0, "z": 1.0}
    assert infer_name_values("lulesh.p8.n1,5") == {"p": 8.0, "n": 1.5}
    assert infer_name_values("x64size100") == {"x": 64.0, "size": 100.0}


def test_every_real_cube_set_directory_name_is_read():
    names = sorted(p.name for p in require(CUBE_MULTI).iterdir())
    values = {tuple(infer_name_values(n)[k] for k in "xyz") for n in names}
    assert values == {(x, y, z) for x in (1, 10, 25) for y in (1, 10, 25) for z in (1, 10, 25)}
    assert {infer_name_values(n)["rep"] for n in names} == {1.0}


@pytest.mark.parametrize("name", ["mm.r1", "scorep-20240101_1200", "mm.x10y", "mm.10x"])
def test_names_without_name_value_pairs_are_rejected(name):
    with pytest.raises(InputError, match="cannot read parameters") as error:
        infer_name_values(name, source=f"/sets/{name}")
    assert error.value.source == f"/sets/{name}"


def test_param_options_map_keys_to_names():
    assert parse_param_options(["mpi.world.size=p", "problem_size=n", "run=rep"]) == {
        "mpi.world.size": "p",
        "problem_size": "n",
        "run": "rep",
    }
    assert parse_param_options(["omp.num.threads"]) == {"omp.num.threads": "omp_num_threads"}
    with pytest.raises(InputError, match="two keys"):
        parse_param_options(["a=p", "b=p"])
    with pytest.raises(InputError, match="KEY=NAME"):
        parse_param_options(["=p"])


def test_roles_follow_naming_conventions():
    assert guess_role("p") == "processes"
    assert guess_role("t") == "threads"
    assert guess_role("n") == "problem_size"
    assert guess_role("x") is None
