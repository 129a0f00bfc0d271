"""Parameter roles in ``diagnose``: the bug example's planted kernel is the only bug, whichever
parameter the diagnosis follows, and the runtime and the small halo exchange stay unflagged."""

from __future__ import annotations

import pytest

import perfcast
from perfcast.analyze.bugs import is_runtime
from perfcast.analyze.points import parameter_roles, parse_roles, scale_parameter
from perfcast.core.errors import InputError
from tests.analyze.bug_example import (
    HALO,
    PLANTED,
    RUNTIME,
    bug_experiment,
    lone_n_experiment,
)


@pytest.fixture(scope="module")
def fitted():
    exp = bug_experiment()
    return exp, perfcast.fit(exp)


def flagged_kernels(diagnosis):
    return sorted({b.kernel for b in diagnosis.flagged})


def test_the_planted_kernel_is_the_only_bug(fitted):
    exp, models = fitted
    result = perfcast.diagnose(exp, models)
    assert flagged_kernels(result) == [PLANTED]
    assert {b.parameter for b in result.flagged} == {"p", "n"}
    halo = next(b for b in result.bugs if b.kernel == HALO)
    assert halo.expected == "p^(-1)" and halo.lead == "p^(-1/2)"
    assert halo.share == pytest.approx(0.034, abs=0.002)
    assert not halo.flagged and "below 5 %" in halo.reason
    # with the old 1 % threshold the halo exchange would be reported
    assert HALO in flagged_kernels(perfcast.diagnose(exp, models, min_share=0.01))


def test_roles_and_scaling_are_stated(fitted):
    exp, models = fitted
    result = perfcast.diagnose(exp, models)
    assert (result.roles["p"].role, result.roles["p"].source) == ("processes", "experiment")
    assert (result.roles["n"].role, result.roles["n"].source) == ("problem_size", "name")
    assert result.roles["p"].scaling == "strong" and result.roles["p"].expected == "p^(-1)"
    assert result.roles["n"].scaling == "problem-size sweep"
    assert result.roles["n"].expected == "n"
    data = result.to_dict()
    assert data["parameters"]["p"]["scaling"] == "strong"
    assert data["parameters"]["n"]["scaling"] == "problem-size sweep"
    assert data["min_share"] == 0.05
    text = perfcast.api.render(result, "text")
    assert (
        "  p: processes (from the experiment), strong; expected per kernel at most p^(-1)" in text
    )
    assert "  n: problem size (from the name), problem-size sweep" in text


def test_scale_n_is_a_problem_size_sweep_not_weak_scaling(fitted):
    exp, models = fitted
    result = perfcast.diagnose(exp, models, scale="n")
    assert flagged_kernels(result) == [PLANTED]
    assert result.mode == "problem-size sweep" and "not process scaling" in result.mode_reason
    assert result.target == {"p": 64.0, "n": 640000.0}
    along_n = next(b for b in result.flagged if b.parameter == "n")
    assert along_n.expected == "n" and "problem size n" in along_n.reason
    assert all("weak" not in b.reason for b in result.bugs)
    assert result.modeled is None and result.measured == []
    text = perfcast.api.render(result, "text")
    assert "weak" not in text
    assert "Scaling error: not computed along n (problem-size sweep)" in text


def test_a_lone_n_parameter_is_diagnosed_as_a_problem_size_sweep():
    lone = lone_n_experiment()
    result = perfcast.diagnose(lone)
    assert result.scale == "n" and result.mode == "problem-size sweep"
    assert flagged_kernels(result) == [PLANTED]
    assert [b.parameter for b in result.flagged] == ["n"]


def test_roles_given_override_the_experiment_and_the_names():
    exp = bug_experiment(roles={})
    models = perfcast.fit(exp)
    named = perfcast.diagnose(exp, models)
    assert named.roles["p"].source == "name" and flagged_kernels(named) == [PLANTED]
    # n declared a configuration knob: no expected order in n, the bug is still found in p
    given = perfcast.diagnose(exp, models, roles="p=procs,n=configuration")
    assert given.roles["p"].source == "given" and given.roles["n"].scaling is None
    assert flagged_kernels(given) == [PLANTED]
    assert {b.parameter for b in given.flagged} == {"p"}


