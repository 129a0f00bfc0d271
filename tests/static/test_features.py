"""``perfcast features``: the libclang rewriter on tricky C, feature values against hand
counts, MPI traffic reduced over ranks, the early-phase pragma and the records' run table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.io.run_table import read_feature_records
from perfcast.static.features import instrument_features

PROGRAMS = Path(__file__).with_name("feature_programs")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _build(source: Path, binary: Path, compiler: str = "gcc") -> Path:
    subprocess.run([compiler, "-O1", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-o",
                    str(binary), str(source)], check=True, capture_output=True)  # fmt: skip
    return binary


def _run(command: list[str], records: Path) -> str:
    env = {**os.environ, **MPI_ENV, "PERFCAST_FEATURES_FILE": str(records)}
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return done.stdout


def _built_pair(
    folder: Path, name: str, flags: list[str], libraries: tuple[str, ...] = ()
) -> list[str]:
    """The original ``folder/name`` and its instrumented copy in ``folder/out``, built alike
    with gcc (``flags``: -fopenmp or none); their paths, original first."""
    binaries = []
    for source, binary in ((folder / name, "original"), (folder / "out" / name, "instrumented")):
        command = ["gcc", "-O2", "-Wall", "-Werror", "-Wno-unknown-pragmas", *flags]
        output = ["-o", str(folder / binary), str(source), *libraries]
        subprocess.run([*command, *output], check=True)
        binaries.append(str(folder / binary))
    return binaries


def _both_runs(binaries: list[str], argument: str, folder: Path) -> tuple[str, str, dict]:
    """The instrumented program's output, the original's, and the one record the first wrote."""
    records = folder / "omp.jsonl"
    output = _run([binaries[1], argument], records)
    original = _run([binaries[0], argument], folder / "none")
    (record,) = [json.loads(line) for line in records.read_text().splitlines()]
    return output, original, record


@pytest.fixture(scope="module")
def tricky(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tricky")
    shutil.copy(PROGRAMS / "tricky.c", folder / "tricky.c")
    results = instrument_features([folder / "tricky.c"], folder / "out", parameters=["n"])
    original = _build(folder / "tricky.c", folder / "original")
    instrumented = _build(folder / "out" / "tricky.c", folder / "instrumented")
    return folder, results[0], original, instrumented


@pytest.mark.parametrize("n", ["1", "5", "9"])
def test_the_instrumented_program_computes_what_the_original_does(tricky, n):
    folder, _, original, instrumented = tricky
    records = folder / f"records-{n}.jsonl"
    assert _run([str(instrumented), n], records) == _run([str(original), n], folder / "none")
    assert records.is_file()


def test_feature_values_match_hand_counts(tricky):
    folder, result, _, instrumented = tricky
    records = folder / "counts.jsonl"
    _run([str(instrumented), "5"], records)
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [line["phase"] for line in lines] == ["features_end", "exit"]
    final = lines[-1]
    line_of = {f.name: f.line for f in result.features}
    by = {(line_of[name], name.split(":", 2)[-1] if ":" in name else name): value
          for name, value in final.items() if name in line_of}  # fmt: skip
    # early(3): the loop runs 4 times, returns from inside on the 4th
    assert by[(13, "loop:for")] == 4
    assert (by[(14, "branch:then:if")], by[(14, "branch:else:if")]) == (1, 3)
    assert final["n"] == 5  # the parameter, named by the variable
    assert by[(25, "assign:a")] == 1 and by[(25, "assign:b")] == 2  # a = 1, b = 2
    assert by[(27, "loop:for")] == 5
    assert by[(28, "loop:for")] == 20  # continue counts, break ends the trips
    assert (by[(29, "branch:then:if")], by[(29, "branch:else:if")]) == (5, 15)
    assert (by[(31, "branch:then:if")], by[(31, "branch:else:if")]) == (2, 13)
    assert by[(37, "loop:do")] == 3
    assert by[(40, "loop:for")] == 4  # for (;;) left by break on the 4th trip
    assert (by[(46, "branch:then:if")], by[(46, "branch:else:if")]) == (2, 1)  # goto loop
    assert by[(50, "assign:e")] == 3
    assert by[(53, "assign:b")] == 10 and by[(54, "assign:b")] == 0  # switch: case 5 only
    assert final["cost:n"] > 0
    # written before the switch ran
    assert lines[0][next(n for n in result.features if n.line == 53).name] == 0


def test_sites_spelled_by_macros_are_left_alone_and_listed(tricky):
    folder, result, _, _ = tricky
    assert result.skipped == [
        "tricky.c:26: assignment to a spelled by a macro",
        "tricky.c:48: for loop spelled by a macro",
    ]
    text = (folder / "out" / "tricky.c").read_text()
    assert "#define REPEAT(n) for (int r_ = 0; r_ < (n); r_++)" in text
    manifest = json.loads((folder / "out" / "features.json").read_text())
    assert len(manifest["features"]) == len(result.features)


def test_records_become_a_run_table(tricky, tmp_path):
    folder, result, _, instrumented = tricky
    records = tmp_path / "runs.jsonl"
    for n in ("2", "4", "6"):
        _run([str(instrumented), n], records)
    table = read_feature_records(records)
    assert table.rows == 3
    assert table.numeric["n"].tolist() == [2.0, 4.0, 6.0]
    assert (table.numeric["time"] > 0).all()
    assert set(table.costs) == {f.name for f in result.features}
    early = read_feature_records(records, "features_end")
    assert early.numeric["time"].tolist() == table.numeric["time"].tolist()
    out = tmp_path / "runs.csv"
    assert main(["features", "--records", str(records), "-o", str(out)]) == 0
    assert out.read_text().splitlines()[0].startswith("tricky.c:")


def test_bad_records_and_sources_are_named(tmp_path, capsys):
    records = tmp_path / "bad.jsonl"
    records.write_text('{"phase": "exit", "elapsed": 1, "a": 1}\n{"phase": "exit", "b": 2}\n')
    with pytest.raises(InputError) as caught:
        read_feature_records(records)
    assert (caught.value.source, caught.value.line) == (str(records), 2)
    records.write_text("not json\n")
    assert main(["features", "--records", str(records), "-o", str(tmp_path / "r.csv")]) == 2
    assert f"{records}:1: not a JSON line" in capsys.readouterr().err
    broken = tmp_path / "broken.c"
    broken.write_text("int main(void) { return x; }\n")
    assert main(["features", str(broken), "-o", str(tmp_path / "out")]) == 2
    assert f"{broken}:1: clang: use of undeclared identifier 'x'" in capsys.readouterr().err


@pytest.mark.slow
def test_mpi_traffic_is_counted_and_reduced_over_ranks(tmp_path):
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("needs mpicc and mpirun")
    shutil.copy(PROGRAMS / "ring.c", tmp_path / "ring.c")
    (result,) = instrument_features([tmp_path / "ring.c"], tmp_path / "out")
    original = _build(tmp_path / "ring.c", tmp_path / "original", "mpicc")
    instrumented = _build(tmp_path / "out" / "ring.c", tmp_path / "instrumented", "mpicc")
    records = tmp_path / "ring.jsonl"
    launch = ["mpirun", "--oversubscribe", "-np", "3"]
    assert _run([*launch, str(instrumented), "50"], records) == _run(
        [*launch, str(original), "50"], tmp_path / "none"
    )
    (line,) = [json.loads(text) for text in records.read_text().splitlines()]
    assert line["ranks_reduced"] == 1
    values = {name.split(":", 2)[2]: line[name] for name in line if name.startswith("ring.c:")}
    assert values["loop:for"] == 9  # 3 steps on each of 3 ranks
    assert values["mpi_calls:MPI_Sendrecv_replace"] == 9
    assert values["mpi_bytes:MPI_Sendrecv_replace"] == 9 * 50 * 8
    assert values["mpi_bytes:MPI_Allreduce"] == 9 * 8
    assert values["mpi_bytes:MPI_Bcast"] == 3 * 50 * 8
    assert values["assign:n"] == 50  # a value: the maximum over ranks, not the sum
    assert (values["branch:then:if"], values["branch:else:if"]) == (1, 2)
    assert any(f.kind == "mpi_bytes" for f in result.features)


def test_statements_spelled_by_macros_elsewhere_are_left_alone(tmp_path):
    shutil.copy(PROGRAMS / "macro_statements.c", tmp_path / "macro_statements.c")
    (result,) = instrument_features([tmp_path / "macro_statements.c"], tmp_path / "out")
    original = _build(tmp_path / "macro_statements.c", tmp_path / "original")
    instrumented = _build(tmp_path / "out" / "macro_statements.c", tmp_path / "instrumented")
    records = tmp_path / "m.jsonl"
    assert _run([str(instrumented), "10"], records) == _run([str(original), "10"], tmp_path / "x")
    (record,) = [json.loads(line) for line in records.read_text().splitlines()]
    assert record["macro_statements.c:18:loop:for"] == 10
    assert record["macro_statements.c:19:branch:then:if"] == 4  # i = 0, 3, 6, 9
    assert not [f.name for f in result.features if ":16:" in f.name or ":17:" in f.name]
    assert any(note.startswith("macro_statements.c:16: if") for note in result.skipped)
    assert any(note.startswith("macro_statements.c:17: do loop") for note in result.skipped)


@pytest.mark.parametrize("openmp", [True, False])
def test_openmp_loops_keep_their_headers_and_count_every_thread(tmp_path, monkeypatch, openmp):
    shutil.copy(PROGRAMS / "openmp.c", tmp_path / "openmp.c")
    flags = ["-fopenmp"] if openmp else []
    (result,) = instrument_features([tmp_path / "openmp.c"], tmp_path / "out", flags)
    binaries = _built_pair(tmp_path, "openmp.c", flags)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    output, original, record = _both_runs(binaries, "30000", tmp_path)
    assert output == original
    assert record["openmp.c:11:loop:for"] == 30000
    assert record["openmp.c:13:branch:then:if"] == 10000
    assert record["openmp.c:13:branch:else:if"] == 20000
    assert "openmp.c:18:loop:for" not in record  # the outer loop of collapse(2)
    assert record["openmp.c:19:loop:for"] == 3000  # the inner one: every trip of the nest
    assert record["openmp.c:20:branch:then:if"] == 1500
    assert record["openmp.c:26:loop:for"] == 30000  # one statement, braced with its counter
    assert record["openmp.c:29:loop:for"] == 10  # no directive: its condition is wrapped
    assert result.skipped == ["openmp.c:18: for loop under a collapse(2) directive (counted "
                              "innermost)"]  # fmt: skip
    text = (tmp_path / "out" / "openmp.c").read_text()
    assert "for (i = 0; i < n; i++) {" in text and "for (j = 0; j < 30; j++) {" in text


C89_FLAGS = ["-std=c89", "-pedantic-errors", "-Wall", "-Werror", "-Wdeclaration-after-statement"]


@pytest.mark.parametrize(
    ("compiler", "tolerated"),
    [("gcc", []), ("clang-16", ["-Wno-strict-prototypes", "-Wno-deprecated-non-prototype"])],
)
def test_a_c89_program_builds_instrumented_with_its_strict_c89_command(
    tmp_path, compiler, tolerated
):
    if shutil.which(compiler) is None:
        pytest.skip(f"needs {compiler}")
    shutil.copy(PROGRAMS / "old_style.c", tmp_path / "old_style.c")
    instrument_features([tmp_path / "old_style.c"], tmp_path / "out", ["-std=c89"])
    binaries = []
    for source, binary in ((tmp_path / "old_style.c", "original"),
                           (tmp_path / "out" / "old_style.c", "instrumented")):  # fmt: skip
        command = [compiler, *C89_FLAGS, *tolerated, "-o", str(tmp_path / binary), str(source)]
        subprocess.run(command, check=True, capture_output=True)
        binaries.append(str(tmp_path / binary))
    records = tmp_path / "old.jsonl"
    assert _run([binaries[1], "20"], records) == _run([binaries[0], "20"], tmp_path / "none")
    (record,) = [json.loads(line) for line in records.read_text().splitlines()]
    assert record["old_style.c:23:loop:for"] == 20
    assert record["old_style.c:21:assign:steps"] == 5
    assert record["old_style.c:38:loop:for"] == 5 * 18  # relax: i = 1..n-2, steps times
    assert record["elapsed"] > 0 and record["cpu"] >= 0


def test_two_translation_units_with_crlf_line_ends_link_and_report_together(tmp_path):
    (tmp_path / "a.c").write_text(
        "#include <stdio.h>\nint work(int n);\nint main(int argc, char **argv) {\n"
        "    int s = 0;\n    for (int i = 0; i < 10; i++) s += work(i + argc);\n"
        '    printf("%d\\n", s);\n    return 0;\n}\n'
    )
    (tmp_path / "b.c").write_bytes(
        b"#include <stdlib.h>\r\nint work(int n) {\r\n    int t = 0;\r\n"
        b"    while (n > 0) { t += n; n--; }\r\n    if (t > 20) return t;\r\n"
        b"    return -t;\r\n}\r\n"
    )
    sources = [tmp_path / "a.c", tmp_path / "b.c"]
    results = instrument_features(sources, tmp_path / "out")
    assert [len(r.features) for r in results] == [2, 4]
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(tmp_path / "original"),
                    *map(str, sources)], check=True)  # fmt: skip
    built = [str(tmp_path / "out" / "a.c"), str(tmp_path / "out" / "b.c")]
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(tmp_path / "instrumented"),
                    *built], check=True)  # fmt: skip
    records = tmp_path / "f.jsonl"
    assert _run([str(tmp_path / "instrumented")], records) == _run(
        [str(tmp_path / "original")], tmp_path / "none"
    )
    (record,) = [json.loads(line) for line in records.read_text().splitlines()]
    assert record["a.c:5:loop:for"] == 10
    assert record["b.c:4:loop:while"] == sum(range(1, 11))  # n = 1..10 counted down
    assert (record["b.c:5:branch:then:if"], record["b.c:5:branch:else:if"]) == (5, 5)
    assert (tmp_path / "out" / "b.c").read_bytes().count(b"\r\n") == 7  # line ends kept


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        # an exit record without 'elapsed' used to be a KeyError traceback
        ('{"phase": "exit", "n": 4}', 1, "an exit record needs 'elapsed'"),
        (
            '{"phase": "exit", "n": 4, "elapsed": 1}\n{"phase": "exit", "n": 5, "elapsed": -2}',
            2,
            "it is -2",
        ),
        # a feature named 'time' (a --param variable) used to be overwritten silently
        ('{"phase": "exit", "time": 3, "elapsed": 1}', 1, "a feature named 'time'"),
    ],
)
def test_exit_records_need_elapsed_seconds_and_no_time_feature(tmp_path, capsys, lines, line,
                                                                message):  # fmt: skip
    records = tmp_path / "runs.jsonl"
    records.write_text(lines + "\n")
    with pytest.raises(InputError) as caught:
        read_feature_records(records)
    assert (caught.value.source, caught.value.line) == (str(records), line)
    assert message in caught.value.message
    assert main(["features", "--records", str(records), "-o", str(tmp_path / "r.csv")]) == 2
    assert f"{records}:{line}: " in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()


def test_a_cost_without_its_feature_names_no_line_zero(tmp_path, capsys):
    # the message used to read "runs.jsonl:0: cost column for 'n', ..."
    records = tmp_path / "runs.jsonl"
    records.write_text('{"phase": "exit", "cost:n": 0.1, "elapsed": 1}\n')
    assert main(["features", "--records", str(records), "-o", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"perfcast: error: {records}: cost column for 'n', which is no column of the table\n"
    )


def test_a_source_with_latin1_comments_is_instrumented(tmp_path):
    # the pragma scan decoded every token: a comment 'café' in Latin-1 ended in a
    # UnicodeDecodeError traceback from the clang bindings
    source = tmp_path / "lat.c"
    source.write_bytes(
        b"int main(int argc, char **argv) {\n  /* caf\xe9 */\n  int n = argc;\n"
        b"  for (int i = 0; i < n; i++) { n += 0; }\n#pragma perfcast features_end\n"
        b"  return 0;\n}\n"
    )
    (result,) = instrument_features([source], tmp_path / "out")
    assert [f.kind for f in result.features] == ["assign", "loop"]
    copy = result.path.read_bytes()
    assert b"/* caf\xe9 */" in copy
    assert b"PERFCAST_SNAPSHOT();" in copy


def test_an_output_that_is_a_file_and_unbalanced_cflags_are_messages(tmp_path, capsys):
    # each used to be a traceback: FileExistsError from mkdir, ValueError from shlex
    source = tmp_path / "ok.c"
    source.write_text("int main(void) { int n = 2; return n; }\n")
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    assert main(["features", str(source), "-o", str(taken)]) == 2
    assert capsys.readouterr().err == (
        f"perfcast: error: {taken}: the output folder is a file; choose a folder\n"
    )
    assert taken.read_text() == "keep me\n"
    assert main(["features", str(source), "-o", str(taken / "sub")]) == 2
    assert f"{taken / 'sub'}: cannot create the output folder" in capsys.readouterr().err
    out = tmp_path / "out"
    assert main(["features", str(source), "-o", str(out), "--cflags", "'-DN=4"]) == 2
    assert capsys.readouterr().err == "perfcast: error: --cflags: No closing quotation\n"
    assert not out.exists()


def test_a_param_that_names_no_instrumented_variable_is_warned_about(tmp_path, capsys):
    # a mistyped --param used to pass silently; the run table then lacked the column
    source = tmp_path / "ok.c"
    source.write_text("int main(int argc, char **argv) { int n = argc; return n; }\n")
    assert main(["features", str(source), "-o", str(tmp_path / "out"), "--param", "n",
                 "--param", "size"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "warning: --param size: no assignment to a variable 'size'" in err
    assert "--param n" not in err


def test_record_bytes_that_are_not_utf8_are_named_by_line(tmp_path):
    # the message used to be "cannot read: 'utf-8' codec can't decode byte 0xff ...", no line
    records = tmp_path / "runs.jsonl"
    records.write_bytes(b'{"phase": "exit", "n": 4, "elapsed": 1}\n{"phase": "exit\xff"}\n')
    with pytest.raises(InputError) as caught:
        read_feature_records(records)
    assert (caught.value.source, caught.value.line) == (str(records), 2)
    assert "bytes that are not UTF-8" in caught.value.message


@pytest.mark.slow
@pytest.mark.parametrize("rank_max", ["", "1"])
def test_counters_of_the_busiest_rank_and_the_early_phase_under_mpi(
    tmp_path, monkeypatch, rank_max
):
    # the early phase's reduction used to overwrite the counters with their sums over the
    # ranks, so the exit record counted the early phase once more per rank
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("needs mpicc and mpirun")
    shutil.copy(PROGRAMS / "uneven.c", tmp_path / "uneven.c")
    instrument_features([tmp_path / "uneven.c"], tmp_path / "out")
    original = _build(tmp_path / "uneven.c", tmp_path / "original", "mpicc")
    instrumented = _build(tmp_path / "out" / "uneven.c", tmp_path / "instrumented", "mpicc")
    records = tmp_path / "uneven.jsonl"
    launch = ["mpirun", "--oversubscribe", "-np", "3"]
    monkeypatch.setenv("PERFCAST_FEATURES_RANK_MAX", rank_max)
    assert _run([*launch, str(instrumented), "4"], records) == _run(
        [*launch, str(original), "4"], tmp_path / "none"
    )
    early, final = [json.loads(text) for text in records.read_text().splitlines()]
    # trips: 4, 8 and 12 on ranks 0-2 in each loop
    assert (early["uneven.c:13:loop:for"], early["uneven.c:15:loop:for"]) == (24, 0)
    assert (final["uneven.c:13:loop:for"], final["uneven.c:15:loop:for"]) == (24, 24)
    assert final["uneven.c:11:assign:n"] == 4
    # one calibration per process: the early record's cost per update is the exit record's
    assert early["cost:uneven.c:13:loop:for"] == final["cost:uneven.c:13:loop:for"] > 0
    if rank_max:
        busiest = "uneven.c:13:loop:for:rank_max", "uneven.c:15:loop:for:rank_max"
        assert (early[busiest[0]], final[busiest[1]]) == (12, 12)  # rank 2's trips
        assert final["cost:" + busiest[1]] == final["cost:uneven.c:15:loop:for"]
        # a variable's value is a maximum over the ranks already
        assert "uneven.c:11:assign:n:rank_max" not in final
    else:
        assert not any(name.endswith(":rank_max") for name in final)
    table = read_feature_records(records)
    assert ("uneven.c:15:loop:for:rank_max" in table.costs) == bool(rank_max)


def test_the_command_shows_ten_sites_left_alone_and_counts_the_rest(tmp_path, capsys):
    uses = "".join(f"    TWICE(x{i});\n" for i in range(12))
    declarations = "".join(f"    int x{i} = argc;\n" for i in range(12))
    source = tmp_path / "many.c"
    source.write_text(
        "#define TWICE(v) v = v * 2\nint main(int argc, char **argv) {\n"
        f"{declarations}    (void)argv;\n{uses}    return x0;\n}}\n"
    )
    assert main(["features", str(source), "-o", str(tmp_path / "out")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "left alone" in line]
    assert len(notes) == 11
    assert notes[0] == "perfcast: note: left alone: many.c:16: assignment to x0 spelled by a macro"
    assert notes[-1] == (
        f"perfcast: note: ... and 2 more sites left alone (every one is listed in "
        f"{tmp_path / 'out' / 'features.json'})"
    )
    listed = json.loads((tmp_path / "out" / "features.json").read_text())["skipped"]
    assert len(listed) == 12


@pytest.mark.parametrize("openmp", [True, False])
def test_openmp_header_and_atomic_statements_build_and_count(tmp_path, monkeypatch, openmp):
    """A third-party OpenMP code includes omp.h (which the libclang package lacks) and puts
    assignments under ``#pragma omp atomic``: before, the first stopped the parse and the second
    got a counter that made the directive's statement invalid."""
    shutil.copy(PROGRAMS / "openmp_atomic.c", tmp_path / "openmp_atomic.c")
    flags = ["-fopenmp"] if openmp else []
    (result,) = instrument_features([tmp_path / "openmp_atomic.c"], tmp_path / "out", flags)
    runtime = () if openmp else ("-lgomp",)  # omp.h's functions are called all the same
    binaries = _built_pair(tmp_path, "openmp_atomic.c", flags, runtime)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    output, original, record = _both_runs(binaries, "1000", tmp_path)
    assert output == original
    assert original == "250 3000.0 1 1\n"
    assert record["openmp_atomic.c:12:loop:for"] == 1000
    assert record["openmp_atomic.c:13:branch:then:if"] == 250
    assert record["openmp_atomic.c:25:assign:team"] == 1  # under single: still counted
    assert record["openmp_atomic.c:27:assign:seen"] == (2 if openmp else 1)  # under critical
    atomic_lines = {18, 20, 30, 32}
    for line in atomic_lines:
        assert not [name for name in record if f"openmp_atomic.c:{line}:" in name]
    notes = [note for note in result.skipped if "atomic directive" in note]
    assert sorted(int(note.split(":")[1]) for note in notes) == sorted(atomic_lines)


