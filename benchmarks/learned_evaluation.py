"""Issue 17's remaining targets on instruction counts: accuracy over several training draws,
the reductions with their cost in instructions, and the early phase predicting the whole run.

Reads the tables ``benchmarks.learned_instructions --collect`` writes (``APP.O2.csv``, and
where collected ``APP.O2.plain.csv``, the uninstrumented build on the same first inputs, and
``APP.O2.early.csv``, the features at ``#pragma perfcast features_end``):

``--accuracy``
    Mean relative error (the paper's formula) on the held-out runs at 10/30/50 % training
    share, over several training draws (``--seeds``): the method chosen by cross-validation on
    the training share alone (the held-out runs play no part), every method's mean, features
    against parameters only (and, for tables with ``:rank_max`` columns, features without
    them).
``--reductions``
    The collection's cost in instructions (instrumented minus plain build, same inputs) split
    into a fixed part and a cost per counter update, fitted on the paired runs; each feature's
    cost in instructions; the error at 50 % training before and after each reduction, the
    time reduction's threshold a share of the run's instructions (the paper's Tables 5-6).
``--early``
    A model learned from the early phase's features against one learned from the whole run's,
    the target in both the whole run's instructions.
``--reduce-choice``
    At 10 % training share: whether reducing the features before fitting helps the tiny
    training sets, the reduction (none, importance 95 % or 80 %, or dropping features that
    correlate above 0.99 with a better-ranked one) chosen together with the method by
    cross-validation on the training share alone.

Run from the repository root, e.g. ``.venv/bin/python -m benchmarks.learned_evaluation
--tables /tmp/learn3-runs --apps bfs,solver --accuracy``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from benchmarks.learned import SHARES, _error, _split
from benchmarks.learned_instructions import TARGET, parameters_of
from perfcast.core.errors import InputError
from perfcast.io.run_table import RunTable, from_columns, read_run_table
from perfcast.model.learned import METHODS, LearnedModel

#: Suffix of a counter's largest per-rank value ($PERFCAST_FEATURES_RANK_MAX).
RANK_MAX = ":rank_max"
#: MPI collectives: every rank calls them once per call site visit, so a count over the ranks
#: divided by the rank count is one rank's number of updates of that counter.
COLLECTIVES = ("MPI_Allreduce", "MPI_Allgather", "MPI_Bcast", "MPI_Reduce", "MPI_Barrier")


def column_sets(app: str, table: RunTable) -> dict[str, list[str] | None]:
    """The feature sets compared: all columns, without the per-rank maxima when the table has
    them, and the parameters only."""
    sets: dict[str, list[str] | None] = {"features": None}
    if any(name.endswith(RANK_MAX) for name in table.columns):
        sets["features, sums over ranks only"] = [
            n
            for n in table.columns
            if not n.endswith(RANK_MAX) and n not in (TARGET, "time", "cpu")
        ]
    sets["parameters"] = parameters_of(app)
    return sets


def held_out_errors(
    table: RunTable, features: list[str] | None, share: float, seed: int, trees: int
) -> tuple[dict[str, float], str]:
    """Held-out error of every method for one training draw, and the method the training
    share's cross-validation chooses."""
    train, test = _split(table.rows, share, seed=seed)
    errors: dict[str, float] = {}
    best = (np.inf, "")
    for method in METHODS:
        model = LearnedModel(method, trees=trees).fit(table.take(train), TARGET, features=features)
        errors[method] = _error(model, table.take(test))
        best = min(best, (model.cv_error_, method))
    return errors, best[1]


