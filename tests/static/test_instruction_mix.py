"""Instruction-mix models (Mira) against the categorizer's definition and valgrind's counts."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
import sympy
from capstone import CS_ARCH_X86, CS_MODE_64, Cs

from perfcast.core.errors import InputError
from perfcast.core.function import Model
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import (
    CallgrindProfile,
    measured_experiment,
    measured_mix,
    read_callgrind,
)
from perfcast.static.control_flow import basic_blocks, natural_loops, reachable
from perfcast.static.instruction_mix import (
    COUNT_KEYS,
    FunctionMix,
    InstructionMix,
    instruction_mix,
)
from perfcast.static.mix_output import expression_to_model, mix_models, mix_to_json, mix_to_python
from perfcast.static.report import StaticKernel, StaticReport
from perfcast.static.x86_categories import category_of, memory_access

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    CG,
    DGEMM,
    STREAM,
    build,
    hand_report,
    report_for,
    run_callgrind,
)

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed"
)


# --- categorizer --------------------------------------------------------------------------------

KNOWN = [
    # bytes, mnemonic capstone must print, category, reads, writes
    ("f20f58c1", "addsd", "fp_scalar", False, False),
    ("f20f5800", "addsd", "fp_scalar", True, False),  # memory operand: still one FP instruction
    ("660f58c1", "addpd", "fp_vector", False, False),
    ("c5fd59c1", "vmulpd", "fp_vector", False, False),
    ("c4e2f1b9c2", "vfmadd231sd", "fp_scalar", False, False),
    ("f30f5ec1", "divss", "fp_scalar", False, False),
    ("660f2ec1", "ucomisd", "fp_scalar", False, False),
    ("f2480f2ac0", "cvtsi2sd", "fp_scalar", False, False),
    ("dec1", "faddp", "fp_scalar", False, False),
    ("f20f1000", "movsd", "data_movement", True, False),
    ("0f28c1", "movaps", "data_movement", False, False),
    ("488907", "mov", "data_movement", False, True),
    ("66480f6ec0", "movq", "data_movement", False, False),
    ("4898", "cdqe", "data_movement", False, False),
    ("480f4fc3", "cmovg", "data_movement", False, False),
    ("d9c9", "fxch", "data_movement", False, False),
    ("4801d8", "add", "int_arith", False, False),
    ("48830001", "add", "int_arith", True, True),
    ("488d0418", "lea", "int_arith", False, False),  # memory-shaped operand, no access
    ("660fefc0", "pxor", "int_arith", False, False),
    ("0f94c0", "sete", "int_arith", False, False),
    ("c3", "ret", "control", False, False),
    ("e800000000", "call", "control", False, False),
    ("75fe", "jne", "control", False, False),
    ("ffe0", "jmp", "control", False, False),
    ("0f1f00", "nop", "other", False, False),
    ("f30f1efa", "endbr64", "other", False, False),
    ("c5f877", "vzeroupper", "other", False, False),
]


@pytest.mark.parametrize(("code", "mnemonic", "category", "reads", "writes"), KNOWN)
def test_categorizer_on_known_encodings(code, mnemonic, category, reads, writes):
    disassembler = Cs(CS_ARCH_X86, CS_MODE_64)
    disassembler.detail = True
    (insn,) = disassembler.disasm(bytes.fromhex(code), 0x1000)
    assert insn.mnemonic == mnemonic
    assert category_of(insn.mnemonic) == category
    assert memory_access(insn) == (reads, writes)


@pytest.mark.parametrize(
    ("mnemonic", "category"),
    [
        ("vaddps", "fp_vector"),
        ("cvttsd2si", "fp_scalar"),
        ("cvtdq2pd", "fp_vector"),
        ("cvtpd2dq", "fp_vector"),
        ("xorpd", "fp_vector"),
        ("sqrtsd", "fp_scalar"),
        ("unpcklpd", "data_movement"),
        ("vbroadcastsd", "data_movement"),
        ("rep stosq", "data_movement"),
        ("push", "data_movement"),
        ("imul", "int_arith"),
        ("vpaddd", "int_arith"),
        ("sar", "int_arith"),
        ("test", "int_arith"),
        ("cpuid", "other"),
    ],
)
def test_categorizer_on_mnemonics(mnemonic, category):
    assert category_of(mnemonic) == category


# --- binary reading and machine loops -----------------------------------------------------------


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    directory = tmp_path_factory.mktemp("mix")
    built = {}
    for program in (STREAM, DGEMM, CG):
        for level in ("-O0", "-O1"):
            built[program.name, level] = build(program, directory, level)
    return directory, built


def test_line_table_puts_the_multiply_on_the_innermost_loop_line(binaries):
    _, built = binaries
    main = read_binary(built["dgemm", "-O1"]).functions["main"]
    multiplies = [i for i in main.instructions if i.mnemonic == "mulsd"]
    assert [(Path(i.file).name, i.line) for i in multiplies] == [("dgemm.c", 23)]
    assert multiplies[0].reads and multiplies[0].category == "fp_scalar"


def test_functions_without_line_information_are_left_out(binaries):
    _, built = binaries
    functions = read_binary(built["cg", "-O1"]).functions
    assert set(functions) == {"matvec", "dot", "axpy", "xpay", "cg_solve", "main"}
    assert "_start" not in functions


def test_a_call_of_exit_ends_its_block(binaries):
    _, built = binaries
    for level in ("-O0", "-O1"):
        main = read_binary(built["stream", level]).functions["main"]
        (stop,) = [i for i in main.instructions if i.kind == "noreturn"]
        assert stop.mnemonic == "call" and stop.line == 9  # exit(2) after the usage message
        blocks = basic_blocks(main)
        (block,) = [b for b in blocks if b.instructions[-1] is stop]
        assert block.successors == []


def test_machine_loops_of_the_dgemm_nest(binaries):
    _, built = binaries
    for level, exits_at_header in (("-O1", False), ("-O0", True)):
        main = read_binary(built["dgemm", level]).functions["main"]
        loops = natural_loops(basic_blocks(main))
        assert len(loops) == 4  # initialization loop and the i, j, k nest
        depths = sorted(sum(other.blocks >= loop.blocks for other in loops) for loop in loops)
        assert depths == [1, 1, 2, 3]
        # -O0 tests the condition at the loop top; -O1 rotates loops into do-while form
        assert all(loop.exits_at_header == exits_at_header for loop in loops)


def test_not_elf_and_no_debug_information_are_input_errors(tmp_path, binaries):
    text = tmp_path / "notes.txt"
    text.write_text("not a binary")
    with pytest.raises(InputError, match="not an ELF file") as error:
        read_binary(text)
    assert str(text) in str(error.value)
    with pytest.raises(InputError, match="cannot open binary"):
        read_binary(tmp_path / "missing")
    stripped = tmp_path / "nodebug"
    import subprocess

    subprocess.run(["gcc", "-O1", "-o", str(stripped), str(DGEMM.source)], check=True)
    with pytest.raises(InputError, match="build with -g"):
        read_binary(stripped)


def test_inlined_calls_carry_their_call_sites(tmp_path):
    binary = read_binary(build(CG, tmp_path, "-O2"))
    frames = {
        (frame.callee, frame.call_line)
        for insn in binary.functions["cg_solve"].instructions
        for frame in insn.inlined
    }
    assert {("matvec", 44), ("dot", 45), ("axpy", 46), ("axpy", 47), ("xpay", 49)} <= frames


# --- symbolic counts ----------------------------------------------------------------------------


def test_dgemm_model_is_the_polynomial_of_its_loop_counts(binaries):
    _, built = binaries
    mix = instruction_mix(read_binary(built["dgemm", "-O1"]), report_for(DGEMM), ("n",))
    counts = mix.functions["main"].counts
    n = sympy.Symbol("n")
    # innermost body: movsd load, mulsd with a load, addsd -> 2 scalar FP per iteration
    assert sympy.Poly(counts["fp_scalar"], n).coeffs()[0] == 2
    assert sympy.degree(counts["total"], n) == 3
    assert counts["total"] == sum(counts[c] for c in COUNT_KEYS[:6])


def test_line_attribution_overcounts_loop_set_up(binaries):
    _, built = binaries
    binary = read_binary(built["stream", "-O1"])
    cfg = instruction_mix(binary, report_for(STREAM), STREAM.parameters).functions["main"]
    line = instruction_mix(binary, report_for(STREAM), STREAM.parameters, "line")
    values = {"n": 1000, "ntimes": 4}
    # the index initialization of each inner loop sits on the `for` line, before the machine loop
    assert line.functions["main"].evaluate(values)["total"] > 1.1 * cfg.evaluate(values)["total"]


def test_undefined_counts_make_the_function_undefined(binaries):
    _, built = binaries
    binary = read_binary(built["cg", "-O1"])
    kernels = list(report_for(CG).kernels)
    unknown = [
        dataclasses.replace(k, count=None, undef_reason="data-dependent bound")
        if k.kind == "loop" and k.function == "dot"
        else k
        for k in kernels
    ]
    mix = instruction_mix(binary, StaticReport(unknown, diagnostics=[]), CG.parameters)
    assert mix.functions["dot"].counts is None
    assert "data-dependent bound" in mix.functions["dot"].undef_reason
    assert mix.functions["matvec"].counts is not None

    without_inner = [k for k in kernels if not (k.function == "matvec" and k.line == 10)]
    mix = instruction_mix(binary, StaticReport(without_inner, diagnostics=[]), CG.parameters)
    assert "machine loop" in mix.functions["matvec"].undef_reason

    no_function = [k for k in kernels if k.name != "xpay"]
    mix = instruction_mix(binary, StaticReport(no_function, diagnostics=[]), CG.parameters)
    assert "xpay" in mix.unmodeled and "xpay" not in mix.functions


@needs_valgrind
@pytest.mark.slow
def test_inlined_loops_count_in_their_caller_and_stand_alone_copies_are_undefined(tmp_path):
    path = build(CG, tmp_path, "-O2")
    binary = read_binary(path)
    mix = instruction_mix(binary, report_for(CG), CG.parameters)
    for name in ("matvec", "dot", "axpy", "xpay"):
        assert "inlined at every call site" in mix.functions[name].undef_reason
    n, iters = sympy.symbols("n iters")
    # matvec's inner loop, inlined once per iteration: two scalar FP operations per element
    assert mix.functions["cg_solve"].counts["fp_scalar"].coeff(iters * n**2) == 2
    arguments = (40, 5)
    measured = measured_mix(binary, read_callgrind(run_callgrind(path, arguments, tmp_path)))
    predicted = mix.functions["cg_solve"].evaluate(dict(zip(CG.parameters, arguments, strict=True)))
    assert measured["matvec"]["total"] == 0
    assert predicted["total"] == pytest.approx(measured["cg_solve"]["total"], rel=0.01)
    assert predicted["fp_scalar"] == measured["cg_solve"]["fp_scalar"]


VECTORIZED = """
void add(double *a, const double *b, long n) {
  for (long i = 0; i < n; i++)
    a[i] += b[i];
}

