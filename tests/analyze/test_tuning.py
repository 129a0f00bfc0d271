"""The autotuner, its search space file and the tuning database (issue 18)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import textwrap

import numpy as np
import pytest

from benchmarks.kernel_corpus import kernel, write_program
from perfcast.analyze.tuning import TuningSpace, load_space, search, tune
from perfcast.cli import main
from perfcast.core.errors import InputError, WorkError
from perfcast.io.tuning_db import TuningDatabase
from perfcast.measure.kernel_runs import KernelRun

needs_tools = pytest.mark.skipif(
    shutil.which("clang-16") is None or shutil.which("valgrind") is None,
    reason="needs clang-16 and valgrind",
)

TOY_SPACE = """\
[flags]
opt = ["-O0", "-O2"]

[macros]
UNROLL = [1, 2]

[defines]
N = 24

[measure]
objective = "instructions"
repetitions = 1
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_space_file_with_an_unknown_key_names_file_line_and_key(tmp_path, capsys):
    path = write(tmp_path, "space.toml", '[flags]\nopt = ["-O1"]\n\n[tiles]\nT = [8]\n')
    with pytest.raises(InputError) as caught:
        load_space(path)
    assert caught.value.source == str(path) and caught.value.line == 4
    assert "unknown key 'tiles'" in str(caught.value)
    path = write(tmp_path, "measure.toml", "[macros]\nU = [1]\n[measure]\nrepeats = 3\n")
    with pytest.raises(InputError, match="unknown key measure.repeats") as caught:
        load_space(path)
    assert caught.value.line == 4
    program = write_program(kernel("dot"), tmp_path)
    status = main(["tune", str(program), "--function", "dot", "--space", str(path)])
    assert status == 2
    error = capsys.readouterr().err
    assert f"{path}:4" in error and "repeats" in error and "Traceback" not in error


def test_space_values_are_checked(tmp_path):
    with pytest.raises(InputError, match="flags.opt must be a non-empty list"):
        load_space(write(tmp_path, "a.toml", "[flags]\nopt = []\n"))
    with pytest.raises(InputError, match="objective"):
        load_space(write(tmp_path, "b.toml", '[macros]\nU = [1]\n[measure]\nobjective = "x"\n'))
    with pytest.raises(InputError, match="no parameter"):
        load_space(write(tmp_path, "c.toml", "[defines]\nN = 3\n"))
    space = load_space(write(tmp_path, "d.toml", TOY_SPACE))
    assert space.size == 4 and space.default() == {"opt": "-O0", "UNROLL": "1"}
    assert space.compile_flags({"opt": "-O2", "UNROLL": "2"}) == ["-O2", "-DUNROLL=2", "-DN=24"]
    assert space.adapt({"opt": "-O3", "UNROLL": "2", "other": "x"}) == {"opt": "-O0", "UNROLL": "2"}


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ('measure = 5\n[flags]\nopt = ["-O1"]\n', r"\[measure\] must be a table", 1),
        ('defines = 5\n[flags]\nopt = ["-O1"]\n', r"\[defines\] must be a table", 1),
        ('[flags]\nopt = ["-O1"]\n[measure]\narguments = 5\n', "measure.arguments", 4),
        ('[flags]\nopt = ["-O1"]\n[measure]\narguments = "a b"\n', "measure.arguments", 4),
        ('[flags]\nopt = ["-O1"]\n[measure]\ncompiler = 16\n', "measure.compiler", 4),
    ],
)
def test_space_sections_of_the_wrong_type_are_bad_input(tmp_path, text, message, line):
    # These raised TypeError/AttributeError, or split "a b" into the arguments 'a', ' ', 'b'.
    with pytest.raises(InputError, match=message) as caught:
        load_space(write(tmp_path, "space.toml", text))
    assert caught.value.line == line


def test_a_space_too_large_to_list_or_with_a_repeated_value_is_refused(tmp_path):
    # 8 macros of 20 values (2.56e10 configurations) were listed in memory before the first
    # evaluation; 'U = [1, 1]' evaluated the same configuration twice.
    macros = "".join(f"M{i} = [{', '.join(str(v) for v in range(20))}]\n" for i in range(8))
    with pytest.raises(InputError, match="25,600,000,000 configurations"):
        load_space(write(tmp_path, "big.toml", "[macros]\n" + macros))
    big = TuningSpace(flags={}, macros={f"M{i}": tuple(map(str, range(20))) for i in range(8)})
    with pytest.raises(InputError, match="at most 1,000,000"):
        search(big, additive, budget=3)
    with pytest.raises(InputError, match="macros.U lists a value twice") as caught:
        load_space(write(tmp_path, "twice.toml", "[macros]\nV = [1]\nU = [1, 1]\n"))
    assert caught.value.line == 3


