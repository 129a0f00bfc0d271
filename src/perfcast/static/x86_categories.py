"""Categories of x86-64 instructions for instruction-mix models (Mira's instruction classes).

Every instruction falls in exactly one category, decided by what it computes:

``fp_scalar``
    Scalar floating-point arithmetic, comparison and conversion: SSE/AVX ``*ss``/``*sd`` forms
    (``addsd``, ``vfmadd231sd``, ``ucomisd``, ``cvtsi2sd``, ``sqrtsd``) and x87 arithmetic.
``fp_vector``
    Packed floating-point arithmetic, logic, comparison and conversion (``mulpd``, ``vaddps``,
    ``xorpd``, ``cvtdq2pd``).
``int_arith``
    Integer arithmetic, logic, shifts, compares and tests, ``lea`` (it computes an address or an
    integer, it does not touch memory), ``setcc``, and packed-integer SIMD arithmetic and logic
    (``paddd``, ``pxor``).
``data_movement``
    Moves between registers and memory, without computing: ``mov`` and its extensions,
    ``movsd``/``movapd``/``movq``, ``push``/``pop``, ``cmovcc``, sign extensions (``cdqe``),
    shuffles, unpacks, broadcasts, inserts and extracts, x87 loads and stores, string moves.
``control``
    Jumps, conditional branches, calls, returns, ``loop``.
``other``
    Everything else: ``nop``, ``endbr64``, fences, ``vzeroupper``, system instructions.

A memory operand does not change the category: ``addsd xmm0, [rax]`` is one ``fp_scalar``
instruction. Memory traffic is counted separately, per instruction, by :func:`memory_access`: an
instruction with an explicit memory operand it reads counts once in ``reads``, one it writes once in
``writes`` (``add [rax], 1`` counts in both). ``lea`` has a memory-form operand but no access.
Implicit stack accesses of ``push``, ``pop``, ``call`` and ``ret`` are not counted.
"""

from __future__ import annotations

import re
from typing import Final

from capstone import CS_AC_READ, CS_AC_WRITE, CsInsn
from capstone.x86 import X86_OP_MEM

CATEGORIES: Final = ("fp_scalar", "fp_vector", "int_arith", "data_movement", "control", "other")
"""All categories, in report order."""

MEMORY_COUNTS: Final = ("reads", "writes")
"""Separate memory-operand counts (not categories: an instruction may have both or none)."""