def test_mpi_reached_through_the_projects_own_headers(tmp_path):
    """mpi.h included by a header of a header (before: the MPI calls were left alone, with a
    note that mpi.h was not included, and every rank wrote an unreduced record of its own)."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("needs mpicc and mpirun")
    shutil.copytree(PROGRAMS / "mpi_header", tmp_path / "src")
    sources = [tmp_path / "src" / "main.c", tmp_path / "src" / "halo.c"]
    results = instrument_features(sources, tmp_path / "out")
    assert not [note for result in results for note in result.skipped if "mpi.h" in note]
    for header in ("halo.h", "halo_types.h"):  # the original build: headers beside the sources
        shutil.copy(tmp_path / "src" / header, tmp_path / "out" / header)
    binaries = []
    for folder, name in ((tmp_path / "src", "original"), (tmp_path / "out", "instrumented")):
        command = ["mpicc", "-O1", "-Wall", "-Werror", "-o", str(tmp_path / name)]
        subprocess.run([*command, str(folder / "main.c"), str(folder / "halo.c")], check=True)
        binaries.append(str(tmp_path / name))
    launch = ["mpirun", "--oversubscribe", "-np", "3"]
    records = tmp_path / "halo.jsonl"
    output = _run([*launch, binaries[1], "5"], records)
    assert output == _run([*launch, binaries[0], "5"], tmp_path / "none")
    assert output == "15\n"  # the last step, s = 4, over ranks 0, 1, 2: 3 * 4 + 3
    (record,) = [json.loads(line) for line in records.read_text().splitlines()]  # one, reduced
    assert record["ranks_reduced"] == 1
    assert record["halo.c:7:loop:for"] == 15  # 5 steps on each of 3 ranks
    assert record["halo.c:9:mpi_calls:MPI_Allreduce"] == 15
    assert record["halo.c:9:mpi_bytes:MPI_Allreduce"] == 15 * 8
    assert record["main.c:12:assign:steps"] == 5


@pytest.mark.parametrize("openmp", [True, False])
def test_directed_loops_with_one_statement_bodies_count_their_trips(tmp_path, monkeypatch, openmp):
    """``#pragma omp parallel for`` over a loop whose body is an inner loop, an if/else or a
    do/while loop without braces (the row loop of a matrix product): before, such loops were
    left alone, so the parallel loop's trips were missing from the record."""
    shutil.copy(PROGRAMS / "openmp_unbraced.c", tmp_path / "openmp_unbraced.c")
    flags = ["-fopenmp"] if openmp else []
    (result,) = instrument_features([tmp_path / "openmp_unbraced.c"], tmp_path / "out", flags)
    assert result.skipped == []
    binaries = _built_pair(tmp_path, "openmp_unbraced.c", flags)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    output, original, record = _both_runs(binaries, "30", tmp_path)
    assert output == original == "59015.0 26 5.0\n"
    counts = {int(name.split(":")[1]): record[name] for name in record
              if name.startswith("openmp_unbraced.c:") and ":loop:" in name}  # fmt: skip
    # every parallel loop 30 trips; inner loops 30 per outer trip; the do loop's condition is
    # evaluated 6 + 3 + 2 + 1 times for rows 0-3 (set to -1, 2, 3, 4) and once for the others
    assert counts == {10: 30, 11: 900, 14: 30, 15: 900, 16: 27000, 19: 30, 25: 30, 26: 38,
                      30: 30, 31: 0}  # fmt: skip
    assert record["openmp_unbraced.c:20:branch:then:if"] == 26
    assert record["openmp_unbraced.c:20:branch:else:if"] == 4