def accuracy_over_draws(
    tables: dict[str, RunTable], seeds: list[int], trees: int
) -> tuple[str, str]:
    """Two tables: the CV-chosen method's held-out error, mean (min-max) over the draws, with
    how often each method was chosen; and every method's mean."""
    chosen_lines = [
        "| program | runs | columns | " + " | ".join(f"{s:.0%} train" for s in SHARES) + " |",
        "|---|---|---|" + "---|" * len(SHARES),
    ]
    method_lines = [
        "| program | columns | method | " + " | ".join(f"{s:.0%} train" for s in SHARES) + " |",
        "|---|---|---|" + "---|" * len(SHARES),
    ]
    for app, table in tables.items():
        for label, features in column_sets(app, table).items():
            cells = []
            per_method: dict[str, list[list[float]]] = {m: [] for m in METHODS}
            for share in SHARES:
                picked, counts = [], dict.fromkeys(METHODS, 0)
                runs: dict[str, list[float]] = {m: [] for m in METHODS}
                for seed in seeds:
                    errors, method = held_out_errors(table, features, share, seed, trees)
                    picked.append(errors[method])
                    counts[method] += 1
                    for m, e in errors.items():
                        runs[m].append(e)
                often = ", ".join(f"{m} {c}" for m, c in counts.items() if c)
                cells.append(
                    f"{np.mean(picked):.1%} ({min(picked):.1%}-{max(picked):.1%}; {often})"
                )
                for m in METHODS:
                    per_method[m].append(runs[m])
            chosen_lines.append(f"| {app} | {table.rows} | {label} | " + " | ".join(cells) + " |")
            for m in METHODS:
                means = " | ".join(f"{np.mean(e):.1%}" for e in per_method[m])
                method_lines.append(f"| {app} | {label} | {m} | {means} |")
    return "\n".join(chosen_lines), "\n".join(method_lines)


#: Features whose absolute correlation with a better-ranked feature exceeds this are dropped by
#: the correlation reduction of ``--reduce-choice``.
CORRELATED = 0.99
#: The reductions ``--reduce-choice`` offers the cross-validation, by name.
CHOICE_REDUCTIONS = ("none", "importance 95 %", "importance 80 %", "correlation 0.99")


def correlation_reduced(table: RunTable, features: list[str]) -> list[str]:
    """The numeric, non-constant ``features`` left after dropping each one whose absolute
    correlation with a feature ranked before it exceeds ``CORRELATED``, ranked by the absolute
    correlation of their logarithms (``log(1 + x)`` for values >= 0, else as they are) with the
    logarithm of the target: of features that say the same, the one closest to the target
    stays."""

    def scaled(values: np.ndarray) -> np.ndarray:
        return np.log1p(values) if values.min() >= 0 else values

    target = np.log(table.numeric[TARGET])
    columns = {
        n: scaled(table.numeric[n])
        for n in features
        if n in table.numeric and np.ptp(table.numeric[n]) > 0
    }
    rank = {n: abs(float(np.corrcoef(c, target)[0, 1])) for n, c in columns.items()}
    kept: list[str] = []
    for name in sorted(columns, key=lambda n: -rank[n]):
        if all(abs(np.corrcoef(columns[name], columns[k])[0, 1]) <= CORRELATED for k in kept):
            kept.append(name)
    return kept


def reduction_choice(tables: dict[str, RunTable], seeds: list[int], trees: int) -> str:
    """At 10 % training share, per program: the held-out error of the method chosen by CV
    without reductions, and of the (method, reduction) pair chosen by CV, mean (min-max) over
    the draws, with how often each reduction was chosen. A method that cannot learn a reduced
    set (pmnf without a positive feature left) is no candidate."""
    share = SHARES[0]
    lines = [
        "| program | training runs | CV-chosen method, no reduction | CV-chosen method and "
        "reduction | reductions chosen |",
        "|---|---|---|---|---|",
    ]
    for app, table in tables.items():
        plain, reduced = [], []
        counts = dict.fromkeys(CHOICE_REDUCTIONS, 0)
        all_features = [n for n in table.columns if n not in (TARGET, "time", "cpu")]
        for seed in seeds:
            train, test = _split(table.rows, share, seed=seed)
            training, held = table.take(train), table.take(test)
            fits: list[tuple[float, str, float]] = []
            for reduction in CHOICE_REDUCTIONS:
                options: dict[str, float] = {}
                features = all_features
                if reduction.startswith("importance"):
                    options["reduce_importance"] = float(reduction.split()[1]) / 100
                elif reduction.startswith("correlation"):
                    features = correlation_reduced(training, all_features)
                for method in METHODS:
                    model = LearnedModel(method, trees=trees, **options)  # type: ignore[arg-type]
                    try:
                        model.fit(training, TARGET, features=features)
                    except InputError as error:  # pmnf with no positive feature left
                        if error.reason != "no-features":
                            raise
                        continue
                    fits.append((model.cv_error_, reduction, _error(model, held)))
            unreduced = min(f for f in fits if f[1] == "none")
            chosen = min(fits)
            plain.append(unreduced[2])
            reduced.append(chosen[2])
            counts[chosen[1]] += 1
        often = ", ".join(f"{r} {c}" for r, c in counts.items() if c)
        lines.append(
            f"| {app} | {len(train)} | {np.mean(plain):.1%} ({min(plain):.1%}-{max(plain):.1%}) "
            f"| {np.mean(reduced):.1%} ({min(reduced):.1%}-{max(reduced):.1%}) | {often} |"
        )
    return "\n".join(lines)