def test_a_compiler_that_is_not_installed_is_bad_input_before_the_database(tmp_path, capsys):
    # It failed (exit 1) at the first evaluation, after creating the database file.
    path = write(tmp_path, "space.toml", '[flags]\nopt = ["-O1"]\n[measure]\ncompiler = "nocc"\n')
    program = write_program(kernel("dot"), tmp_path)
    database = tmp_path / "tuning.sqlite"
    argv = ["tune", str(program), "--function", "dot", "--space", str(path), "--db", str(database)]
    assert main(argv) == 2
    assert "measure.compiler 'nocc' is not installed" in capsys.readouterr().err
    assert not database.exists()


def test_a_macro_name_that_is_no_c_identifier_is_refused(tmp_path):
    # '"A B" = [1]' became -DA B=1: every configuration failed to compile and tune exited 0.
    with pytest.raises(InputError, match="macros.'A B' is not a C macro name") as caught:
        load_space(write(tmp_path, "a.toml", '[macros]\nU = [1]\n"A B" = [1, 2]\n'))
    assert caught.value.line == 3
    with pytest.raises(InputError, match="defines.'N=3' is not a C macro name"):
        load_space(write(tmp_path, "b.toml", '[macros]\nU = [1]\n[defines]\n"N=3" = 4\n'))


def test_a_space_file_not_in_utf8_is_bad_input(tmp_path, capsys):
    path = tmp_path / "space.toml"
    path.write_bytes(b'[flags]\nopt = ["\xff"]\n')
    assert main(["tune", "k.c", "--function", "f", "--space", str(path)]) == 2
    error = capsys.readouterr().err
    assert str(path) in error and "UTF-8" in error and "Traceback" not in error


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path):
    # The schema used to be created before the check: perfcast's tables were added to the file.
    for name, script in [
        ("notes.sqlite", "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('keep');"),
        ("meta.sqlite", "CREATE TABLE meta (key TEXT, value TEXT);"
                        "INSERT INTO meta VALUES ('format', 'something-else');"),
    ]:  # fmt: skip
        foreign = tmp_path / name
        connection = sqlite3.connect(foreign)
        connection.executescript(script)
        connection.commit()
        connection.close()
        before = foreign.read_bytes()
        with pytest.raises(InputError, match="not a perfcast tuning database"):
            TuningDatabase(foreign)
        assert foreign.read_bytes() == before
    with TuningDatabase(tmp_path / "new.sqlite") as store:  # a new file is still created
        assert store.kernels() == []
    with TuningDatabase(tmp_path / "new.sqlite") as store:  # and read again
        assert store.kernels() == []


def test_a_database_path_that_cannot_be_a_file_says_why(tmp_path):
    # Both said "not a perfcast tuning database (unable to open database file)".
    with pytest.raises(InputError, match="cannot open the tuning database: is a directory"):
        TuningDatabase(tmp_path)
    with pytest.raises(InputError, match="its directory does not exist"):
        TuningDatabase(tmp_path / "absent" / "tuning.sqlite")


def test_a_locked_database_is_a_failure_with_a_message_not_a_traceback(tmp_path):
    # sqlite3.OperationalError ('database is locked') escaped as a traceback at the end of the
    # search.
    path = tmp_path / "tuning.sqlite"
    with TuningDatabase(path) as store:
        holder = sqlite3.connect(path)
        holder.execute("BEGIN EXCLUSIVE")
        store._db.execute("PRAGMA busy_timeout = 0")
        try:
            with pytest.raises(WorkError, match="cannot write the tuning database"):
                store.add_kernel("a.c", "f", "function", None, np.ones(4))
        finally:
            holder.close()


def test_a_database_version_that_is_no_number_is_bad_input(tmp_path):
    path = tmp_path / "tuning.sqlite"
    TuningDatabase(path).close()
    connection = sqlite3.connect(path)
    connection.execute("UPDATE meta SET value = 'two' WHERE key = 'version'")
    connection.commit()
    connection.close()
    with pytest.raises(InputError, match="version 'two' is not a whole number"):
        TuningDatabase(path)


def additive(config):
    """A deterministic objective with a known optimum: a=3, b=z (no measurement involved)."""
    cost = {"1": 50, "2": 30, "3": 10}[config["a"]] + {"x": 7, "y": 5, "z": 1}[config["b"]]
    return KernelRun(instructions=cost, seconds=None)


SPACE = TuningSpace(flags={}, macros={"a": ("1", "2", "3"), "b": ("x", "y", "z")})


def test_search_strategies_cover_the_space_without_repeating():
    everything = search(SPACE, additive, budget=9, strategy="exhaustive")
    assert [c for c, _, _ in everything] == SPACE.all_configurations()
    drawn = search(SPACE, additive, budget=9, strategy="random", seed=4)
    assert sorted(map(str, (c for c, _, _ in drawn))) == sorted(
        map(str, SPACE.all_configurations())
    )
    assert [c for c, _, _ in drawn] != SPACE.all_configurations()
    modelled = search(SPACE, additive, budget=6, strategy="model", seed=1)
    assert {"a": "3", "b": "z"} in [c for c, _, _ in modelled]
    warm = search(SPACE, additive, budget=2, strategy="random", first=[{"a": "3", "b": "z"}])
    assert warm[0][0] == {"a": "3", "b": "z"} and warm[0][2] == "warm" and len(warm) == 2
    with pytest.raises(ValueError, match="strategy"):
        search(SPACE, additive, budget=2, strategy="annealing")


