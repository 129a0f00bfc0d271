"""Which conditional branches choose between two copies of one source loop.

Each case is a small control-flow graph written as machine code: line 1 is the source loop's
header (its test and induction update), line 2 its body, line 3 code after it. The shapes are
those compilers emit (see the module documentation of :mod:`perfcast.static.alternatives`):
versions behind an alias check are alternatives; a zero-trip guard, a rotated loop's header copy,
a remainder after an unrolled loop, a scalar loop both paths share, and a branch inside the loop
are not.
"""

from __future__ import annotations

from collections import defaultdict

from perfcast.static.alternatives import alternatives
from perfcast.static.binary import BinaryFunction, BinaryInstruction
from perfcast.static.control_flow import Block, Loop, basic_blocks, natural_loops

_KINDS = {"jmp": "jump", "ret": "return", "call": "call"}


def _function(program: list[tuple]) -> BinaryFunction:
    """``(label, mnemonic, operands, line)`` rows; a jump's operand names its target label."""
    address_of = {row[0]: index for index, row in enumerate(program) if row[0]}
    instructions = []
    for index, (_, mnemonic, operands, line) in enumerate(program):
        kind = _KINDS.get(mnemonic, "branch" if mnemonic.startswith("j") else "")
        target = address_of[operands] if kind in ("jump", "branch") else None
        text = hex(target) if target is not None else operands
        instructions.append(
            BinaryInstruction(
                index, 1, mnemonic, text, "other", False, False, "f.c", line, kind, target
            )
        )
    return BinaryFunction("f", 0, len(program), tuple(instructions))


def _found(program: list[tuple], any_condition: bool = False) -> list[tuple[int, list[list[int]]]]:
    """The checks found: (address of the branch, start addresses of each side's blocks)."""
    blocks = basic_blocks(_function(program))
    loops = natural_loops(blocks)
    around: dict[int, list[Loop]] = defaultdict(list)
    for loop in loops:
        for index in loop.blocks:
            around[index].append(loop)

    def body_of(block: Block) -> str | None:
        body = sum(1 for insn in block.instructions if insn.line == 2)
        return "L" if 2 * body > len(block.instructions) else None

    loop_of = {loop.header: "L" for loop in loops}
    found = alternatives(blocks, around, loop_of, body_of, any_condition=any_condition)
    return [
        (
            blocks[a.check].instructions[-1].address,
            [sorted(blocks[b].start for b in side) for side in a.sides],
        )
        for a in found
    ]


SCALAR_LOOP = [
    ("loop", "movsd", "xmm1, qword ptr [rsi + rax*8]", 2),
    ("", "addsd", "xmm1, qword ptr [rdi + rax*8]", 2),
    ("", "movsd", "qword ptr [rdi + rax*8], xmm1", 2),
    ("", "add", "rax, 1", 1),
    ("", "cmp", "rax, 0x46", 1),
    ("", "jne", "loop", 1),
]


def test_clang_versions_a_fixed_length_loop_into_a_machine_loop_and_straight_line_code():
    program = [
        ("", "lea", "rax, [rsi + 0x230]", 1),
        ("", "cmp", "rax, rdi", 1),
        ("", "jbe", "vector", 1),
        ("", "mov", "eax, 0", 1),
        *SCALAR_LOOP,
        ("", "ret", "", 3),
        ("vector", "movupd", "xmm1, xmmword ptr [rsi]", 2),
        ("", "addpd", "xmm1, xmmword ptr [rdi]", 2),
        ("", "movupd", "xmmword ptr [rdi], xmm1", 2),
        ("", "ret", "", 3),
    ]
    assert _found(program) == [(2, [[11], [3, 4, 10]])]


def test_copies_that_join_again_are_alternatives_up_to_the_join():
    program = [
        ("", "cmp", "rax, rdi", 1),
        ("", "jbe", "vector", 1),
        ("", "movsd", "xmm1, qword ptr [rsi]", 2),
        ("", "addsd", "xmm1, qword ptr [rdi]", 2),
        ("", "jmp", "join", 2),
        ("vector", "movupd", "xmm1, xmmword ptr [rsi]", 2),
        ("", "addpd", "xmm1, xmmword ptr [rdi]", 2),
        ("join", "mov", "eax, 0", 3),
        ("", "ret", "", 3),
    ]
    assert _found(program) == [(1, [[5], [2]])]


