"""Measurement-point advice: prediction error at a target reached per measurement cost.

Data: two-parameter functions of ``p`` (processes) and ``n``, either ``c0 + c1*f(p)*g(n)`` or
``c0 + c1*f(p) + c2*g(n)`` with ``f`` and ``g`` drawn from Extra-P's 42 building blocks and
every component at least 5 % of the value at the largest measured point (coefficients
log-uniform in 1e-2..1e2), measured with 5 repetitions under uniform noise of 5 %. Every case
starts from the usual sparse design: five values of ``p`` (4..64) at the smallest ``n``, five of
``n`` (10..50) at the smallest ``p``, and one point off these lines (p=8, n=20). The target is
p=1024, n=200 (16 and 4 times beyond the measurements). The cost of a run is its true time
times ``p``; budgets are fractions of what completing the 5 x 5 grid costs.

Strategies, each measured (from the true function, with noise) and then modeled by perfcast's
``pmnf`` modeler, so that only the choice of points differs: ``advise`` (perfcast's advice,
budget in core time), ``extrap`` (Extra-P's measurement point advisor, its GPR mode, with the
same budget and the same search space, p in 4..256 and n in 10..200), ``random`` (random points
of that space until the budget is spent), ``grid`` (the full 5 x 5 grid) and ``start`` (no new
point). ``ordered`` is the advice's plan bought in order, stopping before the first point
whose upper price (the upper end of its cost interval) exceeds what the points before it left
of the budget in truth. ``loop`` is the advice as ``perfcast run --advise`` takes it: fit,
advise with the budget left, measure the first suggested point not yet measured whose upper
price fits what is left, count what it took in truth, and again, until no point fits
(``--loop-price``: how each round's advice prices its candidates; with ``probe-first`` a
round runs its point once first, which must fit at one run's upper price, and then one run at a
time while the upper price of a new run, from the runs taken there, fits). Figures: median and 90th
percentile of the relative error at the target over the cases, the median cost actually spent
as a share of the grid's and the share of cases whose true cost exceeds the budget.

Run from the repository root:
``python -m benchmarks.advice [--quick] [--cases N] [--first K] [--seed S]
[--tools advise,ordered,loop,extrap,random] [--per-case FILE]`` (``--first K``: only the first
K of the N cases, drawn and measured as in the full run, for quicker development runs;
``--per-case``: every case's error, cost share and bought points per strategy as JSON, to
compare strategies case by case or across runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.extrap_env import DEFAULT_VENV, run_driver
from benchmarks.synthetic import BUILDING_BLOCKS
from perfcast.analyze.advice import Suggestion, next_run_core_hours
from perfcast.api import advise, fit, predict
from perfcast.core.experiment import Experiment

P_LINE = [4.0, 8.0, 16.0, 32.0, 64.0]
N_LINE = [10.0, 20.0, 30.0, 40.0, 50.0]
P_SPACE = [4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
N_SPACE = [10.0, 20.0, 30.0, 40.0, 50.0, 75.0, 100.0, 150.0, 200.0]
TARGET = {"p": 1024.0, "n": 200.0}
REPETITIONS = 5
NOISE = 0.05
CANDIDATES = f"p={','.join(map(str, P_SPACE))},n={','.join(map(str, N_SPACE))}"
#: Most rounds of the ``loop`` strategy (as ``perfcast run --advise``'s default).
LOOP_ROUNDS = 50
DRIVER = Path(__file__).resolve().parent / "extrap_advisor_driver.py"

Function = Callable[[np.ndarray, np.ndarray], np.ndarray]


def block(index: int, x: np.ndarray) -> np.ndarray:
    exponent, log_exponent = BUILDING_BLOCKS[index]
    return np.asarray(x, dtype=float) ** float(exponent) * np.log2(x) ** log_exponent


def draw_function(rng: np.random.Generator) -> Function:
    """A two-parameter function whose every component has at least 5 % at p=64, n=50."""
    while True:  # blocks and coefficients redrawn together: some blocks admit no 5 % share
        f, g = (int(i) for i in rng.integers(len(BUILDING_BLOCKS), size=2))
        product = bool(rng.integers(2))
        c = 10 ** rng.uniform(-2, 2, 3)
        parts = (
            [c[0], c[1] * block(f, 64.0) * block(g, 50.0)]
            if product
            else [c[0], c[1] * block(f, 64.0), c[2] * block(g, 50.0)]
        )
        if min(parts) >= 0.05 * sum(parts):
            break
    if product:
        return lambda p, n: c[0] + c[1] * block(f, p) * block(g, n)
    return lambda p, n: c[0] + c[1] * block(f, p) + c[2] * block(g, n)


def start_points() -> np.ndarray:
    points = {(p, N_LINE[0]) for p in P_LINE} | {(P_LINE[0], n) for n in N_LINE} | {(8.0, 20.0)}
    return np.array(sorted(points))


def measure(function: Function, runs: dict[tuple[float, float], int], rng) -> pd.DataFrame:
    """``runs`` repetitions at each point, noisy."""
    rows = []
    for (p, n), count in runs.items():
        exact = float(function(np.array(p), np.array(n)))
        for _ in range(count):
            value = exact * (1 + rng.uniform(-NOISE, NOISE))
            rows.append({"kernel": "k", "metric": "time", "p": p, "n": n, "value": value})
    return pd.DataFrame(rows)


def cost(function: Function, runs: dict[tuple[float, float], int]) -> float:
    """True core time of ``runs``."""
    return float(sum(function(np.array(p), np.array(n)) * p * k for (p, n), k in runs.items()))


def error_at_target(frame: pd.DataFrame, function: Function) -> float:
    (prediction,) = predict(fit(Experiment.from_frame(frame)), TARGET)
    truth = float(function(np.array(TARGET["p"]), np.array(TARGET["n"])))
    return abs(prediction.value - truth) / truth


def plan_advise(frame: pd.DataFrame, budget: float, price: str = "prediction") -> list[Suggestion]:
    advice = advise(
        Experiment.from_frame(frame),
        at=TARGET,
        candidates=CANDIDATES,
        budget=f"{float(budget) / 3600!r}h",
        repetitions=REPETITIONS,
        price=price,
    )
    return advice.suggestions


def bought_in_order(
    function: Function, suggestions: Sequence[Suggestion], budget: float
) -> dict[tuple[float, float], int]:
    """The suggestions measured in order, stopping before the first whose upper price exceeds
    what is left of ``budget`` after the true cost of those before it."""
    runs: dict[tuple[float, float], int] = {}
    for s in suggestions:
        point = (s.point["p"], s.point["n"])
        left = budget - cost(function, runs)
        if s.core_hours_interval is None or s.core_hours_interval[1] * 3600 > left * (1 + 1e-9):
            break
        runs[point] = runs.get(point, 0) + s.runs
    return runs


def plan_loop(
    function: Function, frame: pd.DataFrame, budget: float, price: str, noise
) -> tuple[dict[tuple[float, float], int], pd.DataFrame]:
    """The measure-model-advise loop of ``perfcast run --advise``: the points it measured and
    its measurements (the true cost of each round counted against ``budget``). With ``price``
    ``"probe-first"`` a round's point is run once first (it must fit at the upper end of one
    run's cost) and its further runs one by one while each fits at the upper price
    :func:`next_run_core_hours` gives from the runs taken there."""
    probe = price == "probe-first"
    runs: dict[tuple[float, float], int] = {}
    measured = frame
    spent = 0.0
    for _ in range(LOOP_ROUNDS):
        left = budget - spent
        if left <= 0:
            break
        suggestions = plan_advise(measured, left, price)
        taken = set(zip(measured.p, measured.n, strict=True))
        # A probing loop commits to one run of a point; the others are priced after it.
        committed = 1 if probe else None
        fits = [
            s
            for s in suggestions
            if (s.point["p"], s.point["n"]) not in taken
            and s.core_hours_interval is not None
            and s.core_hours_interval[1] / s.runs * (committed or s.runs)
            <= left / 3600 * (1 + 1e-9)
        ]
        if not fits:
            break
        point = (fits[0].point["p"], fits[0].point["n"])
        first = committed or fits[0].runs
        runs[point] = first
        measured = pd.concat([measured, measure(function, {point: first}, noise)])
        spent += cost(function, {point: first})
        while runs[point] < fits[0].runs:
            # Each further run priced by the runs taken there (upper end of a new run's time).
            price_next = next_run_core_hours(
                Experiment.from_frame(measured), "time", dict(zip("pn", point, strict=True))
            )
            if price_next is None or price_next * 3600 > (budget - spent) * (1 + 1e-9):
                break
            runs[point] += 1
            measured = pd.concat([measured, measure(function, {point: 1}, noise)])
            spent += cost(function, {point: 1})
    return runs, measured.iloc[len(frame) :]


def plan_random(function: Function, budget: float, rng) -> dict[tuple[float, float], int]:
    space = [(p, n) for p in P_SPACE for n in N_SPACE]
    taken = {tuple(x) for x in start_points()}
    runs: dict[tuple[float, float], int] = {}
    for index in rng.permutation(len(space)):
        point = space[index]
        if point in taken:
            continue
        trial = {**runs, point: REPETITIONS}
        if cost(function, trial) <= budget:
            runs = trial
    return runs


def plan_extrap(frames: list[pd.DataFrame], budgets: np.ndarray, venv: Path) -> list[list[dict]]:
    """Extra-P's suggestions per case and budget, as added repetitions per point."""
    points = start_points()
    values = np.array(
        [
            [
                frame[(frame.p == p) & (frame.n == n)]["value"].to_numpy()[:REPETITIONS]
                for p, n in points
            ]
            for frame in frames
        ]
    )
    existing = np.sum(values.mean(axis=2) * points[:, 0] * REPETITIONS, axis=1)
    arrays = {
        "parameters": np.array(["p", "n"]),
        "points": points,
        "values": values,
        "budgets": existing[:, None] + budgets,
        "series": np.array([",".join(map(str, P_SPACE)), ",".join(map(str, N_SPACE))]),
    }
    return plans_of_document(run_driver(venv, DRIVER, arrays, prefix="perfcast-advice-"))


