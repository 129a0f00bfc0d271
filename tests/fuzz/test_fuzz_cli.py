"""No traceback reaches a user: mutated real files, random templates and garbage C source.

Every reader gets damaged copies of a real file (bytes flipped, the end cut off, lines lost or
doubled, random bytes, text or huge numbers spliced in; for a Score-P cubex, which is a tar, one
member is damaged) and the command line must either succeed with valid output (JSON parsed
strictly: no NaN or Infinity) or exit with status 2 and one stderr line naming the file. The same
holds for ``perfcast run --dry-run`` with random command templates and ``perfcast static`` on
garbage C source. Budgets: the profiles of ``tests/fuzz/conftest.py``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfcast import load, save
from perfcast.cli import main
from tests.io.test_caliper import json_split_from_cali

DATA = Path(__file__).resolve().parents[1] / "data"
EXTRAP = DATA / "extrap"
CALI_SERIES = DATA / "caliper" / "mpi_scaling_cali"
CUBE_SERIES = EXTRAP / "cubeset" / "single_parameter"

FUZZ = settings.get_profile("fuzz")
FUZZ_LONG = settings.get_profile("fuzz-long")

# Text spliced into files: numbers at and beyond the limits of a double, special values, other
# scripts' digits, characters that end or open structures, and control characters.
NASTY_TEXT = [
    "1e999",
    "-1e999",
    "9" * 400,
    "1e-400",
    "nan",
    "Infinity",
    "-0",
    "1_000",
    "\u0661\u0662",
    "\uff14\uff12",
    "18446744073709551616",
    "{",
    "}",
    "[",
    "]",
    '"',
    ",",
    ":",
    "(",
    ")",
    ";",
    "\n",
    "\r\n",
    "\x00",
    "\ufeff",
    "\u2028",
    "\ud7ff",
    "<script>",
    "{x}",
]


@dataclass(frozen=True)
class Mutation:
    """One change to a file's bytes; positions are fractions of the length at that moment."""

    kind: str
    where: float
    payload: bytes = b""
    width: int = 0


payloads = st.one_of(
    st.binary(min_size=1, max_size=8),
    st.text(min_size=1, max_size=6).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.sampled_from(NASTY_TEXT).map(lambda text: text.encode("utf-8", "surrogatepass")),
)
fractions = st.floats(min_value=0, max_value=1, allow_nan=False)
mutations = st.lists(
    st.one_of(
        st.builds(Mutation, st.just("flip"), fractions, width=st.integers(0, 7)),
        st.builds(Mutation, st.just("truncate"), fractions),
        st.builds(Mutation, st.sampled_from(["delete-line", "duplicate-line"]), fractions),
        st.builds(Mutation, st.just("splice"), fractions, payloads, st.integers(0, 4)),
    ),
    min_size=1,
    max_size=3,
)


def mutate(data: bytes, changes: list[Mutation]) -> bytes:
    """``data`` with ``changes`` applied in order."""
    for change in changes:
        at = min(int(change.where * len(data)), max(len(data) - 1, 0))
        if change.kind == "flip" and data:
            data = data[:at] + bytes([data[at] ^ (1 << change.width)]) + data[at + 1 :]
        elif change.kind == "truncate":
            data = data[:at]
        elif change.kind in ("delete-line", "duplicate-line"):
            lines = data.splitlines(keepends=True)
            if lines:
                index = min(int(change.where * len(lines)), len(lines) - 1)
                copies = 0 if change.kind == "delete-line" else 2
                lines[index : index + 1] = [lines[index]] * copies
                data = b"".join(lines)
        elif change.kind == "splice":
            data = data[:at] + change.payload + data[at + change.width :]
    return data


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=6)
    | st.sampled_from(NASTY_TEXT),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def _slots(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) of a parsed JSON document, depth first."""
    slots: list[tuple[Any, Any]] = []
    pending = [node]
    while pending:
        container = pending.pop()
        keys = container.keys() if isinstance(container, dict) else range(len(container))
        for key in keys:
            slots.append((container, key))
            if isinstance(container[key], dict | list):
                pending.append(container[key])
    return slots


def mutate_json(text: str, where: float, replacement: Any, delete: bool) -> str:
    """``text`` (one JSON document) with one value replaced by ``replacement`` or deleted."""
    document = json.loads(text)
    slots = _slots(document) if isinstance(document, dict | list) else []
    if not slots:
        return json.dumps(replacement)
    container, key = slots[min(int(where * len(slots)), len(slots) - 1)]
    if delete:
        del container[key]
    else:
        container[key] = replacement
    return json.dumps(document)


def mutate_json_lines(text: str, line: float, where: float, replacement: Any, delete: bool) -> str:
    """``text`` (JSON Lines) with one value of one line replaced or deleted."""
    lines = text.splitlines()
    index = min(int(line * len(lines)), len(lines) - 1)
    lines[index] = mutate_json(lines[index], where, replacement, delete)
    return "\n".join(lines) + "\n"


def mutate_tar(path: Path, member_choice: float, changes: list[Mutation]) -> None:
    """Damage one member of the tar archive ``path`` (a cubex) and write the archive back."""
    with tarfile.open(path) as archive:
        members = [(m, archive.extractfile(m)) for m in archive.getmembers() if m.isfile()]
        contents = [(m, f.read() if f else b"") for m, f in members]
    index = min(int(member_choice * len(contents)), len(contents) - 1)
    with tarfile.open(path, "w") as archive:
        for number, (member, content) in enumerate(contents):
            if number == index:
                content = mutate(content, changes)
            member.size = len(content)
            archive.addfile(member, io.BytesIO(content))


def _reject_constant(name: str) -> None:
    raise AssertionError(f"output JSON holds {name}, which RFC 8259 does not allow")


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """Run the command line in-process; its exit status, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def assert_clean_outcome(
    status: int, out: str, err: str, names: str, output: Path | None = None
) -> None:
    """Exit 0 with strictly valid JSON (on stdout or in ``output``), or exit 2 with one stderr
    line, perfcast's error, naming ``names``."""
    if status == 0:
        text = output.read_text() if output is not None else out
        json.loads(text, parse_constant=_reject_constant)
        return
    assert status == 2, f"exit status {status}; stderr: {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {err!r}"
    assert lines[0].startswith("perfcast: error: "), err
    assert names in lines[0], f"{names!r} not named in {lines[0]!r}"