def test_a_flag_tested_again_after_common_code_keeps_the_copies_apart():
    # clang at an odd fixed length: both copies run the first iteration in a common block,
    # which tests the overlap flag again to return (vector copy) or enter the loop (scalar)
    program = [
        ("", "cmp", "rax, rdi", 1),
        ("", "setbe", "al", 1),
        ("", "or", "al, cl", 1),
        ("", "je", "scalar", 1),
        ("", "movupd", "xmm1, xmmword ptr [rsi]", 2),
        ("", "addpd", "xmm1, xmmword ptr [rdi]", 2),
        ("", "jmp", "common", 2),
        ("scalar", "xor", "ecx, ecx", 1),
        ("common", "movsd", "xmm1, qword ptr [rsi + rcx*8]", 2),
        ("", "addsd", "xmm1, qword ptr [rdi + rcx*8]", 2),
        ("", "test", "al, al", 1),
        ("", "jne", "done", 1),
        *SCALAR_LOOP,
        ("done", "ret", "", 3),
    ]
    assert _found(program) == [(3, [[7, 12], [4]])]


def test_the_same_flag_changed_in_between_decides_nothing():
    program = [
        ("", "cmp", "rax, rdi", 1),
        ("", "setbe", "al", 1),
        ("", "or", "al, cl", 1),
        ("", "je", "scalar", 1),
        ("", "movupd", "xmm1, xmmword ptr [rsi]", 2),
        ("", "addpd", "xmm1, xmmword ptr [rdi]", 2),
        ("", "mov", "eax, 1", 2),
        ("", "jmp", "common", 2),
        ("scalar", "xor", "ecx, ecx", 1),
        ("common", "movsd", "xmm1, qword ptr [rsi + rcx*8]", 2),
        ("", "addsd", "xmm1, qword ptr [rdi + rcx*8]", 2),
        ("", "test", "al, al", 1),
        ("", "jne", "done", 1),
        *SCALAR_LOOP,
        ("done", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_zero_trip_guard_is_no_alternative():
    program = [
        ("", "test", "edx, edx", 1),
        ("", "jle", "done", 1),
        ("", "mov", "eax, 0", 1),
        *SCALAR_LOOP,
        ("done", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_rotated_loop_s_header_copy_is_no_alternative():
    # gcc -O1: the exit test copied before the loop carries the header line, not body lines
    program = [
        ("", "cmp", "rdx, 0", 1),
        ("", "je", "done", 1),
        ("", "cmp", "rdx, 1", 1),
        ("", "je", "loop", 1),
        ("", "mov", "eax, 1", 1),
        *SCALAR_LOOP,
        ("done", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_remainder_after_an_unrolled_loop_is_no_alternative():
    program = [
        *SCALAR_LOOP,
        ("", "test", "dl, 1", 1),
        ("", "je", "done", 1),
        ("", "movsd", "xmm1, qword ptr [rsi + rax*8]", 2),
        ("", "addsd", "xmm1, qword ptr [rdi + rax*8]", 2),
        ("done", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_scalar_loop_both_paths_reach_is_no_alternative():
    # clang at a run-time length: short or overlapping arrays go straight to the scalar loop,
    # which also finishes the vector loop's remainder
    program = [
        ("", "cmp", "edx, 4", 1),
        ("", "jb", "scalar", 1),
        ("vector", "movupd", "xmm1, xmmword ptr [rsi + rax*8]", 2),
        ("", "addpd", "xmm1, xmmword ptr [rdi + rax*8]", 2),
        ("", "add", "rax, 2", 1),
        ("", "cmp", "rax, rcx", 1),
        ("", "jne", "vector", 1),
        ("", "cmp", "rax, rdx", 1),
        ("", "je", "done", 1),
        ("", "jmp", "loop", 1),
        ("scalar", "xor", "eax, eax", 1),
        *SCALAR_LOOP,
        ("done", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_branch_inside_the_loop_is_no_alternative():
    program = [
        ("", "mov", "eax, 0", 1),
        ("loop", "test", "rax, 1", 2),
        ("", "je", "even", 2),
        ("", "movsd", "xmm1, qword ptr [rsi + rax*8]", 2),
        ("", "jmp", "next", 2),
        ("even", "movsd", "xmm1, qword ptr [rdi + rax*8]", 2),
        ("next", "add", "rax, 1", 1),
        ("", "cmp", "rax, 0x46", 1),
        ("", "jne", "loop", 1),
        ("", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_split_loop_skipping_its_empty_first_part_is_no_alternative():
    # gcc -O3 splits a loop at the point where an if in it changes: when the first part is
    # empty the check jumps to the second part's preheader; both sides reach the second loop
    program = [
        ("", "test", "r11d, r11d", 1),
        ("", "jg", "first", 1),
        ("", "movsd", "xmm3, qword ptr [rip + 0x10]", 2),
        ("", "jmp", "second", 2),
        ("first", "mulsd", "xmm0, xmm1", 2),
        ("", "add", "edx, 1", 1),
        ("", "cmp", "edx, r11d", 1),
        ("", "jne", "first", 1),
        ("", "movsd", "xmm3, qword ptr [rip + 0x10]", 2),
        ("second", "addsd", "xmm0, xmm3", 2),
        ("", "addsd", "xmm0, xmm2", 2),
        ("", "add", "edx, 1", 1),
        ("", "cmp", "edx, esi", 1),
        ("", "jne", "second", 1),
        ("", "ret", "", 3),
    ]
    assert _found(program) == []


def test_a_trip_count_threshold_is_no_alternative():
    # gcc -O3 sends a loop of one iteration to a scalar copy: the check compares the count with
    # a constant, which decides by the count (the long-loop path), not by the data
    program = [
        ("", "lea", "eax, [rdx - 1]", 1),
        ("", "cmp", "eax, 1", 1),
        ("", "jbe", "loop", 1),
        ("vector", "movupd", "xmm1, xmmword ptr [rsi + rcx*8]", 2),
        ("", "addpd", "xmm1, xmmword ptr [rdi + rcx*8]", 2),
        ("", "add", "rcx, 2", 1),
        ("", "cmp", "rcx, r8", 1),
        ("", "jne", "vector", 1),
        ("", "movsd", "xmm1, qword ptr [rsi + rcx*8]", 2),
        ("", "addsd", "xmm1, qword ptr [rdi + rcx*8]", 2),
        ("", "ret", "", 3),
        *SCALAR_LOOP,
        ("", "ret", "", 3),
    ]
    assert _found(program) == []
    # the same shape behind a comparison of two array bounds is one
    overlap = [("", "lea", "rax, [rsi + 8]", 1), ("", "cmp", "rdi, rax", 1), *program[2:]]
    assert [check for check, _ in _found(overlap)] == [2]


def test_a_loop_copied_into_both_arms_of_a_flag_test_is_found_only_for_measured_counts():
    # clang duplicates an inlined callee's loop into both arms of the caller's if (timer_on):
    # a test of one register, no comparison of array bounds
    program = [
        ("", "test", "rbx, rbx", 1),
        ("", "je", "other", 1),
        ("", "call", "timer", 1),
        *SCALAR_LOOP,
        ("", "ret", "", 3),
        ("other", "mov", "eax, 0", 1),
        ("loop2", "movsd", "xmm1, qword ptr [rsi + rax*8]", 2),
        ("", "addsd", "xmm1, qword ptr [rdi + rax*8]", 2),
        ("", "movsd", "qword ptr [rdi + rax*8], xmm1", 2),
        ("", "add", "rax, 1", 1),
        ("", "cmp", "rax, 0x46", 1),
        ("", "jne", "loop2", 1),
        ("", "ret", "", 3),
    ]
    assert _found(program) == []
    assert [check for check, _ in _found(program, any_condition=True)] == [1]
