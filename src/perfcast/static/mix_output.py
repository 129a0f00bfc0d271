"""Instruction-mix models as perfcast models, JSON, plain text and an importable Python module.

Metric names: ``instructions.<category>`` for each category and ``instructions.total``,
``memory.reads`` and ``memory.writes`` for the memory-operand counts.
"""

from __future__ import annotations

import keyword
import re
from fractions import Fraction
from typing import Any

import sympy

from perfcast.core.function import Factor, Model, Term
from perfcast.static.instruction_mix import COUNT_KEYS, InstructionMix


def metric_name(key: str) -> str:
    """Metric name of a count key: ``instructions.fp_scalar``, ``memory.reads``, ..."""
    return f"memory.{key}" if key in ("reads", "writes") else f"instructions.{key}"


def expression_to_model(
    expression: sympy.Expr, kernel: str, metric: str, parameters: tuple[str, ...]
) -> Model | None:
    """A :class:`~perfcast.core.function.Model` equal to a count expression, when it has the form.

    The expression must expand to a constant plus terms ``c * prod(x^i * log(x)^j)`` over the
    parameters (``log`` of any base). Anything else (``floor``, ``Max``, piecewise, a symbol that
    is not a parameter) gives None.

    Parameters
    ----------
    expression : sympy.Expr
        A count over sympy Symbols named like the parameters.
    kernel, metric : str
        Identity of the model.
    parameters : tuple of str
        Parameters of the model.
    """
    constant = 0.0
    terms: dict[tuple[Factor, ...], float] = {}
    for part in sympy.Add.make_args(sympy.expand(expression)):
        parsed = _term(part, parameters)
        if parsed is None:
            return None
        coefficient, factors = parsed
        if not factors:
            constant += coefficient
        else:
            terms[factors] = terms.get(factors, 0.0) + coefficient
    return Model(
        kernel=kernel,
        metric=metric,
        parameters=tuple(parameters),
        constant=constant,
        terms=tuple(Term(c, f) for f, c in terms.items() if c != 0),
    )


def _term(part: sympy.Expr, parameters: tuple[str, ...]) -> tuple[float, tuple[Factor, ...]] | None:
    coefficient = 1.0
    exponents: dict[str, Fraction] = {}
    logs: dict[str, int] = {}
    for base, power in part.as_powers_dict().items():
        if base.is_number and power.is_number:
            coefficient *= float(base**power)
        elif isinstance(base, sympy.Symbol) and base.name in parameters and power.is_Rational:
            exponents[base.name] = Fraction(int(power.p), int(power.q))
        elif (
            isinstance(base, sympy.log)
            and isinstance(base.args[0], sympy.Symbol)
            and base.args[0].name in parameters
            and power.is_Integer
            and power > 0
        ):
            # ln(x)^j = log2(x)^j * ln(2)^j
            logs[base.args[0].name] = int(power)
            coefficient *= float(sympy.log(2) ** power)
        else:
            return None
    names = sorted(set(exponents) | set(logs))
    factors = tuple(Factor(n, exponents.get(n, Fraction(0)), logs.get(n, 0)) for n in names)
    return coefficient, tuple(sorted(factors))


def mix_models(mix: InstructionMix) -> list[Model]:
    """One model per function and count key (functions with undefined counts are left out)."""
    models = []
    for name, function in mix.functions.items():
        if function.counts is None:
            continue
        for key in COUNT_KEYS:
            model = expression_to_model(
                function.counts[key], name, metric_name(key), mix.parameters
            )
            if model is not None:
                models.append(model)
    return models


def mix_to_json(mix: InstructionMix) -> dict[str, Any]:
    """The JSON form: per function and count key, the expression and the model JSON.

    ``expression`` is a string ``sympy.sympify`` parses; ``model`` is DESIGN.md's model JSON
    without quality, or null when the expression has no model form.
    """
    functions = []
    for name, function in mix.functions.items():
        counts = None
        if function.counts is not None:
            counts = {}
            for key in COUNT_KEYS:
                expression = function.counts[key]
                model = expression_to_model(expression, name, metric_name(key), mix.parameters)
                counts[key] = {
                    "metric": metric_name(key),
                    "expression": sympy.sstr(expression),
                    "model": None if model is None else model.to_dict(with_quality=False),
                }
        functions.append(
            {
                "function": name,
                "instructions": function.instructions,
                "counts": counts,
                "undef_reason": function.undef_reason,
                "notes": list(function.notes),
            }
        )
    return {
        "binary": mix.binary,
        "parameters": list(mix.parameters),
        "attribution": mix.attribution,
        "functions": functions,
        "unmodeled": [{"function": n, "reason": r} for n, r in sorted(mix.unmodeled.items())],
    }


def mix_to_text(mix: InstructionMix) -> str:
    """Plain-text table: per function, each non-zero count expression.

    Parameters
    ----------
    mix : InstructionMix
        The instruction-mix models of one binary.

    Returns
    -------
    str
        One line per function, then one per non-zero count, notes and unmodeled functions,
        ending in a newline.
    """
    lines = [f"instruction mix of {mix.binary} (attribution: {mix.attribution})"]
    for name, function in mix.functions.items():
        lines.append(f"{name}  ({function.instructions} instructions)")
        if function.counts is None:
            lines.append(f"  undef: {function.undef_reason}")
            continue
        for key in COUNT_KEYS:
            expression = function.counts[key]
            if expression != 0:
                lines.append(f"  {key:<14} {sympy.sstr(expression)}")
        lines.extend(f"  note: {note}" for note in function.notes)
    for name, reason in sorted(mix.unmodeled.items()):
        lines.append(f"{name}  not modeled: {reason}")
    return "\n".join(lines) + "\n"


def mix_to_python(mix: InstructionMix) -> str:
    """Source of an importable Python module: one function per modeled function.

    Each takes the parameters (keyword or positional, in ``PARAMETERS`` order) and returns a dict
    of count key -> count. ``MODELS`` maps the original function names to them. Functions with
    undefined counts raise ``ValueError`` with the reason.
    """
    arguments = ", ".join(mix.parameters)
    lines = [
        f'"""Instruction-mix models of {mix.binary} (generated by perfcast; do not edit)."""',
        "",
        "import math",
        "",
        f"PARAMETERS = {tuple(mix.parameters)!r}",
        f"KEYS = {COUNT_KEYS!r}",
        "",
    ]
    names: dict[str, str] = {}
    for name, function in mix.functions.items():
        python_name = _identifier(name, set(names.values()))
        names[name] = python_name
        lines += ["", f"def {python_name}({arguments}):", f'    """Counts of {name} per run."""']
        if function.counts is None:
            lines.append(f"    raise ValueError({function.undef_reason!r})")
            continue
        lines.append("    return {")
        for key in COUNT_KEYS:
            code = sympy.pycode(function.counts[key], fully_qualified_modules=True)
            lines.append(f"        {key!r}: {code},")
        lines.append("    }")
        lines.append("")
    entries = ", ".join(f"{n!r}: {p}" for n, p in names.items())
    lines += ["", f"MODELS = {{{entries}}}", ""]
    return "\n".join(lines)


def _identifier(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", name)
    if (
        not base
        or base[0].isdigit()
        or keyword.iskeyword(base)
        or base in ("math", "MODELS", "PARAMETERS", "KEYS")
    ):
        base = f"function_{base}"
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}_{number}", number + 1
    return candidate
