"""Test helper: compile and run an instrumented copy of C sources to measure kernel counts.

Every kernel (function or loop) gets a counter increment as the first statement of its body,
found from the kernel's source location (the first ``{`` after it). A destructor appends
``name count`` lines to the file named by ``PC_OUT`` when the program exits.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from perfcast.static import StaticKernel


def instrument(text: str, kernels: Sequence[StaticKernel], tag: str, cap: int = 0) -> str:
    """``text`` with a counter increment at the start of every kernel body.

    With ``cap`` > 0 a body that runs more than ``cap`` times stops the program (exit status 3)
    after printing ``CAP <kernel name>`` to stderr, so endless loops end.
    """
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    inserts: list[tuple[int, str]] = []
    for index, kernel in enumerate(kernels):
        position = starts[kernel.line - 1] + kernel.column - 1
        brace = text.index("{", position)
        if brace >= starts[kernel.end_line]:
            raise AssertionError(f"{kernel.name}: body has no braces")
        increment = f" __pc_hits_{tag}[{index}]++;"
        if cap:
            increment = (
                f" if (++__pc_hits_{tag}[{index}] > {cap}) "
                f'{{ fprintf(stderr, "CAP {kernel.name}\\n"); exit(3); }}'
            )
        inserts.append((brace + 1, increment))
    for offset, snippet in sorted(inserts, reverse=True):
        text = text[:offset] + snippet + text[offset:]
    names = ", ".join(f'"{k.name}"' for k in kernels)
    count = max(len(kernels), 1)
    header = (
        "#include <stdio.h>\n#include <stdlib.h>\n"
        f"static unsigned long long __pc_hits_{tag}[{count}];\n"
    )
    footer = (
        f"\nstatic const char *__pc_names_{tag}[{count}] = {{{names}}};\n"
        f"__attribute__((destructor)) static void __pc_dump_{tag}(void) {{\n"
        '  FILE *out = fopen(getenv("PC_OUT"), "a");\n'
        f"  for (int i = 0; i < {len(kernels)}; i++)\n"
        f'    fprintf(out, "%s %llu\\n", __pc_names_{tag}[i], __pc_hits_{tag}[i]);\n'
        "  fclose(out);\n}\n"
    )
    return header + text + footer


def build(
    sources: Sequence[Path],
    kernels: Sequence[StaticKernel],
    workdir: Path,
    flags: Sequence[str],
    cap: int = 0,
) -> Path:
    """Write instrumented copies of ``sources`` and compile them with gcc into one program."""
    copies = []
    for number, source in enumerate(sources):
        mine = [k for k in kernels if Path(k.file).resolve() == source.resolve()]
        copy = workdir / f"instrumented_{number}_{source.name}"
        copy.write_text(instrument(source.read_text(), mine, f"f{number}", cap))
        copies.append(str(copy))
    program = workdir / "program"
    subprocess.run(
        ["gcc", "-O0", "-w", *flags, *copies, "-o", str(program)],
        check=True,
        capture_output=True,
        text=True,
    )
    return program


def measure(program: Path, arguments: Sequence[str], workdir: Path) -> dict[str, int]:
    """Run the instrumented program once; return how often each kernel body ran.

    A run stopped by the cap returns ``{"CAP": name of the kernel that hit it}``.
    """
    out = workdir / "counts.txt"
    out.unlink(missing_ok=True)
    env: Mapping[str, str] = {**os.environ, "PC_OUT": str(out)}
    done = subprocess.run(
        [str(program), *arguments], check=False, env=env, timeout=60, capture_output=True, text=True
    )
    if done.returncode == 3 and done.stderr.startswith("CAP "):
        return {"CAP": done.stderr.split()[1]}
    counts: dict[str, int] = {}
    for line in out.read_text().splitlines():
        name, value = line.rsplit(" ", 1)
        counts[name] = int(value)
    return counts