@pytest.mark.slow
@needs_tools
def test_tuner_compiles_runs_and_stores_then_warm_starts_a_similar_kernel(tmp_path, capsys):
    space_file = write(tmp_path, "space.toml", TOY_SPACE)
    database = tmp_path / "tuning.sqlite"
    gemv = write_program(kernel("gemv"), tmp_path)
    result = tune(gemv, "gemv", load_space(space_file), strategy="exhaustive", database=database)
    assert len(result.evaluations) == 4 and not any(e.error for e in result.evaluations)
    values = {(e.config["opt"], e.config["UNROLL"]): e.value for e in result.evaluations}
    assert all(e.scope == "function" and e.instructions > 0 for e in result.evaluations)
    assert values[("-O2", "1")] < values[("-O0", "1")]  # -O0 keeps every local in memory
    assert result.best.config["opt"] == "-O2"
    assert result.steps_to_within is not None and result.steps_to_within <= 4
    with TuningDatabase(database) as store:
        (stored,) = store.kernels()
        assert stored.function == "gemv" and len(store.evaluations(stored.id)) == 4
        assert store.best(stored.id, "instructions").config == result.best.config

    mvt = write_program(kernel("mvt"), tmp_path)
    status = main(
        ["tune", str(mvt), "--function", "mvt", "--space", str(space_file), "--budget", "2",
         "--db", str(database), "--warm-start", "--format", "json"]
    )  # fmt: skip
    assert status == 0
    data = json.loads(capsys.readouterr().out)
    assert data["warm_start_from"][0]["function"] == "gemv"
    assert 0.0 < data["warm_start_from"][0]["similarity"] <= 1.0
    first = data["evaluations"][0]
    assert first["origin"] == "warm" and first["config"] == result.best.config
    assert len(data["evaluations"]) == 2
    rows = sqlite3.connect(database).execute("SELECT COUNT(*) FROM evaluations").fetchone()
    assert rows == (6,)  # the first search's evaluations are still there


def test_warm_start_needs_a_database_and_a_foreign_file_is_refused(tmp_path):
    program = write_program(kernel("dot"), tmp_path)
    space = load_space(write(tmp_path, "space.toml", TOY_SPACE))
    with pytest.raises(InputError, match="warm start needs a tuning database"):
        tune(program, "dot", space, warm_start=True)
    foreign = tmp_path / "other.sqlite"
    connection = sqlite3.connect(foreign)
    connection.executescript("CREATE TABLE meta (key TEXT, value TEXT);"
                             "INSERT INTO meta VALUES ('format', 'something-else');")  # fmt: skip
    connection.commit()
    connection.close()
    with pytest.raises(InputError, match="not a perfcast tuning database"):
        TuningDatabase(foreign)
    text = tmp_path / "text.sqlite"
    text.write_text("not a database at all, just some text that is long enough" * 20)
    with pytest.raises(InputError, match="not a perfcast tuning database"):
        TuningDatabase(text)


@pytest.mark.slow
@needs_tools
def test_cycles_objective_counts_cache_misses_that_instructions_do_not(tmp_path):
    from benchmarks.kernel_corpus import tunable_program

    program = tmp_path / "matmul.c"
    program.write_text(tunable_program(kernel("matmul")))
    space_file = write(tmp_path, "space.toml", """\
        [flags]
        opt = ["-O1"]

        [macros]
        ORDER = [0, 2]

        [measure]
        objective = "cycles"
        repetitions = 1
        """)  # fmt: skip
    result = tune(program, "matmul", load_space(space_file), strategy="exhaustive")
    by_order = {e.config["ORDER"]: e for e in result.evaluations}
    assert all(e.objective == "cycles" and e.scope == "function" for e in by_order.values())
    for evaluation in by_order.values():
        assert evaluation.value > evaluation.instructions > 0  # misses add to the estimate
    # i-k-j walks B and C by rows: fewer simulated misses than i-j-k's column walk of B.
    miss_cost = {o: e.value - e.instructions for o, e in by_order.items()}
    assert miss_cost["2"] < miss_cost["0"] / 2
    assert result.best.config["ORDER"] == "2"


@needs_tools
def test_a_search_where_no_configuration_builds_exits_1(tmp_path, capsys):
    space = write(
        tmp_path, "space.toml", '[flags]\nopt = ["-fno-such-flag-a", "-fno-such-flag-b"]\n'
    )
    program = write_program(kernel("dot"), tmp_path)
    argv = ["tune", str(program), "--function", "dot", "--space", str(space), "--format", "json",
            "--db", str(tmp_path / "tuning.sqlite")]  # fmt: skip
    assert main(argv) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["best"] is None and all(e["error"] for e in data["evaluations"])