def updates_per_second(table: RunTable) -> np.ndarray:
    """Per run, counter updates per second of measured cost: from the collective whose
    counted calls are largest, one rank's updates being its calls over the ranks divided by
    the rank count (``p``)."""
    calls = [
        n
        for n in table.costs
        if ":mpi_calls:" in n and n.split(":")[-1] in COLLECTIVES and not n.endswith(RANK_MAX)
    ]
    if not calls:
        raise ValueError(f"{table.source}: no MPI collective counted to scale the costs by")
    name = max(calls, key=lambda n: float(np.mean(table.numeric[n])))
    return (table.numeric[name] / table.numeric["p"]) / table.costs[name]


def collection_cost(instrumented: RunTable, plain: RunTable, fixed: float) -> tuple[float, str]:
    """Fit ``instrumented - plain = fixed + per_update * updates`` on the paired runs, the
    ``fixed`` part measured (``learned_instructions --fixed-part``).

    Returns the instructions per counter update and a table row of the fit: runs, the
    overhead's range as a share of the plain count, the fixed part, the per-update cost, the
    largest residual of the fit relative to the overhead.
    """
    rows = plain.rows
    pairs = instrumented.take(np.arange(rows))
    for name in ("p", *(k for k in plain.columns if k not in (TARGET,))):
        if not np.allclose(pairs.numeric[name], plain.numeric[name]):
            raise ValueError(f"{plain.source}: column {name} is not the instrumented runs'")
    overhead = pairs.numeric[TARGET] - plain.numeric[TARGET]
    updates = sum(pairs.costs.values()) * updates_per_second(pairs)
    per_update = float(np.dot(updates, overhead - fixed) / np.dot(updates, updates))
    residual = np.max(np.abs(fixed + per_update * updates - overhead) / overhead)
    share = overhead / plain.numeric[TARGET]
    row = (
        f"{rows} | {share.min():.1%}-{share.max():.1%} | {fixed:,.0f} | {per_update:.2f} "
        f"| {residual:.2%}"
    )
    return per_update, row


def in_instructions(table: RunTable, per_update: float, fixed: float = 0.0) -> RunTable:
    """The table with each feature's cost in instructions, and in place of the seconds (the
    reductions' measure of a run's cost) the run's instructions less the ``fixed`` part of
    the collection, so the time reduction's threshold is a share of the program's own work
    and its counters."""
    scale = updates_per_second(table) * per_update
    columns: dict[str, object] = {
        n: table.column(n) for n in table.columns if n not in ("time", "cpu")
    }
    columns["time"] = table.numeric[TARGET] - fixed
    columns |= {f"cost:{n}": c * scale for n, c in table.costs.items()}
    return from_columns(columns, table.source)  # type: ignore[arg-type]


def less_fixed(table: RunTable, fixed: float) -> RunTable:
    """The table with the fixed instructions of the collection (its cost calibration and the
    writing of the records, the same in every run) taken off the target."""
    columns: dict[str, object] = {n: table.column(n) for n in table.columns}
    columns[TARGET] = table.numeric[TARGET] - fixed
    columns |= {f"cost:{n}": c for n, c in table.costs.items()}
    return from_columns(columns, table.source)  # type: ignore[arg-type]


