"""Static reports of two perfcast source trees, compared byte for byte (issue 20, speed).

Work on the speed of ``perfcast static`` must not change one count, note or message. This runs
the command a user types, ``perfcast static FILE [--param ...] --no-cache --format json`` and
``--format text``, once with each tree's ``src`` first on the path, and compares standard
output and standard error of the two runs byte for byte. The files: the benchmark programs of
``tests/static/programs`` (with the parameters and macros the issue's benchmarks use) and any
``--source FILE`` (analysed with the Python headers on the include path, as the speed table of
``benchmarks/optimized_mix.py`` does, e.g. the third-party files it fetches).

Usage (the "before" tree, e.g. ``git archive main src | tar -x -C /tmp/before``)::

    .venv/bin/python benchmarks/static_reports_identical.py --before /tmp/before/src \\
        --after src [--source FILE ...]

Prints one line per file and output format, ``same`` or ``DIFFERENT`` (with the first line
that differs), and exits with status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "static" / "programs"
PYTHON_INCLUDE = f"-I{sysconfig.get_paths()['include']}"

# (file, --param names, compile flags): the analyses of the benchmark programs
CASES = (
    ("stream_fixed.c", (), ("-DN=200000",)),
    ("stream_runtime.c", ("n", "ntimes"), ()),
    ("stream_runtime.c", ("n",), ()),
    ("dgemm.c", ("n",), ()),
    ("jacobi2d.c", (), ("-DN=200", "-DTSTEPS=10")),
    ("cg_csr.c", ("m", "iters"), ()),
    ("cg_csr.c", ("m",), ()),
    ("cg.c", (), ()),
    ("stream.c", (), ()),
    ("error_paths.c", (), ()),
    ("guarded_inline.c", (), ()),
)


def outputs(tree: Path, source: Path, parameters: tuple[str, ...], flags: tuple[str, ...]):
    """Standard output and error of ``perfcast static`` in both formats, run from ``tree``."""
    found = {}
    for form in ("json", "text"):
        command = [sys.executable, "-m", "perfcast.cli", "static", str(source)]
        command += [f"--param={name}" for name in parameters]
        command += ["--no-cache", "--format", form, "--", *flags]
        done = subprocess.run(
            command,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(tree)},
            check=False,
        )
        found[form] = (done.returncode, done.stdout, done.stderr)
    return found


def first_difference(before: bytes, after: bytes) -> str:
    """The first line that differs, shortened."""
    for old, new in zip(before.splitlines(), after.splitlines(), strict=False):
        if old != new:
            return f"{old[:100]!r} -> {new[:100]!r}"
    return f"{len(before)} bytes -> {len(after)} bytes"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="src directory of the old tree")
    parser.add_argument("--after", type=Path, default=ROOT / "src", help="src of the new tree")
    parser.add_argument(
        "--source", action="append", default=[], type=Path, metavar="FILE",
        help="also compare this C file (with the Python headers on the include path)",
    )  # fmt: skip
    args = parser.parse_args()
    cases = [(PROGRAMS / name, parameters, flags) for name, parameters, flags in CASES]
    cases += [(path, (), (PYTHON_INCLUDE,)) for path in args.source]
    differ = 0
    for source, parameters, flags in cases:
        old = outputs(args.before.resolve(), source, parameters, flags)
        new = outputs(args.after.resolve(), source, parameters, flags)
        label = f"{source.name} {' '.join(parameters)}".strip()
        for form in ("json", "text"):
            if old[form] == new[form]:
                print(f"same      {label} ({form}: {len(new[form][1])} bytes out)")
                continue
            differ += 1
            stream = 1 if old[form][1] != new[form][1] else 2
            detail = first_difference(old[form][stream], new[form][stream])
            print(f"DIFFERENT {label} ({form}, exit {old[form][0]} -> {new[form][0]}): {detail}")
    print("all the same" if not differ else f"{differ} outputs differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