def test_runtime_kernels_are_grouped_and_flagged_only_when_asked(fitted):
    exp, models = fitted
    result = perfcast.diagnose(exp, models)
    assert sorted(r.kernel for r in result.runtime) == sorted(RUNTIME)
    runtime_findings = [b for b in result.bugs if b.runtime]
    assert {b.kernel for b in runtime_findings} == set(RUNTIME)
    assert all("runtime" in b.reason and not b.flagged for b in runtime_findings)
    assert sorted(result.to_dict()["runtime"]["kernels"]) == sorted(RUNTIME)
    asked = perfcast.diagnose(exp, models, flag_runtime=True)
    assert flagged_kernels(asked) == sorted([PLANTED, *RUNTIME])


@pytest.mark.parametrize(
    "name",
    [
        "_dl_relocate_object",
        "main->_dl_lookup_symbol_x",
        "/lib64/ld-linux-x86-64.so.2",
        "main->__memcpy_avx_unaligned_erms",
        "memset",
        "malloc",
        "_int_free",
        "__libc_start_main",
        "main->MPI_Allreduce->PMPI_Allreduce",
        "MPIDI_CH3I_Progress",
        "ompi_coll_base_allreduce_intra_recursivedoubling",
        "opal_progress",
        "vfprintf",
    ],
)
def test_system_library_kernels_are_runtime(name):
    assert is_runtime(name)


@pytest.mark.parametrize(
    "name", ["main->compute", "MPI_Allreduce", "free_grid", "memory_pool_init", "dl_model", "mpi"]
)
def test_program_kernels_are_not_runtime(name):
    assert not is_runtime(name)


def test_role_parsing_and_errors():
    exp = bug_experiment(roles={})
    assert parse_roles("p=ranks, n=size", ["p", "n"]) == {"p": "processes", "n": "problem_size"}
    with pytest.raises(InputError, match="'q' is not a parameter"):
        parse_roles("q=processes", ["p", "n"])
    with pytest.raises(InputError, match="'cores' is not a role"):
        parse_roles("p=cores", ["p", "n"])
    with pytest.raises(InputError, match="PARAMETER=ROLE"):
        parse_roles("p", ["p", "n"])
    with pytest.raises(InputError, match="'p' is given twice"):
        parse_roles("p=processes,p=size", ["p", "n"])
    with pytest.raises(InputError, match="not a role"):
        parameter_roles(exp, {"p": "cores"})
    assert parameter_roles(exp, {"n": "threads"})["n"].role == "threads"
    assert scale_parameter(exp, roles=parameter_roles(exp, {"p": "size", "n": "threads"})) == "n"


def test_threads_scale_strong_like_processes():
    from tests.analyze.synthetic import experiment

    truth = {
        "solve": lambda p, t: 200.0 / (p * t),
        "omp_barrier": lambda p, t: 1.5 * t / p,  # grows with the threads: the bug
        "serial_io": lambda p, t: 0.5 + 0 * p * t,  # no speed-up from threads, but constant
    }
    exp = experiment(truth, {"p": [2, 4, 8, 16], "t": [1, 2, 4, 8]}, repetitions=3, noise=0.02)
    result = perfcast.diagnose(exp)
    assert result.roles["t"].role == "threads" and result.roles["t"].scaling == "strong"
    assert result.roles["t"].expected == "t^(-1)"
    assert [(b.kernel, b.parameter) for b in result.flagged] == [("omp_barrier", "t")]


def test_the_share_of_a_bug_in_inclusive_call_paths_counts_every_callee_once():
    from tests.analyze.synthetic import experiment, model

    # inclusive region times: main holds compute and gather; gather is 9 % of the program at
    # p = 512, 4.5 % if main were counted next to its callees
    truth = {
        "main": lambda p: 100.0 / p + 0.001 * p + 5.0,
        "main->compute": lambda p: 100.0 / p,
        "main->gather": lambda p: 0.001 * p,
    }
    models = [
        model("main", ["p"], 5.0, (100.0, {"p": (-1, 0)}), (0.001, {"p": (1, 0)})),
        model("main->compute", ["p"], 0.0, (100.0, {"p": (-1, 0)})),
        model("main->gather", ["p"], 0.0, (0.001, {"p": (1, 0)})),
    ]
    exp = experiment(truth, {"p": [2, 4, 8, 16, 32, 64]}, repetitions=3, noise=0.01)
    result = perfcast.diagnose(exp, perfcast.ModelSet(models), at={"p": 512})
    gather = next(b for b in result.bugs if b.kernel == "main->gather")
    total = 5.0 + 100.0 / 512 + 0.001 * 512
    assert gather.share == pytest.approx(0.001 * 512 / total, rel=1e-6)
    assert [b.kernel for b in result.flagged] == ["main->gather"]
    assert next(b for b in result.bugs if b.kernel == "main").inherited_from == "main->gather"