int main(void) { return 0; }
void (*volatile kept)(double *, const double *, long) = add; /* reachable, as if called */
"""


def test_a_vectorized_loop_with_a_remainder_loop_is_noted(tmp_path):
    source = tmp_path / "add.c"
    source.write_text(VECTORIZED)
    import subprocess

    binary_path = tmp_path / "add"
    subprocess.run(["gcc", "-g", "-O3", "-o", str(binary_path), str(source)], check=True)
    kernels = [
        _kernel("add", "function", str(source), 2, 5, 0, "add", sympy.Integer(1)),
        _kernel("add:loop@3", "loop", str(source), 3, 4, 1, "add", sympy.Symbol("n")),
    ]
    binary = read_binary(binary_path)
    mix = instruction_mix(binary, StaticReport(kernels, diagnostics=[]), ("n",))
    notes = mix.functions["add"].notes
    assert "implemented by 2 machine loops" in notes[0]
    # the scalar copy behind gcc's overlap check (`cmp rdi, rcx; jne`) runs no pass for arrays
    # that do not overlap (static35), and the short-trip path around the vector loop is still
    # counted in every call: the flow check says so (a note, the build's values not being given)
    assert "run-time overlap check" in notes[1]
    assert len(notes) == 3 and "inconsistent with the machine control flow at n=7" in notes[2]
    # alignment padding after a return is unreachable: it neither runs nor forms loops
    blocks = basic_blocks(binary.functions["add"])
    after_return = [
        b.index
        for b in blocks[1:]
        if blocks[b.index - 1].instructions[-1].kind == "return"
        and b.instructions[0].category == "other"
    ]
    assert after_return and not set(after_return) & reachable(blocks)


def test_a_binary_from_other_sources_is_an_input_error(binaries):
    _, built = binaries
    with pytest.raises(InputError, match="no function of the binary has line information") as error:
        instruction_mix(read_binary(built["dgemm", "-O1"]), report_for(CG), CG.parameters)
    assert error.value.source == str(built["dgemm", "-O1"])


def test_hand_derived_kernels_agree_with_the_clang_analysis(binaries):
    """The clang analysis' counts give the same mix as the counts derived by hand."""
    from perfcast.static import analyze

    _, built = binaries
    for program in (STREAM, DGEMM, CG):
        real = analyze([program.source], program.parameters)
        binary = read_binary(built[program.name, "-O1"])
        ours = instruction_mix(binary, real, program.parameters)
        hand = instruction_mix(binary, hand_report(program), program.parameters)
        assert {n: f.counts for n, f in ours.functions.items()} == {
            n: f.counts for n, f in hand.functions.items()
        }


