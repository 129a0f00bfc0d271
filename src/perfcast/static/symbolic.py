"""Symbolic loop levels, a small prover and closed-form counting over nests.

Every loop level iterates a counter ``k = 0 .. trip - 1``; its induction variable takes the value
``value(k)`` (``start + step*k``, ``start * c**k`` or ``floor(start / c**k)``). A kernel's count
is the nested sum of 1 over its levels, done innermost first with :func:`sympy.summation` (closed
forms, never enumeration). A sum is only exact when every range is non-empty or exactly empty; the
conditions for that are proved with :func:`prove_nonnegative` over the enclosing ranges, or, when
they only involve parameters, kept as the condition of a piece (the count is 0 otherwise).

Parameters are assumed to be integers >= 1 throughout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy


class Undefined(Exception):
    """The count cannot be derived exactly; the message says why."""


@dataclass(frozen=True)
class Level:
    """One loop level of a nest.

    Attributes
    ----------
    variable : Symbol
        Stands for the induction variable's value inside the body.
    counter : Symbol
        Iteration counter ``k``, from 0 to ``trip - 1``.
    value : Expr
        The induction variable at iteration ``k`` (in ``counter``); None when unknown (annotated).
    trip : Expr
        Iterations per entry of the loop, over parameters and outer variables.
    nonempty : tuple of Expr
        Expressions that must be >= 0 for ``trip`` to be exact; when one is negative the loop
        runs zero times.
    strict : bool
        True when a failed ``nonempty`` condition means an endless loop rather than zero
        iterations (``!=`` guards), so the condition must be proved.
    low, high : Expr
        Relaxed range of the induction variable, for the prover.
    step : Expr or None
        Additive step (signed) when the update is additive, else None.
    start : Expr
        Value at ``k = 0``.
    line : int
        Source line of the loop.
    factor : Expr or None
        The factor of a multiplying update (``value = start * factor**k``), else None.
    """

    variable: sympy.Symbol
    counter: sympy.Symbol
    value: sympy.Expr | None
    trip: sympy.Expr
    nonempty: tuple[sympy.Expr, ...]
    strict: bool
    low: sympy.Expr | None
    high: sympy.Expr | None
    step: sympy.Expr | None
    start: sympy.Expr | None
    line: int
    factor: sympy.Expr | None = None


@dataclass(frozen=True)
class Bound:
    """A guard ``variable >= value`` (lower) or ``variable <= value`` (upper) on one level."""

    level: int
    lower: bool
    value: sympy.Expr


@dataclass(frozen=True)
class Condition:
    """A guard that involves no loop variable: ``expression >= 0``."""

    expression: sympy.Expr


@dataclass(frozen=True)
class Factor:
    """A guard taken with a user-given probability (``#pragma perfcast probability``)."""

    probability: sympy.Expr


@dataclass(frozen=True)
class Negation:
    """The complement of a conjunction of guards (else branches, ``||``, ``!=``)."""

    guards: tuple


@dataclass(frozen=True)
class Residue:
    """A guard ``expression % modulus == remainder`` on loop variables (C's ``%`` test).

    Counted exactly by keeping only the iterations of one loop level whose counter solves the
    congruence (a level with a longer step), see :func:`sum_over_levels`.
    """

    expression: sympy.Expr
    modulus: int
    remainder: int


@dataclass
class Piece:
    """``value`` when every ``conditions`` expression is >= 0, else 0."""

    value: sympy.Expr
    conditions: list[sympy.Expr] = field(default_factory=list)


Count = list[Piece]


def total(count: Count) -> sympy.Expr:
    """The count as one sympy expression (a Piecewise per conditional piece)."""
    result = sympy.Integer(0)
    for piece in count:
        if piece.conditions:
            condition = sympy.And(*[sympy.Ge(c, 0) for c in piece.conditions])
            result += sympy.Piecewise((piece.value, condition), (0, True))
        else:
            result += piece.value
    return result


def readable(expression: sympy.Expr) -> str:
    """An expression as text with loop variables under their C names."""
    names = {d: sympy.Symbol(d.name) for d in expression.atoms(sympy.Dummy)}
    return str(expression.xreplace(names))


def prove_nonnegative(expression: sympy.Expr, domain: list[Level]) -> bool:
    """True only when ``expression >= 0`` for every parameter >= 1 and every point of ``domain``.

    Loop variables are eliminated innermost first by substituting the end of their relaxed range
    that minimises the (affine) expression. A remainder ``Mod(x, b)`` by a positive number, a
    term of its own with a numeric coefficient, is first replaced by its least value (0, or
    ``b - 1`` under a negative coefficient): it lies in ``[0, b)`` whatever ``x`` is.
    """
    expression = _remainders_lowered(sympy.expand(expression))
    for level in reversed(domain):
        v = level.variable
        if v not in expression.free_symbols:
            continue
        if level.low is None or level.high is None:
            return False
        slope = sympy.diff(expression, v)
        if v in slope.free_symbols:
            return False
        outer = domain[: domain.index(level)]
        if prove_nonnegative(slope, outer):
            expression = sympy.expand(expression.subs(v, level.low))
        elif prove_nonnegative(-slope, outer):
            expression = sympy.expand(expression.subs(v, level.high))
        else:
            return False
    return _parameters_nonnegative(expression)


def _remainders_lowered(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with each term ``c * Mod(x, b)`` (numbers ``c`` and ``b > 0``) replaced
    by its least value: 0 for ``c > 0``, ``c * (b - 1)`` for ``c < 0``."""
    if not expression.has(sympy.Mod):
        return expression
    result = sympy.Integer(0)
    for term in sympy.Add.make_args(expression):
        coefficient, rest = term.as_coeff_Mul()
        if isinstance(rest, sympy.Mod) and rest.args[1].is_number and rest.args[1] > 0:
            result += 0 if coefficient > 0 else coefficient * (rest.args[1] - 1)
        else:
            result += term
    return result


def _parameters_nonnegative(expression: sympy.Expr) -> bool:
    if expression.is_number:
        return bool(expression >= 0)
    if expression.is_nonnegative:
        return True
    if isinstance(expression, sympy.floor | sympy.ceiling):
        return _parameters_nonnegative(expression.args[0])
    lowered = _lower_bound(expression)
    if lowered is None:
        return False
    symbols = sorted(lowered.free_symbols, key=str)
    if not all(s.is_positive and s.is_integer for s in symbols):
        return False
    shifted = sympy.expand(lowered.subs({s: s + 1 for s in symbols}, simultaneous=True))
    try:
        polynomial = sympy.Poly(shifted, *symbols) if symbols else None
    except sympy.PolynomialError:
        return bool(shifted.is_nonnegative)
    if polynomial is None:
        return bool(shifted >= 0)
    return all(c >= 0 for c in polynomial.coeffs())


def _lower_bound(expression: sympy.Expr) -> sympy.Expr | None:
    """Replace floor/ceiling terms (with positive coefficients) by polynomial lower bounds."""
    terms = sympy.Add.make_args(expression)
    result = sympy.Integer(0)
    for term in terms:
        coefficient, rest = term.as_coeff_Mul()
        if isinstance(rest, sympy.floor):
            if coefficient < 0:
                return None
            numerator, denominator = sympy.fraction(sympy.together(rest.args[0]))
            if not denominator.is_number:
                return None
            result += coefficient * (numerator - denominator + 1) / denominator
        elif isinstance(rest, sympy.ceiling):
            if coefficient < 0:
                return None
            result += coefficient * rest.args[0]
        elif term.has(sympy.floor, sympy.ceiling, sympy.log, sympy.Min, sympy.Max):
            if not term.is_nonnegative:
                return None
        else:
            result += term
    return sympy.expand(result)


def constraint(expression: sympy.Expr, levels: list[Level]) -> list:
    """The guard ``expression >= 0`` as a :class:`Bound` on the innermost level it involves.

    A :class:`Condition` when it involves no loop variable. Raises Undefined unless the
    expression is affine (integer slope) in that level's variable and the level is additive.
    """
    inner = [i for i, lv in enumerate(levels) if lv.variable in expression.free_symbols]
    if not inner:
        return [Condition(expression)]
    index = max(inner)
    level = levels[index]
    variable = level.variable
    variables = {lv.variable for lv in levels}
    for atom in expression.atoms(sympy.Function, sympy.Pow):
        if atom.free_symbols & variables and not (
            isinstance(atom, sympy.Pow) and atom.exp.is_Integer and atom.exp > 0
        ):
            raise Undefined(f"the condition is not affine ({readable(atom)})")
    slope = sympy.diff(expression, variable)
    if not slope.is_Integer or slope == 0:
        raise Undefined("the condition is not affine in the loop variable")
    if level.step is None and level.factor is None:
        raise Undefined(
            f"the condition tests the variable of the loop at line {level.line}, "
            "which is not affine"
        )
    rest = sympy.expand(expression - slope * variable)
    if slope > 0:
        value = -rest if slope == 1 else sympy.ceiling(-rest / slope)
        return [Bound(index, True, value)]
    value = rest if slope == -1 else sympy.floor(rest / -slope)
    return [Bound(index, False, value)]


def sum_over_levels(levels: list[Level], guards: list, count: Count) -> Count:
    """Sum ``count`` (per innermost iteration) over the nest, honouring the guards.

    Raises
    ------
    Undefined
        When a sum has no closed form or a range cannot be shown to be non-empty.
    """
    for index, guard in enumerate(guards):
        if isinstance(guard, Negation):
            rest = guards[:index] + guards[index + 1 :]
            whole = sum_over_levels(levels, rest, count)
            part = sum_over_levels(levels, rest + list(guard.guards), count)
            return whole + [Piece(-p.value, p.conditions) for p in part]
    for index, guard in enumerate(guards):
        if isinstance(guard, Residue):
            rest = guards[:index] + guards[index + 1 :]
            kept_levels, kept_guards = _residue_levels(levels, rest, guard, count)
            return sum_over_levels(kept_levels, kept_guards, count)
    variables = {level.variable for level in levels}
    pieces: Count = []
    moved: Count = []
    for piece in count:
        open_conditions = [c for c in piece.conditions if not prove_nonnegative(c, levels)]
        inner = [c for c in open_conditions if c.free_symbols & variables]
        if inner:
            # A condition of a callee's piece that involves our loop variables is a guard here.
            extra = [g for c in inner for g in constraint(sympy.expand(c), levels)]
            rest = [c for c in open_conditions if c not in inner]
            moved += sum_over_levels(levels, guards + extra, [Piece(piece.value, rest)])
        else:
            pieces.append(Piece(piece.value, open_conditions))
    if not pieces:
        return moved
    conditions: list[tuple[sympy.Expr, bool]] = []
    for guard in guards:
        if isinstance(guard, Factor):
            pieces = [Piece(p.value * guard.probability, p.conditions) for p in pieces]
        elif isinstance(guard, Condition):
            conditions.append((guard.expression, False))
    for depth in range(len(levels) - 1, -1, -1):
        level = levels[depth]
        bounds = [g for g in guards if isinstance(g, Bound) and g.level == depth]
        pieces = [_sum_piece(levels, depth, bounds, p) for p in pieces]
        conditions.extend((e, level.strict) for e in level.nonempty)
        conditions.extend((e, False) for e in _bound_conditions(level, bounds))
    result: Count = list(moved)
    outer_conditions = _settle(conditions, levels)
    for piece in pieces:
        result.append(Piece(piece.value, piece.conditions + outer_conditions))
    return result


def _residue_levels(levels: list[Level], guards: list, residue: Residue, count: Count):
    """Levels and guards on which ``residue`` holds in every iteration.

    A test on one level ``v = start + step*k`` (constant start and step) keeps the counters
    ``k`` solving ``c*(start + step*k) + d == remainder (mod modulus)``: ``k = k0 + M*q``, a level
    in ``q`` of ``floor((trip - 1 - k0) / M) + 1`` iterations. A test of ``c*(B*i + j) + d`` on
    two adjacent levels ``0 <= i < A``, ``0 <= j < B`` (unit steps) is the same test on the
    flattened index ``B*i + j``, ``0 <= . < A*B``, when nothing else uses ``i`` or ``j``; over
    more adjacent levels the innermost pair is flattened first, then the next level with it.
    """
    expression = sympy.expand(residue.expression)
    used = [i for i, lv in enumerate(levels) if lv.variable in expression.free_symbols]
    shown = readable(expression)
    if expression.is_Add:
        shown = f"({shown})"  # the whole sum is divided, not its last term
    if not used:
        raise Undefined(f"the remainder test {shown} % {residue.modulus} involves no loop variable")
    while len(used) >= 2 and used == list(range(used[0], used[0] + len(used))):
        # adjacent levels, innermost pair first: (i*nq*np + j*np + k) is the index of i over
        # the flattened (j, k)
        levels, guards, expression = _flattened(levels, guards, expression, used[-2], count)
        used = used[:-1]
    if len(used) != 1:
        raise Undefined(f"the remainder test {shown} % {residue.modulus} mixes loop variables")
    index = used[0]
    level = levels[index]
    slope = sympy.diff(expression, level.variable)
    offset = sympy.expand(expression - slope * level.variable)
    step, begin = level.step, level.start
    if (
        step is None
        or begin is None
        or level.factor is not None
        or not all(c.is_Integer for c in (slope, offset, step, begin))
    ):
        raise Undefined(
            f"the remainder test {shown} % {residue.modulus} needs a constant start and step "
            f"of the loop at line {level.line}"
        )
    # c*(start + step*k) + d == r (mod m)  <=>  a*k == b (mod m)
    modulus = residue.modulus
    a = int(slope * step) % modulus
    b = int(residue.remainder - offset - slope * begin) % modulus
    common = sympy.igcd(a, modulus)
    if b % common:
        return levels, guards + [Factor(sympy.Integer(0))]
    period = modulus // common
    first = (b // common) * sympy.mod_inverse(a // common, period) % period if period > 1 else 0
    counter = sympy.Dummy("q", integer=True, nonnegative=True)
    start = begin + step * first
    kept = Level(
        variable=level.variable,
        counter=counter,
        value=start + step * period * counter,
        trip=sympy.floor((level.trip - 1 - first) / period) + 1,
        nonempty=level.nonempty,
        strict=level.strict,
        low=level.low,
        high=level.high,
        step=step * period,
        start=start,
        line=level.line,
    )
    return levels[:index] + [kept] + levels[index + 1 :], guards


def _flattened(levels: list[Level], guards: list, expression: sympy.Expr, index: int, count: Count):
    """Merge levels ``index`` and ``index + 1`` into their flattened index (see above)."""
    outer, inner = levels[index], levels[index + 1]
    pair = {outer.variable, inner.variable}
    problem = Undefined(
        f"the remainder test {readable(expression)} is not over the flattened index of the loops "
        f"at lines {outer.line} and {inner.line}"
    )
    slope = sympy.diff(expression, inner.variable)
    units = all(lv.start == 0 and lv.step == 1 and lv.factor is None for lv in (outer, inner))
    if not units or not slope.is_Integer or slope == 0:
        raise problem
    if sympy.expand(sympy.diff(expression, outer.variable) - slope * inner.trip) != 0:
        raise problem
    tied = [inner.trip, *inner.nonempty]
    for lv in levels[index + 2 :]:
        tied += [lv.trip, *lv.nonempty, *(x for x in (lv.value, lv.start, lv.low, lv.high) if x)]
    for piece in count:
        tied += [piece.value, *piece.conditions]
    for guard in guards:
        if isinstance(guard, Bound) and guard.level in (index, index + 1):
            raise problem
        if isinstance(guard, Residue):
            tied.append(guard.expression)
    if any(pair & sympy.sympify(x).free_symbols for x in tied):
        raise problem
    flat = sympy.Dummy("flat", integer=True)
    counter = sympy.Dummy("k", integer=True, nonnegative=True)
    trip = sympy.expand(outer.trip * inner.trip)
    merged = Level(
        variable=flat,
        counter=counter,
        value=counter,
        trip=trip,
        nonempty=outer.nonempty + inner.nonempty,
        strict=outer.strict or inner.strict,
        low=sympy.Integer(0),
        high=trip - 1,
        step=sympy.Integer(1),
        start=sympy.Integer(0),
        line=outer.line,
    )
    shifted = [
        Bound(g.level - 1, g.lower, g.value) if isinstance(g, Bound) and g.level > index else g
        for g in guards
    ]
    rest = sympy.expand(expression - slope * (outer.variable * inner.trip + inner.variable))
    merged_levels = levels[:index] + [merged] + levels[index + 2 :]
    return merged_levels, shifted, slope * flat + rest


def _settle(conditions: list[tuple[sympy.Expr, bool]], levels: list[Level]) -> list[sympy.Expr]:
    """Drop proved conditions; keep parameter-only ones; refuse the rest."""
    kept: list[sympy.Expr] = []
    variables = {level.variable for level in levels}
    for expression, strict in conditions:
        if prove_nonnegative(expression, levels):
            continue
        if strict:
            raise Undefined(
                f"the loop only ends if {readable(expression)} >= 0, which cannot be shown "
                "(else it never ends)"
            )
        if expression.free_symbols & variables:
            raise Undefined(
                f"cannot show that the range {readable(expression)} >= 0 is non-empty for every "
                "iteration of the enclosing loops"
            )
        value = _constant_value(expression)
        if value is not None and value < 0:
            kept.append(sympy.Integer(-1))
        elif value is None:
            kept.append(expression)
    return kept


def _constant_value(expression: sympy.Expr) -> sympy.Expr | None:
    """The number ``expression`` equals whatever the values of its symbols, or None.

    A polynomial is constant exactly when its expansion is a number, which is much cheaper
    to learn than what ``sympy.simplify`` makes of it; other expressions are simplified.
    """
    if expression.is_Number:
        return expression
    if expression.is_polynomial():
        expanded = sympy.expand(expression)
        return expanded if expanded.is_number else None
    if _takes_two_values(expression):
        return None  # two values prove it is not constant; sympy.simplify is far slower
    simplified = sympy.simplify(expression)
    return simplified if simplified.is_number else None


def _takes_two_values(expression: sympy.Expr) -> bool:
    """Whether ``expression`` evaluates to two different finite numbers at two points of its
    symbols' domain (each symbol a distinct small and a distinct larger integer, negative for
    a symbol assumed not positive); False when that is not shown."""
    symbols = sorted(expression.free_symbols, key=str)
    values = []
    for base in (7, 61):
        point = {
            symbol: sympy.Integer(-(base + 2 * index) if _below_zero(symbol) else base + 2 * index)
            for index, symbol in enumerate(symbols)
        }
        try:
            value = expression.xreplace(point)
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        if not value.is_number or not value.is_finite:
            return False
        values.append(value)
    return (values[0] - values[1]).is_zero is False


def _below_zero(symbol: sympy.Symbol) -> bool:
    """Whether a symbol's assumptions keep it from positive values (negative, nonpositive)."""
    return bool(symbol.is_negative or symbol.is_positive is False)


def _bound_conditions(level: Level, bounds: list[Bound]) -> list[sympy.Expr]:
    conditions: list[sympy.Expr] = []
    if not bounds:
        return conditions
    if level.low is None or level.high is None:
        raise Undefined(
            f"a condition tests the variable of the loop at line {level.line}, "
            "whose range is not known"
        )
    lows = [b.value for b in bounds if b.lower]
    highs = [b.value for b in bounds if not b.lower]
    low_all = lows + [level.low]
    high_all = highs + [level.high]
    for high in high_all:
        for low in low_all:
            if high is level.high and low is level.low:
                continue
            conditions.append(high - low + 1)
    return conditions


def _counter_limits(level: Level, bounds: list[Bound], domain: list[Level]):
    k = level.counter
    low: list[sympy.Expr] = [sympy.Integer(0)]
    high: list[sympy.Expr] = [level.trip - 1]
    if bounds and level.factor is not None and level.start is not None:
        _geometric_limits(level, bounds, domain, low, high)
    elif bounds:
        if level.step is None or level.start is None:
            raise Undefined(f"condition on the induction variable of the loop at line {level.line}")
        step = level.step
        magnitude = step if step_positive(step) else -step
        for bound in bounds:
            distance = (
                (bound.value - level.start) if step_positive(step) else (level.start - bound.value)
            )
            if bound.lower == step_positive(step):
                low.append(sympy.ceiling(distance / magnitude))
            else:
                high.append(sympy.floor(distance / magnitude))
    low = _tightest(low, domain, largest=True)
    high = _tightest(high, domain, largest=False)
    return k, low, high


def _geometric_limits(level: Level, bounds, domain, low: list, high: list) -> None:
    """Counter limits of guards on ``v = start * factor**k`` (start >= 1): logarithms."""
    for bound in bounds:
        if bound.lower and prove_nonnegative(level.start - bound.value, domain):
            continue  # v >= start >= bound always holds
        if not prove_nonnegative(bound.value - 1, domain):
            raise Undefined(
                f"a condition compares the geometric variable of the loop at line {level.line} "
                f"with {readable(bound.value)}, which may be < 1"
            )
        exponent = sympy.log(bound.value / level.start, level.factor)
        if bound.lower:
            low.append(sympy.ceiling(exponent))
        else:
            high.append(sympy.floor(exponent))


def step_positive(step: sympy.Expr) -> bool:
    """Whether an additive step counts upwards (steps are never zero here)."""
    return bool(step.is_positive) or (not step.is_number and not (-step).is_positive)


def _tightest(candidates: list[sympy.Expr], domain: list[Level], largest: bool) -> sympy.Expr:
    kept: list[sympy.Expr] = []
    for candidate in candidates:
        dominated = False
        for other in kept:
            difference = other - candidate if largest else candidate - other
            if prove_nonnegative(difference, domain):
                dominated = True
                break
        if dominated:
            continue
        kept = [
            o
            for o in kept
            if not prove_nonnegative((candidate - o) if largest else (o - candidate), domain)
        ]
        kept.append(candidate)
    if len(kept) == 1:
        return kept[0]
    return sympy.Max(*kept) if largest else sympy.Min(*kept)


_POWER_SUMS: dict[int, sympy.Expr] = {}
_X = sympy.Dummy("x", integer=True)


def _power_sum(power: int) -> sympy.Expr:
    """Faulhaber's ``sum(t**power, t = 0..x)`` as a polynomial in ``_X``."""
    if power not in _POWER_SUMS:
        t = sympy.Dummy("t", integer=True)
        _POWER_SUMS[power] = sympy.expand(sympy.summation(t**power, (t, 0, _X)))
    return _POWER_SUMS[power]


def closed_sum(value: sympy.Expr, k: sympy.Symbol, low: sympy.Expr, high: sympy.Expr):
    """``sum(value, k = low..high)`` in closed form (sympy's convention for empty ranges).

    Polynomials in ``k`` use Faulhaber's formulas directly (fast, any coefficients); other
    summands go to :func:`sympy.summation`. Raises Undefined when there is no closed form.
    """
    try:
        polynomial = sympy.Poly(sympy.expand(value), k)
    except sympy.PolynomialError:
        polynomial = None
    if polynomial is not None:
        result = sympy.Integer(0)
        for (power,), coefficient in polynomial.terms():
            formula = _power_sum(power)
            result += coefficient * (formula.subs(_X, high) - formula.subs(_X, low - 1))
        return result
    result = sympy.summation(value, (k, low, high))
    if result.has(sympy.Sum):
        raise Undefined("no closed form")
    return result


def _sum_by_residues(value, k, low, high, line: int) -> sympy.Expr:
    """Sum a value holding ``floor``/``ceiling`` of ``(p/c)*k + b`` by residues of k mod c.

    With ``k = low + c*q + r`` each such term becomes ``p*q + floor(...)`` free of ``q``, so the
    sum over ``q`` (for each residue ``r``) has a closed form.
    """
    problem = Undefined(f"no closed form for the sum over the loop at line {line}")
    rounding = [a for a in value.atoms(sympy.floor, sympy.ceiling) if k in a.free_symbols]
    if not rounding:
        raise problem
    period = 1
    for atom in rounding:
        slope = sympy.diff(atom.args[0], k)
        if not slope.is_Rational or k in sympy.expand(atom.args[0] - slope * k).free_symbols:
            raise problem
        period = sympy.ilcm(period, slope.q)
    # Each residue multiplies the size of the formula: keep it readable (and fast).
    if period == 1 or period > 4 or sympy.count_ops(value) * period > 200:
        raise problem
    q = sympy.Dummy("q", integer=True, nonnegative=True)
    total_sum = sympy.Integer(0)
    for residue in range(period):
        shifted = value.subs(k, low + period * q + residue)
        last = sympy.floor((high - low - residue) / period)
        try:
            part = closed_sum(shifted, q, sympy.Integer(0), last)
        except Undefined:
            raise problem from None
        if q in part.free_symbols:
            raise problem
        total_sum += part
    return total_sum


def _sum_piece(levels: list[Level], depth: int, bounds: list[Bound], piece: Piece) -> Piece:
    level = levels[depth]
    outer = levels[:depth]
    for condition in piece.conditions:
        if level.variable in condition.free_symbols:
            raise Undefined(f"a condition depends on the loop variable of line {level.line}")
    value = piece.value
    if level.variable in value.free_symbols:
        if level.value is None:
            raise Undefined(
                f"the induction variable of the annotated loop at line {level.line} "
                "is used by an inner loop"
            )
        value = value.subs(level.variable, level.value)
    k, low, high = _counter_limits(level, bounds, outer)
    if k not in value.free_symbols:
        summed = value * (high - low + 1)
    else:
        rounded = any(k in a.free_symbols for a in value.atoms(sympy.floor, sympy.ceiling))
        if rounded:
            summed = _sum_by_residues(value, k, low, high, level.line)
        else:
            try:
                summed = closed_sum(value, k, low, high)
            except Undefined:
                raise Undefined(
                    f"no closed form for the sum over the loop at line {level.line}"
                ) from None
    return Piece(
        sympy.expand(summed) if not summed.has(sympy.Min, sympy.Max) else summed, piece.conditions
    )