REDUCTIONS = (
    ("none", {}),
    ("time 5 %", {"reduce_time": 0.05}),
    ("time 1 %", {"reduce_time": 0.01}),
    ("time 0.1 %", {"reduce_time": 0.001}),
    ("time 5 %, importance 95 %", {"reduce_time": 0.05, "reduce_importance": 0.95}),
    ("time 5 %, importance 80 %", {"reduce_time": 0.05, "reduce_importance": 0.8}),
)


def costliest(table: RunTable, count: int = 4) -> str:
    """The features whose collection costs most, as a share of the run's instructions less
    the fixed part (``time`` of :func:`in_instructions`; mean over the runs), in a table
    row's words."""
    shares = {
        n: float(np.mean(c / table.numeric["time"]))
        for n, c in table.costs.items()
        if not n.endswith(RANK_MAX)
    }
    total = sum(shares.values())
    top = sorted(shares, key=shares.__getitem__, reverse=True)[:count]
    return f"{total:.2%} | " + "; ".join(f"`{n}` {shares[n]:.2%}" for n in top)


def reductions_in_instructions(
    tables: dict[str, RunTable],
    plains: dict[str, RunTable],
    fixed: dict[str, float],
    seeds: list[int],
    trees: int,
) -> tuple[str, str]:
    """The collection cost fit per program (and the costliest features), and the error before
    and after each reduction (50 % training, mean over the draws), instrumentation features
    only (no per-rank maxima), the target the instructions less the fixed part."""
    fits = [
        "| program | paired runs | overhead / plain instructions | fixed instructions (measured) "
        "| instructions per update | largest fit residual | counters' cost, all runs "
        "| costliest features |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines = [
        "| program | method | reduction | features kept | collection cost (instructions) "
        "| error, 50 % train (min-max) |",
        "|---|---|---|---|---|---|",
    ]
    for app, table in tables.items():
        per_update, row = collection_cost(table, plains[app], fixed[app])
        priced = less_fixed(in_instructions(table, per_update, fixed[app]), fixed[app])
        fits.append(f"| {app} | {row} | {costliest(priced)} |")
        features = [n for n in priced.costs if not n.endswith(RANK_MAX)]
        for method in ("extra-trees", "nn-linear", "products"):
            for label, options in REDUCTIONS:
                errors, kept, cost = [], [], []
                for seed in seeds:
                    train, test = _split(priced.rows, 0.5, seed=seed)
                    model = LearnedModel(method, trees=trees, **options)  # type: ignore[arg-type]
                    model.fit(priced.take(train), TARGET, features=features)
                    errors.append(_error(model, priced.take(test)))
                    kept.append(len(model.features_))
                    cost.append(model.overhead_.get("after", 0.0))
                lines.append(
                    f"| {app} | {method} | {label} | {np.mean(kept):.0f} of {len(features)} | "
                    f"{np.mean(cost):.2%} | {np.mean(errors):.1%} "
                    f"({min(errors):.1%}-{max(errors):.1%}) |"
                )
    return "\n".join(fits), "\n".join(lines)