def _kernel(name, kind, file, line, end_line, depth, function, count):
    return StaticKernel(
        name=name, kind=kind, file=file, line=line, end_line=end_line, depth=depth,
        function=function, parameters=("n",), count=count, undef_reason=None,
    )  # fmt: skip


def test_expression_to_model_keeps_polynomial_and_log_forms():
    n, p = sympy.symbols("n p")
    model = expression_to_model(3 * n**2 * p + 5 * sympy.log(p, 2) * n + 7, "k", "m", ("n", "p"))
    assert model is not None
    assert model.evaluate({"n": [4.0], "p": [8.0]})[0] == pytest.approx(3 * 16 * 8 + 5 * 3 * 4 + 7)
    assert expression_to_model(sympy.floor(n / 2), "k", "m", ("n",)) is None
    assert expression_to_model(n * sympy.Symbol("q"), "k", "m", ("n",)) is None


def test_piecewise_and_floor_counts_evaluate_in_the_python_module(tmp_path):
    n, m = sympy.Symbol("n"), sympy.Symbol("m")
    count = sympy.Piecewise((3 * sympy.floor(n / 2), n >= 2), (0, True)) + m
    counts = dict.fromkeys(COUNT_KEYS, sympy.Integer(0)) | {"fp_scalar": count, "total": count}
    mix = InstructionMix("a.out", ("n", "m"), {"f": FunctionMix("f", counts, None, 4)}, {}, "cfg")
    namespace: dict = {}
    exec(compile(mix_to_python(mix), "mix.py", "exec"), namespace)
    assert namespace["MODELS"]["f"](n=7, m=5)["fp_scalar"] == 3 * 3 + 5
    assert namespace["f"](1, 5)["fp_scalar"] == 5
    data = mix_to_json(mix)
    assert data["functions"][0]["counts"]["fp_scalar"]["model"] is None
    assert (
        sympy.sympify(data["functions"][0]["counts"]["fp_scalar"]["expression"]).subs({n: 7, m: 5})
        == 14
    )


