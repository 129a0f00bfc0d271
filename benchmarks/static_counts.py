"""How many loops the static analysis counts exactly, and whether any count is wrong.

Analyses seeded random loop nests (the generator of tests/static/test_random_nests.py), compiles
instrumented copies with gcc, runs them at five parameter points and compares every defined count
with the measured one. Prints coverage (share of loops counted exactly), wrong counts (must be 0),
the commonest undef reasons and the analysis time per program.

    .venv/bin/python benchmarks/static_counts.py [--programs 100]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sympy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "static"))

from instrument import build, measure  # noqa: E402
from test_random_nests import POINTS, Generator  # noqa: E402

from perfcast.static import analyze  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    options = parser.parse_args()
    loops = defined = verified = wrong = runaway_defined = 0
    reasons: collections.Counter[str] = collections.Counter()
    seconds = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for seed in range(1000, 1000 + options.programs):
            source = work / f"random_{seed}.c"
            source.write_text(Generator(seed).program())
            start = time.perf_counter()
            report = analyze([source], ["n", "m"])
            seconds.append(time.perf_counter() - start)
            for kernel in report.kernels:
                if kernel.kind != "loop":
                    continue
                loops += 1
                if kernel.count is not None:
                    defined += 1
                else:
                    reasons[kernel.undef_reason.split(" at line")[0][:60]] += 1
            program = build([source], report.kernels, work, [], cap=200_000)
            for n_value, m_value in POINTS:
                measured = measure(program, [str(n_value), str(m_value)], work)
                if "CAP" in measured:
                    runaway_defined += report.kernel(measured["CAP"]).count is not None
                    continue
                values = {sympy.Symbol("n"): n_value, sympy.Symbol("m"): m_value}
                for kernel in report.kernels:
                    if kernel.count is None:
                        continue
                    verified += 1
                    wrong += int(kernel.count.subs(values)) != measured.get(kernel.name, 0)
    print(f"programs: {options.programs}, loops: {loops}")
    print(f"loops counted exactly: {defined} ({100 * defined / loops:.0f} %)")
    print(f"counts compared with gcc-measured counts: {verified}; wrong: {wrong}")
    print(f"runaway loops given a count: {runaway_defined}")
    print(
        f"analysis time per program: median {statistics.median(seconds) * 1000:.0f} ms, "
        f"max {max(seconds) * 1000:.0f} ms"
    )
    print("commonest undef reasons:")
    for reason, count in reasons.most_common(6):
        print(f"  {count:4d}  {reason}")
    return 1 if wrong or runaway_defined else 0


if __name__ == "__main__":
    sys.exit(main())