@pytest.mark.parametrize("openmp", [True, False])
def test_comments_between_a_directive_and_its_statement(tmp_path, monkeypatch, openmp):
    """Before, the comment counted as the directive's statement: the loop's condition was
    wrapped (GCC: "invalid controlling predicate") and the atomic update got a counter."""
    shutil.copy(PROGRAMS / "openmp_comments.c", tmp_path / "openmp_comments.c")
    flags = ["-fopenmp"] if openmp else []
    (result,) = instrument_features([tmp_path / "openmp_comments.c"], tmp_path / "out", flags)
    assert result.skipped == ["openmp_comments.c:18: statement under an atomic directive (its "
                              "form is fixed)"]  # fmt: skip
    binaries = _built_pair(tmp_path, "openmp_comments.c", flags)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    output, original, record = _both_runs(binaries, "50", tmp_path)
    assert output == original == "600\n"  # sum of i // 2
    assert record["openmp_comments.c:12:loop:for"] == 50
    assert record["openmp_comments.c:15:loop:for"] == 50


@pytest.mark.parametrize("openmp", [True, False])
def test_directives_guarded_by_ifdef_openmp_bind_their_loops(tmp_path, monkeypatch, openmp):
    """``#ifdef _OPENMP`` / ``#pragma omp parallel for`` / ``#endif`` before a loop: before, the
    ``#endif`` counted as the bound statement, the loop's condition was wrapped and GCC
    rejected it ("invalid controlling predicate")."""
    shutil.copy(PROGRAMS / "openmp_guarded.c", tmp_path / "openmp_guarded.c")
    flags = ["-fopenmp"] if openmp else []
    (result,) = instrument_features([tmp_path / "openmp_guarded.c"], tmp_path / "out", flags)
    assert result.skipped == ["openmp_guarded.c:24: statement under an atomic directive (its "
                              "form is fixed)"]  # fmt: skip
    binaries = _built_pair(tmp_path, "openmp_guarded.c", flags)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    output, original, record = _both_runs(binaries, "40", tmp_path)
    assert output == original == "381.0\n"  # 0+2+..+38, +1
    assert record["openmp_guarded.c:12:loop:for"] == 40
    assert record["openmp_guarded.c:18:loop:for"] == 40
    assert record["openmp_guarded.c:19:branch:then:if"] == 20


@pytest.mark.parametrize("openmp", [True, False])
def test_pragma_operator_directives_bind_their_loops(tmp_path, monkeypatch, openmp):
    """``_Pragma("omp parallel for")``, also from a macro: before, the loops' conditions were
    wrapped (GCC: "invalid controlling predicate") and the atomic update got a counter."""
    shutil.copy(PROGRAMS / "openmp_pragma_operator.c", tmp_path / "openmp_pragma_operator.c")
    flags = ["-fopenmp"] if openmp else []
    source = tmp_path / "openmp_pragma_operator.c"
    (result,) = instrument_features([source], tmp_path / "out", flags)
    assert result.skipped == ["openmp_pragma_operator.c:18: statement under an atomic directive "
                              "(its form is fixed)"]  # fmt: skip
    binaries = _built_pair(tmp_path, source.name, flags)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    output, original, record = _both_runs(binaries, "30", tmp_path)
    assert output == original == "15 29.0\n"
    assert record["openmp_pragma_operator.c:13:loop:for"] == 30
    assert record["openmp_pragma_operator.c:15:loop:for"] == 30
    assert record["openmp_pragma_operator.c:16:branch:then:if"] == 15
