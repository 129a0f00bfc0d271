"""Library errors speak library: what went wrong, where, the offending value and a reason code.

Advice about command-line flags is the command line's job (``perfcast.commands.advice``); no
error raised below ``perfcast.cli`` and ``perfcast.commands`` names a flag.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

import perfcast
from perfcast.analyze.bugs import parse_expectation
from perfcast.analyze.diagnosis import diagnose
from perfcast.analyze.optimize import parse_constraint
from perfcast.analyze.points import scale_parameter
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.io import output_format_for
from perfcast.io.cube import read_cube
from perfcast.io.importers import detect_profile_format
from perfcast.io.patterns import infer_name_values
from perfcast.io.profile_set import parse_param_options
from tests.analyze.synthetic import experiment, model

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _two_metrics() -> Experiment:
    frame = pd.DataFrame(
        {"kernel": ["a"] * 4, "metric": ["flops", "flops", "bytes", "bytes"], "p": [1, 2] * 2,
         "value": [1.0, 2.0, 3.0, 4.0]}
    )  # fmt: skip
    return Experiment.from_frame(frame, source="two.csv")


def _diagnose_models_of_two_metrics() -> None:
    models = [model("k", ["p"], 1.0), Model("k", "bytes", ("p",), 1.0, ())]
    diagnose(experiment({"k": lambda p: p}, {"p": [1, 2, 4]}), models)


CASES: dict[str, tuple[Callable[[], object], str, object]] = {
    "ambiguous metric": (lambda: _two_metrics().default_metric(), "ambiguous-metric",
                         ["flops", "bytes"]),
    "mixed metrics": (_diagnose_models_of_two_metrics, "mixed-metrics", ["bytes", "time"]),
    "no scale": (
        lambda: scale_parameter(experiment({"k": lambda n, opt: n}, {"n": [1, 2],
                                                                      "opt": [1, 2]})),
        "no-scale-parameter", ("n", "opt"),
    ),
    "output format": (lambda: output_format_for("out/results.xlsx"), "unknown-output-format",
                      "results.xlsx"),
    "run name": (lambda: infer_name_values("scorep-a"), "unparsed-run-name", "scorep-a"),
    "cube keys": (lambda: read_cube("none", params={"mpi.world.size": "p"}),
                  "cube-has-no-metadata", {"mpi.world.size": "p"}),
    "parameter key": (lambda: parse_param_options(["=p"]), "bad-parameter-key", "=p"),
    "parameter name twice": (lambda: parse_param_options(["a=p", "b=p"]),
                             "duplicate-parameter-name", "p"),
    "constraint": (lambda: parse_constraint("q < 3", ["p"]), "bad-constraint", "q < 3"),
    "expectation": (lambda: parse_expectation("p", ["p"]), "bad-expectation", "p"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_library_errors_carry_reason_and_value_and_name_no_flag(case):
    call, reason, value = CASES[case]
    with pytest.raises(InputError) as caught:
        call()
    error = caught.value
    assert (error.reason, error.value) == (reason, value)
    assert not FLAG.search(str(error)), str(error)


def test_an_unrecognized_file_names_the_path(tmp_path):
    with pytest.raises(InputError) as caught:
        detect_profile_format(tmp_path)
    assert caught.value.source == str(tmp_path)
    assert (caught.value.reason, caught.value.value) == ("unknown-profile-format", str(tmp_path))
    assert not FLAG.search(str(caught.value))


def test_input_error_keeps_its_positional_signature():
    error = InputError("bad", "f.csv", 3)
    assert str(error) == "f.csv:3: bad"
    assert (error.reason, error.value) == (None, None)


LIBRARY = Path(perfcast.__file__).parent
COMMAND_LINE = (LIBRARY / "cli.py", LIBRARY / "commands")
# Options of other programs a library message may name: how to run valgrind so that it writes
# a callgrind file perfcast reads.
OTHER_PROGRAMS_OPTIONS = {"--dump-instr", "--collect-jumps"}


def _error_texts(path: Path) -> Iterator[tuple[int, str]]:
    """Every string constant inside a ``raise`` or an ``InputError``/``WorkError`` call."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        raising = isinstance(node, ast.Raise) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("InputError", "WorkError")
        )
        if raising:
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield part.lineno, part.value


def test_no_library_error_names_a_command_line_flag():
    offenders = {
        f"{path.relative_to(LIBRARY)}:{line}: {flag}"
        for path in sorted(LIBRARY.rglob("*.py"))
        if not any(path == c or c in path.parents for c in COMMAND_LINE)
        for line, text in _error_texts(path)
        for flag in FLAG.findall(text)
        if flag not in OTHER_PROGRAMS_OPTIONS
    }
    assert sorted(offenders) == []
