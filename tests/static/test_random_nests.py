"""Random loop nests: every defined count must equal the count measured by running the code.

A seeded generator writes C programs of nested for/while/do loops with affine, strided and
geometric headers and affine if guards (many of them deliberately odd: endless loops, empty ranges,
wrong-way updates). Each is analysed, compiled with gcc as an instrumented copy and run at several
parameter values. Counts the analysis gives must match exactly; a loop that runs away (stopped by a
cap) must have been undef.
"""

from __future__ import annotations

import random
import shutil

import pytest
import sympy
from instrument import build, measure

from perfcast.static import analyze

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
]

POINTS = [(1, 1), (2, 7), (5, 3), (9, 9), (16, 4)]


class Generator:
    def __init__(self, seed: int):
        self.random = random.Random(seed)
        self.counter = 0

    def pick(self, options):
        return self.random.choice(options)

    def affine(self, outer: list[str]) -> str:
        terms = ["n", "m", "2 * n", "n / 2", "n + m", "3", "m - 1"]
        if outer:
            v = self.pick(outer)
            terms += [v, f"{v} + 1", f"n - {v}", f"{v} + m", f"2 * {v}"]
        return self.pick(terms)

    def header(self, v: str, outer: list[str]) -> tuple[str, str, str, str]:
        """start, guard, update, kind-of-loop."""
        shape = self.pick(["up", "up", "up", "down", "down", "mul", "div", "odd"])
        if shape == "up":
            start = self.pick(
                ["0", "1"] + ([self.pick(outer), f"{self.pick(outer)} + 1"] if outer else [])
            )
            op = self.pick(["<", "<", "<=", "!="])
            step = self.pick([f"{v}++", f"{v} += 2", f"{v} += 3", f"{v} = {v} + 1"])
        elif shape == "down":
            start = self.pick(["n", "m", "n - 1"] + ([self.pick(outer)] if outer else []))
            op = self.pick([">", ">=", "!="])
            step = self.pick([f"{v}--", f"{v} -= 2", f"--{v}"])
        elif shape == "mul":
            start = self.pick(["1", "2", "3"])
            op = self.pick(["<", "<="])
            step = self.pick([f"{v} *= 2", f"{v} <<= 1", f"{v} *= 3", f"{v} = {v} * 2"])
        elif shape == "div":
            start = self.pick(["n", "m", "n * m"] + ([self.pick(outer)] if outer else []))
            op = self.pick([">", ">="])
            step = self.pick([f"{v} /= 2", f"{v} >>= 1", f"{v} = {v} / 3"])
        else:  # deliberately odd: wrong direction, zero start for a product, ...
            start = self.pick(["0", "n"])
            op = self.pick(["<", ">", "!="])
            step = self.pick([f"{v} *= 2", f"{v}++", f"{v}--", f"{v} += 2"])
        if shape == "down" or shape == "div":
            bound = self.pick(["0", "1", "2", "-1"] + ([self.pick(outer)] if outer else []))
        else:
            bound = self.affine(outer)
        return start, f"{v} {op} {bound}", step, self.pick(["for", "for", "while", "do"])

    def guard(self, outer: list[str]) -> str:
        v = self.pick(outer)
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        condition = f"{v} {op} {self.affine([o for o in outer if o != v])}"
        if self.random.random() < 0.3:
            w = self.pick(outer)
            condition = f"{condition} {self.pick(['&&', '||'])} {w} {self.pick(['<', '>='])} m"
        return condition

    def nest(self, depth: int, outer: list[str], indent: str) -> str:
        self.counter += 1
        v = f"v{self.counter}"
        start, guard, step, kind = self.header(v, outer)
        inner = outer + [v]
        body = f"{indent}  sink += 1;\n"
        if depth > 1:
            child = self.nest(depth - 1, inner, indent + "  ")
            if self.random.random() < 0.4:
                body += f"{indent}  if ({self.guard(inner)}) {{\n{child}{indent}  }}"
                if self.random.random() < 0.4:
                    other = self.nest(depth - 1, inner, indent + "    ")
                    body += f" else {{\n{other}{indent}  }}"
                body += "\n"
            else:
                body += child
        if kind == "for":
            return f"{indent}for (int {v} = {start}; {guard}; {step}) {{\n{body}{indent}}}\n"
        if kind == "while":
            return (
                f"{indent}int {v} = {start};\n{indent}while ({guard}) {{\n{body}"
                f"{indent}  {step};\n{indent}}}\n"
            )
        return (
            f"{indent}int {v} = {start};\n{indent}do {{\n{body}{indent}  {step};\n"
            f"{indent}}} while ({guard});\n"
        )

    def program(self) -> str:
        nests = "".join(
            "  {\n" + self.nest(self.random.randint(1, 3), [], "    ") + "  }\n" for _ in range(2)
        )
        return (
            "#include <stdlib.h>\nlong sink;\n"
            "int main(int argc, char **argv) {\n"
            "  int n = atoi(argv[1]);\n  int m = atoi(argv[2]);\n"
            f"{nests}  return (int)(sink & 1);\n}}\n"
        )


@pytest.mark.parametrize("seed", range(30))
def test_random_nests_never_get_a_wrong_count(seed, tmp_path):
    source = tmp_path / f"random_{seed}.c"
    source.write_text(Generator(seed).program())
    report = analyze([source], ["n", "m"])
    regions = report.kernels + report.branches
    program = build([source], regions, tmp_path, [], cap=200_000)
    defined = [k for k in regions if k.count is not None]
    checked = 0
    capped = 0
    for n_value, m_value in POINTS:
        measured = measure(program, [str(n_value), str(m_value)], tmp_path)
        if "CAP" in measured:
            capped += 1
            runaway = next(k for k in regions if k.name == measured["CAP"])
            assert runaway.count is None, (runaway.name, str(runaway.count), source.read_text())
            continue
        values = {sympy.Symbol("n"): n_value, sympy.Symbol("m"): m_value}
        for kernel in defined:
            predicted = kernel.count.subs(values)
            assert predicted.is_Integer, (kernel.name, kernel.count)
            assert int(predicted) == measured.get(kernel.name, 0), (
                kernel.name,
                str(kernel.count),
                (n_value, m_value),
                measured.get(kernel.name, 0),
                source.read_text(),
            )
            checked += 1
    # Something was compared, unless a runaway loop stopped every run.
    assert checked > 0 or capped == len(POINTS)