@dataclass(frozen=True)
class Target:
    """A reader's seed: ``copy(into)`` puts the seed under ``into`` and returns the path to give
    the command line and the file to damage; ``tar`` says the file is a tar archive, ``json``
    that it is one JSON ``"document"`` or JSON ``"lines"`` (then values are also replaced)."""

    name: str
    copy: Callable[[Path], tuple[Path, Path]]
    tar: bool = False
    json: str | None = None


# Seeds written by the tests themselves, built on first use and removed at exit.
_SEEDS = tempfile.TemporaryDirectory(prefix="perfcast-fuzz-seeds-")


@functools.cache
def own_format_seed(name: str) -> Path:
    """perfcast's own CSV or JSON (``name``), written by :func:`perfcast.save` from a small
    experiment."""
    path = Path(_SEEDS.name) / name
    save(load(EXTRAP / "text" / "one_parameter_1.txt"), path)
    return path


@functools.cache
def json_split_seed() -> Path:
    """The Caliper series in json-split layout (cali-query's ``-O json-split``)."""
    folder = Path(_SEEDS.name) / "json_split"
    folder.mkdir()
    for cali in sorted(CALI_SERIES.glob("*.cali")):
        json_split_from_cali(cali, folder / f"{cali.stem}.json")
    return folder


def _single(source: Callable[[], Path]) -> Callable[[Path], tuple[Path, Path]]:
    def copy(into: Path) -> tuple[Path, Path]:
        seed = source()
        target = into / seed.name
        shutil.copyfile(seed, target)
        return target, target

    return copy


def _series(source: Callable[[], Path], member: str) -> Callable[[Path], tuple[Path, Path]]:
    def copy(into: Path) -> tuple[Path, Path]:
        seed = source()
        target = into / seed.name
        shutil.copytree(seed, target)
        return target, target / member

    return copy


def _data(path: Path) -> Callable[[], Path]:
    return lambda: path


TARGETS = [
    Target("extrap-text", _single(_data(EXTRAP / "text" / "one_parameter_1.txt"))),
    Target("extrap-text-2p", _single(_data(EXTRAP / "text" / "two_parameter_1.txt"))),
    Target("extrap-json", _single(_data(EXTRAP / "json" / "input_1.JSON")), json="document"),
    Target(
        "extrap-json-new", _single(_data(EXTRAP / "json" / "new" / "input1.json")), json="document"
    ),
    Target("jsonlines", _single(_data(EXTRAP / "jsonlines" / "input_1.jsonl")), json="lines"),
    Target("talpas", _single(_data(EXTRAP / "talpas" / "talpas_1.txt"))),
    Target("caliper-cali", _series(_data(CALI_SERIES), "64_cores.cali")),
    Target("caliper-json-split", _series(json_split_seed, "27_cores.json"), json="document"),
    Target("cubex", _series(_data(CUBE_SERIES), "mm.x100y1z1.r1/profile.cubex"), tar=True),
    Target("perfcast-csv", _single(lambda: own_format_seed("seed.csv"))),
    Target(
        "perfcast-json", _single(lambda: own_format_seed("seed.perfcast.json")), json="document"
    ),
]