def early_phase(
    whole: dict[str, RunTable], early: dict[str, RunTable], seeds: list[int], trees: int
) -> str:
    """Held-out error of the whole run's instructions from the early phase's features and from
    the whole run's, the method chosen by cross-validation on the training share (mean
    (min-max) over the draws, and how often each method was chosen), then every method's
    mean."""
    lines = [
        "| program | features of | " + " | ".join(f"{s:.0%} train" for s in SHARES) + " |",
        "|---|---|" + "---|" * len(SHARES),
    ]
    method_lines = [
        "| program | features of | method | " + " | ".join(f"{s:.0%} train" for s in SHARES) + " |",
        "|---|---|---|" + "---|" * len(SHARES),
    ]
    for app in early:
        if not np.array_equal(early[app].numeric[TARGET], whole[app].numeric[TARGET]):
            raise ValueError(f"{early[app].source}: not the runs of {whole[app].source}")
        for label, table in (("the whole run", whole[app]), ("the early phase", early[app])):
            cells = []
            means: dict[str, list[str]] = {m: [] for m in METHODS}
            for share in SHARES:
                draws = [held_out_errors(table, None, share, seed, trees) for seed in seeds]
                picked = [errors[method] for errors, method in draws]
                counts = {m: sum(1 for _, chosen in draws if chosen == m) for m in METHODS}
                often = ", ".join(f"{m} {c}" for m, c in counts.items() if c)
                cells.append(
                    f"{np.mean(picked):.1%} ({min(picked):.1%}-{max(picked):.1%}; {often})"
                )
                for m in METHODS:
                    means[m].append(f"{np.mean([errors[m] for errors, _ in draws]):.1%}")
            lines.append(f"| {app} | {label} | " + " | ".join(cells) + " |")
            method_lines.extend(
                f"| {app} | {label} | {m} | " + " | ".join(means[m]) + " |" for m in METHODS
            )
    return "\n".join(lines) + "\n\nEvery method, mean over the draws:\n\n" + "\n".join(method_lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, required=True, help="folder of the run tables")
    parser.add_argument("--apps", default="nbody,bfs,solver")
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--reductions", action="store_true")
    parser.add_argument("--early", action="store_true")
    parser.add_argument("--reduce-choice", action="store_true")
    parser.add_argument("--seeds", type=int, default=5, help="training draws")
    parser.add_argument(
        "--less-fixed",
        action="store_true",
        help="--accuracy, --early, --reduce-choice: the target less the collection's fixed "
        "instructions "
        "(fitted on APP.O2.plain.csv)",
    )
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args(argv)
    apps = args.apps.split(",")
    seeds = [11 + k for k in range(args.seeds)]
    tables = {app: read_run_table(args.tables / f"{app}.O2.csv") for app in apps}
    plains = {
        app: read_run_table(args.tables / f"{app}.O2.plain.csv") for app in apps if args.reductions
    }
    fixed = {
        app: float(read_run_table(args.tables / f"{app}.O2.fixed.csv").numeric[TARGET][0])
        for app in apps
        if args.reductions or args.less_fixed
    }
    if args.less_fixed:
        print(
            "Target: instructions less the collection's fixed part: "
            + ", ".join(f"{app} {fixed[app]:,.0f}" for app in apps)
            + "\n"
        )
    print(
        f"Reproduce: `python -m benchmarks.learned_evaluation {' '.join(argv or sys.argv[1:])}`\n"
    )
    for app, table in tables.items():
        sizes = ", ".join(str(len(_split(table.rows, s, seed=0)[0])) for s in SHARES)
        print(f"{app}: {table.rows} runs, training sets of {sizes} runs\n")
    if args.accuracy:
        learned = (
            {a: less_fixed(t, fixed[a]) for a, t in tables.items()} if args.less_fixed else tables
        )
        chosen, methods = accuracy_over_draws(learned, seeds, args.trees)
        print(f"Held-out error, method chosen by CV, mean (min-max) over {len(seeds)} draws:\n")
        print(chosen + "\n\nEvery method, mean over the draws:\n\n" + methods + "\n")
    if args.reduce_choice:
        learned = (
            {a: less_fixed(t, fixed[a]) for a, t in tables.items()} if args.less_fixed else tables
        )
        print(
            f"Reductions chosen by CV at {SHARES[0]:.0%} training, mean (min-max) over "
            f"{len(seeds)} draws:\n\n" + reduction_choice(learned, seeds, args.trees) + "\n"
        )
    if args.reductions:
        fits, lines = reductions_in_instructions(tables, plains, fixed, seeds, args.trees)
        print("Collection cost in instructions:\n\n" + fits + "\n\nReductions:\n\n" + lines + "\n")
    if args.early:
        early = {app: read_run_table(args.tables / f"{app}.O2.early.csv") for app in apps}
        if args.less_fixed:
            tables = {a: less_fixed(t, fixed[a]) for a, t in tables.items()}
            early = {a: less_fixed(t, fixed[a]) for a, t in early.items()}
        print(
            "Early phase against the whole run:\n\n" + early_phase(tables, early, seeds, args.trees)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