def plans_of_document(document: dict) -> list[list[dict]]:
    """The Extra-P driver's output (its ``cases``) as added repetitions per point, per case
    and budget."""
    taken = {tuple(x) for x in start_points()}
    plans = []
    for case in document["cases"]:
        plans.append(
            [
                {
                    (float(k[0]), float(k[1])): max(
                        n - (REPETITIONS if tuple(k) in taken else 0), 0
                    )
                    for k, n in suggestion
                }
                for suggestion in case
            ]
        )
    return plans


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 cases instead of 16")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--cases", type=int, help="number of functions (default 16, 4 with --quick)"
    )
    parser.add_argument(
        "--first",
        type=int,
        help="rate only the first FIRST of the cases drawn (same draws and noise as all of them)",
    )
    parser.add_argument("--tools", default="advise,extrap,random")
    parser.add_argument(
        "--loop-price",
        default="upper-first",
        help="how each round of the loop strategy prices its candidates (perfcast advise --price)",
    )
    parser.add_argument("--budgets", default="0.25,0.5,1", help="shares of the grid's cost")
    parser.add_argument("--extrap-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument(
        "--extrap-plans",
        type=Path,
        help="rate the suggestions in this output of the Extra-P driver (of an earlier run with "
        "the same seed and cases, complete or stopped: only its first cases are rated) instead "
        "of running it",
    )
    parser.add_argument(
        "--per-case",
        type=Path,
        help="also write every case's error and cost share per strategy to this JSON file",
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    cases = args.cases or (4 if args.quick else 16)
    shares = [float(s) for s in args.budgets.split(",")]
    tools = args.tools.split(",")
    functions = [draw_function(rng) for _ in range(cases)]
    rated = len(functions[: args.first]) if args.first is not None else cases
    start = {tuple(x): REPETITIONS for x in start_points()}
    grid = {(p, n): REPETITIONS for p in P_LINE for n in N_LINE if (p, n) not in start}
    frames = [measure(f, start, rng) for f in functions]
    grid_costs = np.array([cost(f, grid) for f in functions])
    budgets = grid_costs[:, None] * np.array(shares)[None, :]
    results: dict[str, list[tuple[float, float]]] = {}
    over: dict[str, list[bool]] = {}
    budget_of: dict[str, float] = {}
    per_case: list[dict[str, object]] = []

    def noise_of(name: str, case: int) -> np.random.Generator:
        # Noise of its own per case and strategy: the strategies do not shift each other's draws.
        return np.random.default_rng([args.seed, case, zlib.crc32(name.encode())])

    def record(
        name: str,
        case: int,
        runs: dict[tuple[float, float], int],
        added: pd.DataFrame | None = None,
    ) -> None:
        """Rate the strategy ``name``'s points ``runs`` (measured now unless ``added`` holds
        their measurements)."""
        function = functions[case]
        if added is None:
            added = measure(
                function, {k: v for k, v in runs.items() if v > 0}, noise_of(name, case)
            )
        frame = pd.concat([frames[case], added], ignore_index=True)
        error = error_at_target(frame, function)
        results.setdefault(name, []).append((error, cost(function, runs) / grid_costs[case]))
        over.setdefault(name, []).append(cost(function, runs) > budget_of.get(name, np.inf))
        per_case.append(
            {
                "case": case,
                "strategy": name,
                "error": error,
                "cost_share": cost(function, runs) / grid_costs[case],
                "points": [[p, n, k] for (p, n), k in sorted(runs.items()) if k > 0],
            }
        )

    extrap_plans = None
    if args.extrap_plans is not None:
        extrap_plans = plans_of_document(json.loads(args.extrap_plans.read_text()))
        rated = min(rated, len(extrap_plans))
    elif "extrap" in tools:
        extrap_plans = plan_extrap(frames[:rated], budgets[:rated], args.extrap_venv)
    for case, function in enumerate(functions[:rated]):
        record("start", case, {})
        record("grid", case, grid)
        for b, share in enumerate(shares):
            for name in (f"advise {share:g}", f"loop {share:g}", f"extrap {share:g}"):
                budget_of[name] = budgets[case, b] * (1 + 1e-9)
            if "advise" in tools or "ordered" in tools:
                suggestions = plan_advise(frames[case], budgets[case, b])
            if "advise" in tools:
                runs = {(s.point["p"], s.point["n"]): s.runs for s in suggestions}
                record(f"advise {share:g}", case, runs)
            if "ordered" in tools:
                name = f"ordered {share:g}"
                budget_of[name] = budgets[case, b] * (1 + 1e-9)
                record(name, case, bought_in_order(function, suggestions, budgets[case, b]))
            if "loop" in tools:
                name = f"loop {share:g}"
                runs, added = plan_loop(
                    function, frames[case], budgets[case, b], args.loop_price, noise_of(name, case)
                )
                record(name, case, runs, added)
            if extrap_plans is not None:
                record(f"extrap {share:g}", case, extrap_plans[case][b])
            if "random" in tools:
                budget_of[f"random {share:g}"] = budgets[case, b] * (1 + 1e-9)
                record(f"random {share:g}", case, plan_random(function, budgets[case, b], rng))
    command = "python -m benchmarks.advice " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"{rated} of {cases} cases, seed {args.seed}: `{command.strip()}`\n")
    print("| strategy (budget: share of the grid's cost) | median error | 90th pct error | "
          "median cost / grid | over budget |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, rows in results.items():
        errors, costs = np.array(rows).T
        print(
            f"| {name} | {100 * np.median(errors):.1f} % | "
            f"{100 * np.percentile(errors, 90):.1f} % | {np.median(costs):.2f} | "
            f"{100 * np.mean(over[name]):.0f} % |"
        )
    if args.per_case is not None:
        args.per_case.write_text(json.dumps({"seed": args.seed, "cases": per_case}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