def test_python_module_and_json_agree_with_the_expressions(binaries, tmp_path):
    _, built = binaries
    mix = instruction_mix(read_binary(built["cg", "-O1"]), report_for(CG), CG.parameters)
    path = tmp_path / "cg_mix.py"
    path.write_text(mix_to_python(mix))
    spec = importlib.util.spec_from_file_location("cg_mix", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values = {"n": 37, "iters": 5}
    for name, function in mix.functions.items():
        assert module.MODELS[name](**values) == pytest.approx(function.evaluate(values))
    data = json.loads(json.dumps(mix_to_json(mix)))
    matvec = next(f for f in data["functions"] if f["function"] == "matvec")
    model = Model.from_dict(matvec["counts"]["fp_scalar"]["model"])
    assert model.metric == "instructions.fp_scalar"
    assert model.evaluate({"n": [37], "iters": [5]})[0] == pytest.approx(2 * 5 * 37**2)
    assert (
        sympy.sympify(matvec["counts"]["total"]["expression"])
        == mix.functions["matvec"].counts["total"]
    )
    assert len(mix_models(mix)) == len(mix.functions) * len(COUNT_KEYS)


# --- callgrind reading --------------------------------------------------------------------------

CALLGRIND = """# callgrind format
version: 1
positions: instr line
events: Ir
summary: 23

ob=(1) /bin/prog
fl=(1) prog.c
fn=(1) main
0x1000 3 1
+4 * 2
+2 +1 5
cfn=(2) helper
calls=5 0x2000 10
* * 100
* * 5
-6 -1 3
fn=(2)
0x2000 10 7
"""


def test_callgrind_positions_names_and_call_costs(tmp_path):
    path = tmp_path / "callgrind.out"
    path.write_text(CALLGRIND)
    profile = read_callgrind(path)
    assert profile.counts == {
        ("/bin/prog", 0x1000): 4,
        ("/bin/prog", 0x1004): 2,
        ("/bin/prog", 0x1006): 10,
        ("/bin/prog", 0x2000): 7,
    }
    assert profile.total == profile.declared_total == 23


def test_callgrind_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.out"
    path.write_text("positions: line\nevents: Ir\n1 2\n")
    with pytest.raises(InputError, match="--dump-instr=yes") as error:
        read_callgrind(path)
    assert error.value.line == 1
    path.write_text("positions: instr\nevents: Ir\nfn=(3)\n")
    with pytest.raises(InputError, match=r"name \(3\) used before") as error:
        read_callgrind(path)
    assert (error.value.source, error.value.line) == (str(path), 3)
    path.write_text("positions: instr\nevents: Ir\n0x10 x\n")
    with pytest.raises(InputError, match="bad cost"):
        read_callgrind(path)


@needs_valgrind
def test_measured_mix_lines_up_a_shifted_load_address(binaries):
    directory, built = binaries
    path = built["dgemm", "-O1"]
    binary = read_binary(path)
    profile = read_callgrind(run_callgrind(path, (12,), directory))
    shifted = CallgrindProfile(
        {
            (obj, address + 0x555555554000 if obj == str(path) else address): count
            for (obj, address), count in profile.counts.items()
        },
        profile.total,
        profile.declared_total,
    )
    measured = measured_mix(binary, profile)
    # k loop: mulsd, addsd; initialization: cvtsi2sd, divsd
    assert measured["main"]["fp_scalar"] == 2 * 12**3 + 2 * 12**2
    assert measured_mix(binary, shifted) == measured


@needs_valgrind
def test_measured_counts_become_an_experiment_the_static_model_matches(binaries):
    directory, built = binaries
    path = built["cg", "-O1"]
    binary = read_binary(path)
    runs = {
        size: read_callgrind(run_callgrind(path, size, directory)) for size in [(8, 2), (12, 3)]
    }
    experiment = measured_experiment(binary, runs, CG.parameters)
    frame = experiment.frame
    matvec = frame[(frame.kernel == "matvec") & (frame.metric == "instructions.fp_scalar")]
    assert sorted(matvec.value) == [2 * 2 * 8**2, 2 * 3 * 12**2]
    mix = instruction_mix(binary, report_for(CG), CG.parameters)
    (model,) = [
        m for m in mix_models(mix) if m.kernel == "matvec" and m.metric == "instructions.fp_scalar"
    ]
    points = matvec[list(CG.parameters)].to_numpy(dtype=float)
    assert list(model.evaluate(points)) == list(matvec.value)


# --- against valgrind ---------------------------------------------------------------------------


def _errors(binary_path, program, arguments, directory, level="-O1"):
    binary = read_binary(binary_path)
    mix = instruction_mix(binary, report_for(program), program.parameters)
    measured = measured_mix(
        binary, read_callgrind(run_callgrind(binary_path, arguments, directory))
    )
    values = dict(zip(program.parameters, arguments, strict=True))
    errors = {}
    for name, function in mix.functions.items():
        predicted = function.evaluate(values)
        for key in COUNT_KEYS:
            if measured[name][key] == 0:
                assert predicted[key] == 0, (name, key)
                continue
            errors[name, key] = abs(predicted[key] / measured[name][key] - 1)
    return errors


@needs_valgrind
def test_leaf_functions_match_valgrind_exactly(binaries):
    directory, built = binaries
    errors = _errors(built["cg", "-O1"], CG, (20, 3), directory)
    for name in ("matvec", "axpy", "xpay"):
        assert all(errors[name, key] == 0 for key in COUNT_KEYS if (name, key) in errors), name


@needs_valgrind
@pytest.mark.slow
@pytest.mark.parametrize("level", ["-O0", "-O1"])
@pytest.mark.parametrize(("program", "tolerance"), [(STREAM, 0.01), (DGEMM, 0.01), (CG, 0.05)])
def test_models_within_target_of_valgrind_at_three_sizes(binaries, program, tolerance, level):
    directory, built = binaries
    for arguments in program.sizes:
        errors = _errors(built[program.name, level], program, arguments, directory)
        worst = max(errors, key=errors.get)
        assert errors[worst] <= tolerance, (arguments, worst, errors[worst])


# --- command line -------------------------------------------------------------------------------


def _parse(argv):
    from perfcast.commands import static

    parser = argparse.ArgumentParser()
    static.add_parser(parser.add_subparsers())
    return parser.parse_args(argv)


def test_command_writes_json_and_python(binaries, tmp_path, capsys):
    _, built = binaries
    report = tmp_path / "report.json"
    report.write_text(
        json.dumps(
            {
                "kernels": [
                    {**dataclasses.asdict(k), "count": None, "expression": sympy.sstr(k.count)}
                    for k in report_for(DGEMM).kernels
                ]
            }
        )
    )
    argv = [
        "static",
        "--binary",
        str(built["dgemm", "-O1"]),
        "--report",
        str(report),
        "--param",
        "n",
    ]
    out_json, out_py = tmp_path / "mix.json", tmp_path / "mix.py"
    args = _parse([*argv, "--mix-json", str(out_json), "--mix-python", str(out_py)])
    assert args.run(args) == 0
    printed = capsys.readouterr().out
    assert "main" in printed and "fp_scalar" in printed
    data = json.loads(out_json.read_text())
    assert data["parameters"] == ["n"]
    assert "def main(n):" in out_py.read_text()


def test_command_rejects_a_malformed_report(binaries, tmp_path):
    _, built = binaries
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"kernels": [{"name": "main", "kind": "function"}]}))
    args = _parse(["static", "--binary", str(built["dgemm", "-O1"]), "--report", str(report)])
    with pytest.raises(InputError, match="kernel 1: malformed") as error:
        args.run(args)
    assert error.value.source == str(report)


def test_perfcast_static_binary_exit_status_and_message(tmp_path, capsys):
    from perfcast import cli

    missing = tmp_path / "nothing"
    assert cli.main(["static", "--binary", str(missing), "--report", str(missing)]) == 2
    assert "cannot read static report" in capsys.readouterr().err