def check_damaged_file(target: Target, data: st.DataObject) -> None:
    """Damage ``target``'s seed as ``data`` draws and check what ``perfcast model`` does."""
    changes = data.draw(mutations, label="mutations")
    with tempfile.TemporaryDirectory(prefix="perfcast-fuzz-") as folder:
        argument, damaged = target.copy(Path(folder))
        if target.tar and data.draw(st.booleans(), label="damage a member"):
            mutate_tar(damaged, data.draw(fractions, label="member"), changes)
        elif target.json and data.draw(st.booleans(), label="replace a value"):
            where = data.draw(fractions, label="value")
            replacement = data.draw(json_values, label="replacement")
            delete = data.draw(st.booleans(), label="delete instead")
            text = damaged.read_text()
            if target.json == "lines":
                line = data.draw(fractions, label="line")
                damaged.write_text(mutate_json_lines(text, line, where, replacement, delete))
            else:
                damaged.write_text(mutate_json(text, where, replacement, delete))
        else:
            damaged.write_bytes(mutate(damaged.read_bytes(), changes))
        status, out, err = run_cli(["model", str(argument), "--format", "json"])
        assert_clean_outcome(status, out, err, names=str(argument))


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
@FUZZ
@given(data=st.data())
def test_damaged_files(target: Target, data: st.DataObject) -> None:
    check_damaged_file(target, data)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
@FUZZ_LONG
@given(data=st.data())
def test_damaged_files_long(target: Target, data: st.DataObject) -> None:
    check_damaged_file(target, data)


# Characters of Python's format mini-language, so that random templates often parse.
TEMPLATE_ALPHABET = st.sampled_from(list("{}x:!rsa<>^=+- #0123456789.,_bcdeEfFgGnosxX%"))
templates = st.one_of(
    st.text(TEMPLATE_ALPHABET, max_size=16),
    st.text(max_size=8),
    st.integers(0, 10**12).map(lambda width: f"{{x:{width}d}}"),
    st.integers(0, 10**12).map(lambda precision: f"{{x:.{precision}f}}"),
    st.text(TEMPLATE_ALPHABET, max_size=10).map(lambda spec: f"{{x:{spec}}}"),
)
values = st.one_of(
    st.sampled_from(["1,2", "1..4", "1..64 *2", "0..1e9", "1..300", "1e308..1e309", "2..1 *2"]),
    st.text(st.sampled_from(list("0123456789.e+-*, ")), min_size=1, max_size=12),
)


def check_run_template(template: str, parameter_values: str, repetitions: int) -> None:
    """``perfcast run --dry-run`` with a random command template and parameter values."""
    with tempfile.TemporaryDirectory(prefix="perfcast-fuzz-") as folder:
        argv = ["run", "--dry-run", "--param", f"x={parameter_values}"]
        argv += ["--reps", str(repetitions), "--workdir", folder, "-o", f"{folder}/out.csv"]
        status, out, err = run_cli([*argv, "--", "echo", template])
    if status == 0:
        assert out.splitlines()[0].endswith("runs to take, order drawn when run (no seed):")
        return
    assert_clean_outcome(status, out, err, names="command line")


@FUZZ
@given(template=templates, parameter_values=values, repetitions=st.sampled_from([1, 3, 10**9]))
def test_run_templates(template: str, parameter_values: str, repetitions: int) -> None:
    check_run_template(template, parameter_values, repetitions)


@pytest.mark.slow
@FUZZ_LONG
@given(template=templates, parameter_values=values, repetitions=st.sampled_from([1, 3, 10**9]))
def test_run_templates_long(template: str, parameter_values: str, repetitions: int) -> None:
    check_run_template(template, parameter_values, repetitions)


C_TOKENS = [
    "int",
    "n",
    "for",
    "(",
    ")",
    "{",
    "}",
    ";",
    "=",
    "<",
    "++",
    "i",
    "0",
    "#define",
    "#include",
    "\n",
    "void",
    "f",
    "return",
    "*",
    "[",
    "]",
    "while",
    "if",
    "struct",
    "->",
    ".",
    "9999999999999999999999",
    "'",
    '"',
    "/*",
    "//",
    "\\",
    "\x00",
    "goto",
]
C_SEED = DATA.parent / "static" / "programs" / "dgemm.c"
garbage_sources = st.one_of(
    st.lists(st.sampled_from(C_TOKENS) | st.text(max_size=3), max_size=40).map(" ".join),
    mutations.map(lambda changes: mutate(C_SEED.read_bytes(), changes).decode("latin-1")),
)


def check_static(source: str) -> None:
    """``perfcast static`` on a C source that is probably not C."""
    with tempfile.TemporaryDirectory(prefix="perfcast-fuzz-") as folder:
        path = Path(folder) / "garbage.c"
        path.write_bytes(source.encode("utf-8", "surrogatepass"))
        status, out, err = run_cli(["static", str(path), "--param", "n", "--format", "json"])
    if status == 0:
        json.loads(out, parse_constant=_reject_constant)
        return
    assert_clean_outcome(status, out, err, names=str(path))


@FUZZ
@given(source=garbage_sources)
def test_static_on_garbage_source(source: str) -> None:
    check_static(source)


@pytest.mark.slow
@FUZZ_LONG
@given(source=garbage_sources)
def test_static_on_garbage_source_long(source: str) -> None:
    check_static(source)