_CONTROL = re.compile(r"^(j[a-z]+|call|ret|retf|iret[dq]?|loop(n?e|n?z)?|syscall|sysret|int3?)$")
_INT_ARITH = re.compile(
    r"^(add|adc|sub|sbb|imul|mul|idiv|div|inc|dec|neg|not|and|or|xor|andn|cmp|test|"
    r"sh[lr]d?|sa[lr]|ro[lr]|rc[lr]|sarx|shlx|shrx|rorx|bsf|bsr|bt[csr]?|tzcnt|lzcnt|popcnt|"
    r"blsi|blsmsk|blsr|bzhi|pdep|pext|lea|set[a-z]+|cmpxchg|xadd|adcx|adox|mulx|crc32)$"
)
_DATA_MOVEMENT = re.compile(
    r"^(mov|movabs|movsx[d]?|movzx|movbe|movnti|xchg|push|pop|pushf[q]?|popf[q]?|leave|cmov[a-z]+|"
    r"cbw|cwde|cdqe|cwd|cdq|cqo|bswap|lods[bwdq]|stos[bwdq]|movs[bwq]|"
    r"v?mov(ss|sd|aps|apd|ups|upd|d|q|dqa|dqu|dqa64|dqu64|dqa32|dqu32|dqu8|dqu16|hlps|lhps|"
    r"hps|hpd|lps|lpd|msk(ps|pd)|ntdq|ntps|ntpd|ntdqa|shdup|sldup|ddup|q2dq|dq2q)|"
    r"v?(unpck[hl]p[sd]|shufp[sd]|punpck\w+|pshuf\w*|pinsr[bwdq]|pextr[bwdq]|insertps|extractps|"
    r"blendv?p[sd]|pblend\w*|palignr|perm\w+|vperm\w+|pack\w+|pmov[sz]x\w+|maskmov\w*)|"
    r"vbroadcast\w+|vpbroadcast\w+|vinsert\w+|vextract\w+|vgather\w+|vpgather\w+|"
    r"vscatter\w+|vpscatter\w+|"
    r"fld\w*|fst\w*|fild\w*|fist\w*|fxch|fbld|fbstp|fcmov\w+)$"
)
_PACKED_INT = re.compile(
    r"^v?p(add|sub|mul|madd|avg|min|max|abs|sign|sad|cmp|test|and|andn|or|xor|sll|srl|sra|"
    r"hadd|hsub|lzcnt|popcnt|ternlog|rol|ror|conflict)\w*$"
)
_X87_ARITH = re.compile(
    r"^f(add|sub|subr|mul|div|divr|iadd|isub|isubr|imul|idiv|idivr|sqrt|abs|chs|rndint|"
    r"scale|prem1?|sin|cos|sincos|tan|patan|2xm1|yl2x|yl2xp1|xtract|com|comp|compp|ucom|"
    r"ucomp|ucompp|comi|comip|ucomi|ucomip|tst|xam)p?$"
)
_FP_OPERATION = re.compile(
    r"^v?(add|sub|mul|div|sqrt|rsqrt|rcp|min|max|and|andn|or|xor|cmp\w*|round|dp|hadd|hsub|"
    r"addsub|fn?m(add|sub)\w*|fmaddsub\w*|fmsubadd\w*|u?comi|getexp|getmant|scalef|range|"
    r"reduce|rndscale|fixupimm|cvt\w*)(ss|sd|ps|pd|sh|ph)$"
)
_FP_CONVERSION = re.compile(r"^v?cvt\w+$")


def category_of(mnemonic: str) -> str:
    """The category of an x86-64 instruction from its (capstone, lower-case) mnemonic.

    Parameters
    ----------
    mnemonic : str
        Mnemonic as capstone prints it, possibly with a prefix (``rep stosq``, ``lock add``).

    Returns
    -------
    str
        One of :data:`CATEGORIES`.
    """
    words = mnemonic.lower().split()
    name = words[-1] if words else ""
    if _CONTROL.match(name):
        return "control"
    if _DATA_MOVEMENT.match(name):
        return "data_movement"
    if _X87_ARITH.match(name):
        return "fp_scalar"
    if _FP_OPERATION.match(name) or _FP_CONVERSION.match(name):
        return _fp_width(name)
    if _INT_ARITH.match(name) or _PACKED_INT.match(name):
        return "int_arith"
    return "other"


def _fp_width(name: str) -> str:
    """Scalar or packed, from the operand-type letters of an FP operation or conversion."""
    if name.endswith(("ss", "sd", "sh")):
        return "fp_scalar"
    if name.endswith(("ps", "pd", "ph")):
        return "fp_vector"
    # conversions without a type suffix: cvtsi2sd, cvttsd2si, cvtdq2pd, cvtpd2dq, ...
    conversion = name.removeprefix("v").removeprefix("cvt").removeprefix("t")
    if any(part in conversion for part in ("pd", "ps", "dq", "ph")):
        return "fp_vector"
    return "fp_scalar"


def memory_access(instruction: CsInsn) -> tuple[bool, bool]:
    """Whether an instruction reads and whether it writes an explicit memory operand.

    The instruction must come from a capstone disassembler with ``detail`` enabled. ``lea`` and
    ``nop`` forms with memory-shaped operands access nothing.
    """
    if instruction.mnemonic in ("lea", "nop") or instruction.mnemonic.startswith("prefetch"):
        return False, False
    reads = writes = False
    for operand in instruction.operands:
        if operand.type == X86_OP_MEM:
            reads = reads or bool(operand.access & CS_AC_READ)
            writes = writes or bool(operand.access & CS_AC_WRITE)
    return reads, writes
