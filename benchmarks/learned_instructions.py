"""Learned models of a deterministic target: instructions of the slowest rank under callgrind.

Wall and CPU seconds on a shared 2-core machine vary by 7-58 % for the same run, which puts a
floor under every learned model's error (``benchmarks/learned.py``). This benchmark learns a
count that does not vary: the instructions executed in the program's own code (the executable's
object file, as callgrind attributes them; not the MPI, C or loader libraries, whose polling
while a rank waits makes their count change from run to run), maximum over the ranks. The
three programs of ``benchmarks/learned_apps`` are instrumented with ``perfcast features``, built
``-O2`` (and ``-O0`` as the transfer target), and run under ``mpirun ... valgrind
--tool=callgrind`` (perfcast's own ``valgrind_prefix`` and profile parser) on inputs drawn at
random from ranges small enough for hundreds of runs under valgrind, with the data-dependent
behaviour kept (tolerance and right-hand side of the solver, algorithm and cutoff of the
N-body code, skew and roots of the graph search).

Two steps, so the models can be evaluated again without running the programs:

``--collect DIR``
    Run the programs and write one run table per program and build (``DIR/APP.O2.csv``,
    ``DIR/APP.O0.csv``): the drawn inputs, the rank count ``p``, every instrumented feature,
    their ``cost:`` columns, ``time``/``cpu`` (under valgrind) and ``instructions``.
``--tables DIR``
    Evaluate from those tables: mean relative error (the paper's formula) on held-out runs at
    10/30/50 % training share for features against parameters, the learners' ablation, and
    transfer from ``-O2`` to ``-O0`` at 5/10/20/50 target runs without the source, with the
    default transfer and with two-stage TrAdaBoost.R2.

Run from the repository root:
``.venv/bin/python -m benchmarks.learned_instructions --collect /tmp/learn-runs`` then
``.venv/bin/python -m benchmarks.learned_instructions --tables /tmp/learn-runs``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.learned import (
    APPS,
    MPI_ENV,
    SHARES,
    TARGET_RUNS,
    InputRanges,
    _build,
    _error,
    _split,
    ablation,
    input_draws,
)
from perfcast.io.run_table import (
    RunTable,
    from_columns,
    read_feature_records,
    read_run_table,
    write_run_table,
)
from perfcast.measure.valgrind import parse_profile, valgrind_prefix
from perfcast.model.learned import LearnedModel
from perfcast.static.features import instrument_features

TARGET = "instructions"
METHODS = ("extra-trees", "forest", "poly-lasso", "pmnf", "nn-linear")
#: Inputs run three times each (2 ranks) to show the count does not vary.
FIXED = {
    "solver": {"n": 50, "tolerance": 1e-7, "rhs": 1, "seed": 5},
    "nbody": {"n": 300, "steps": 3, "algorithm": 1, "cutoff": 0.2, "seed": 5},
    "bfs": {"scale": 12, "edgefactor": 6, "roots": 5, "skew": 0.5, "seed": 5},
}


# Smaller than benchmarks.learned's: every run goes through callgrind.
DRAWS = input_draws(
    InputRanges(
        nbody_bodies=(100, 600), nbody_steps=(2, 7), bfs_scale=(9, 15), solver_grid=(20, 70)
    )
)


def own_instructions(
    binary: Path,
    inputs: dict[str, float],
    ranks: int,
    records: Path,
    rank_max: bool = False,
    runtime_only: bool = False,
) -> int:
    """Run once under callgrind; the largest count over the ranks of the instructions executed
    in ``binary``'s own object file. ``rank_max``: the records get each counter's largest
    per-rank value too (``$PERFCAST_FEATURES_RANK_MAX``). ``runtime_only``: only the feature
    runtime's functions that do not depend on the input (reducing and writing the records,
    with the calibration of the cost per update), not the program's nor its counters'."""
    env = {**os.environ, **MPI_ENV, "PERFCAST_FEATURES_FILE": str(records)}
    env["PERFCAST_FEATURES_RANK_MAX"] = "1" if rank_max else ""
    with tempfile.TemporaryDirectory(prefix="learn-callgrind-") as scratch:
        profiles = Path(scratch)
        command = [
            "mpirun", "--oversubscribe", "-np", str(ranks),
            *valgrind_prefix("instructions", profiles, {}),
            str(binary), *(str(v) for v in inputs.values()),
        ]  # fmt: skip
        subprocess.run(command, check=True, capture_output=True, env=env)
        counts = []
        for path in sorted(profiles.iterdir()):
            profile = parse_profile(path)
            column = profile.events.index("Ir")
            counts.append(
                sum(
                    cost[column]
                    for function, cost in profile.exclusive.items()
                    if Path(function.obj).name == binary.name
                    and (not runtime_only or _fixed_runtime(function.name))
                )
            )
    if len(counts) != ranks:
        raise RuntimeError(f"{binary.name}: {len(counts)} profiles for {ranks} ranks")
    return max(counts)


def _fixed_runtime(function: str) -> bool:
    """Whether ``function`` (a name as callgrind gives it, ``.constprop.0`` and the like
    included) is part of the feature runtime whose cost is the same in every run: everything
    of ``perfcast_features.h`` but the per-call byte count of MPI calls, which is a counter."""
    return function.startswith("perfcast_features_") and not function.startswith(
        "perfcast_features_mpi_bytes"
    )


def collect_fixed(apps: list[str], out: Path, rank_max: bool) -> None:
    """``APP.O2.fixed.csv``: the instructions of the feature runtime that every run executes
    whatever its inputs (the cost calibration and the writing at each record), measured in
    one run of ``FIXED``'s input on one rank; the learned target less this is the program's
    own work and its counters'."""
    folder = Path(tempfile.mkdtemp(prefix="learn-bench-vg-"))
    try:
        instrument_features([APPS / f"{a}.c" for a in apps], folder / "instrumented")
        for app in apps:
            binary = folder / app
            _build(folder / "instrumented" / f"{app}.c", binary, "-O2")
            count = own_instructions(
                binary, FIXED[app], 1, folder / "r.jsonl", rank_max, runtime_only=True
            )
            path = out / f"{app}.O2.fixed.csv"
            write_run_table(from_columns({TARGET: [count]}, str(path)), path)
            print(f"{app}: {count} fixed instructions -> {path}", file=sys.stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Campaign:
    """Random inputs of one program under callgrind, run by run: features, the drawn inputs
    and the instruction count of every run so far.

    ``previous`` holds the tables of an earlier collection with the same seed, by phase
    (``exit``, and ``features_end`` for a program with an early phase): its draws are replayed
    (not run) so the new runs continue the same sequence, and its rows come first.
    """

    def __init__(
        self,
        binary: Path,
        app: str,
        seed: int,
        folder: Path,
        previous: dict[str, RunTable] | None = None,
        rank_max: bool = False,
    ) -> None:
        self.binary, self.app, self.rank_max = binary, app, rank_max
        self.rng = np.random.default_rng(seed)
        self.records = folder / f"{binary.name}.jsonl"
        self.records.unlink(missing_ok=True)
        self.inputs: list[dict[str, float]] = []
        self.counts: list[int] = []
        self.previous = previous or {}
        done = self.previous.get("exit")
        for row in range(0 if done is None else done.rows):
            drawn, ranks = self._draw()
            _check_replay(done, row, {**drawn, "p": ranks})  # type: ignore[arg-type]

    @property
    def runs(self) -> int:
        """Runs of the table: the earlier collection's and this one's."""
        done = self.previous.get("exit")
        return (0 if done is None else done.rows) + len(self.counts)

    def _draw(self) -> tuple[dict[str, float], int]:
        drawn = DRAWS[self.app](self.rng)
        return drawn, int(self.rng.integers(1, 3))

    def run_once(self) -> None:
        drawn, ranks = self._draw()
        self.counts.append(own_instructions(self.binary, drawn, ranks, self.records, self.rank_max))
        self.inputs.append({**{k: v for k, v in drawn.items() if k != "seed"}, "p": ranks})

    def table(self, phase: str = "exit") -> RunTable:
        """The runs so far, their features those at ``phase`` (``exit`` or ``features_end``)."""
        previous = self.previous.get(phase)
        if previous is not None and previous.rows != self.runs - len(self.counts):
            raise RuntimeError(f"{previous.source}: {previous.rows} runs, not those of the exit")
        if not self.counts:
            assert previous is not None
            return previous
        features = read_feature_records(self.records, phase)
        columns: dict[str, object] = {
            name: [row[name] for row in self.inputs] for name in self.inputs[0]
        }
        columns |= {name: features.column(name) for name in features.columns}
        columns[TARGET] = self.counts
        columns |= {f"cost:{name}": cost for name, cost in features.costs.items()}
        table = from_columns(columns, str(self.records))  # type: ignore[arg-type]
        return table if previous is None else _appended(previous, table)

    def has_early_phase(self) -> bool:
        """Whether the program wrote features at ``#pragma perfcast features_end``."""
        return '"phase": "features_end"' in self.records.read_text(encoding="utf-8")


def _check_replay(previous: RunTable, row: int, drawn: dict[str, float]) -> None:
    """Stop when the replayed draw is not the earlier table's row (another seed or ranges)."""
    for name, value in drawn.items():
        if name != "seed" and not np.isclose(previous.numeric[name][row], value, rtol=1e-9):
            raise RuntimeError(
                f"{previous.source}: row {row + 1} has {name} = {previous.numeric[name][row]}, "
                f"the draw with this seed gives {value}: not the same collection"
            )


def _appended(first: RunTable, second: RunTable) -> RunTable:
    """The runs of ``first`` then those of ``second``, which must have the same columns."""
    if first.order != second.order or list(first.costs) != list(second.costs):
        extra = sorted(set(first.order) ^ set(second.order))
        raise RuntimeError(f"{first.source}: the new runs have other columns ({extra[:3]})")
    columns: dict[str, object] = {
        name: np.concatenate([first.column(name), second.column(name)]) for name in first.order
    }
    columns |= {
        f"cost:{name}": np.concatenate([first.costs[name], second.costs[name]])
        for name in first.costs
    }
    return from_columns(columns, first.source)  # type: ignore[arg-type]


def parameters_of(app: str) -> list[str]:
    """The drawn inputs of ``app`` (without the seed) and the rank count."""
    return [*(k for k in DRAWS[app](np.random.default_rng(0)) if k != "seed"), "p"]


def collect(
    apps: list[str],
    runs: int,
    target_runs: int,
    seed: int,
    out: Path,
    resume: bool = False,
    rank_max: bool = False,
) -> None:
    """Run the campaigns, the -O0 runs interleaved with the -O2 ones, the tables written
    every 10 runs (a stopped collection keeps what it ran). With ``resume`` the tables
    already in ``out`` are extended up to ``runs``/``target_runs`` rows. A program with
    ``#pragma perfcast features_end`` gets a second table, ``APP.BUILD.early.csv``: the same
    runs and targets, the features those of the early phase."""
    out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="learn-bench-vg-"))
    try:
        instrumented = folder / "instrumented"
        instrument_features([APPS / f"{a}.c" for a in apps], instrumented)
        for index, app in enumerate(apps):
            campaigns = {}
            for build, offset in (("O2", 0), ("O0", 100)):
                binary = folder / f"{app}.{build}"
                _build(instrumented / f"{app}.c", binary, f"-{build}")
                table = out / f"{app}.{build}.csv"
                early = out / f"{app}.{build}.early.csv"
                previous = {
                    phase: read_run_table(path)
                    for phase, path in (("exit", table), ("features_end", early))
                    if resume and path.exists()
                }
                campaigns[build] = Campaign(
                    binary, app, seed + offset + index, folder, previous, rank_max
                )
            wanted = {"O2": runs, "O0": target_runs}
            while any(campaigns[b].runs < wanted[b] for b in campaigns):
                for build, campaign in campaigns.items():
                    if campaign.runs >= wanted[build]:
                        continue
                    campaign.run_once()
                    if campaign.runs % 10 == 0 or campaign.runs == wanted[build]:
                        write_run_table(campaign.table(), out / f"{app}.{build}.csv")
                        if campaign.has_early_phase():
                            early = out / f"{app}.{build}.early.csv"
                            write_run_table(campaign.table("features_end"), early)
                shown = ", ".join(f"{b} {c.runs}" for b, c in campaigns.items())
                print(f"{app}: runs {shown}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def collect_plain(apps: list[str], runs: int, seed: int, out: Path) -> None:
    """The original (uninstrumented) ``-O2`` build on the first ``runs`` inputs of each
    program's ``-O2`` table, which must be in ``out``: ``APP.O2.plain.csv`` (the inputs and
    ``instructions``), extended where it already has runs, for the collection's cost."""
    folder = Path(tempfile.mkdtemp(prefix="learn-bench-vg-"))
    try:
        for index, app in enumerate(apps):
            instrumented = read_run_table(out / f"{app}.O2.csv")
            path = out / f"{app}.O2.plain.csv"
            done = read_run_table(path) if path.exists() else None
            binary = folder / f"{app}.plain"
            _build(APPS / f"{app}.c", binary, "-O2")
            rng = np.random.default_rng(seed + index)
            inputs: list[dict[str, float]] = []
            counts: list[float] = []
            for row in range(min(runs, instrumented.rows)):
                drawn = DRAWS[app](rng)
                ranks = int(rng.integers(1, 3))
                _check_replay(instrumented, row, {**drawn, "p": ranks})
                inputs.append({**{k: v for k, v in drawn.items() if k != "seed"}, "p": ranks})
                if done is not None and row < done.rows:
                    counts.append(float(done.numeric[TARGET][row]))
                    continue
                counts.append(own_instructions(binary, drawn, ranks, folder / "none.jsonl"))
                if len(counts) % 10 == 0 or row + 1 == min(runs, instrumented.rows):
                    columns: dict[str, object] = {
                        name: [r[name] for r in inputs] for name in inputs[0]
                    }
                    columns[TARGET] = counts
                    write_run_table(from_columns(columns, str(path)), path)  # type: ignore[arg-type]
                print(f"{app}: plain run {row + 1}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def add_rank_maxima(apps: list[str], seed: int, folder: Path) -> None:
    """``APP.O2.rankmax.csv``: ``APP.O2.csv`` with every counter's per-rank maximum added,
    from the same inputs run again natively (no valgrind) with ``$PERFCAST_FEATURES_RANK_MAX``.

    The features are counts of the program's control flow, fixed by its inputs: every count
    of the new runs is checked equal to the table's, so the maxima are those the callgrind runs
    would have written; each maximum's cost is its counter's (the same updates)."""
    scratch = Path(tempfile.mkdtemp(prefix="learn-bench-rankmax-"))
    try:
        instrument_features([APPS / f"{a}.c" for a in apps], scratch / "instrumented")
        for index, app in enumerate(apps):
            table = read_run_table(folder / f"{app}.O2.csv")
            binary = scratch / app
            _build(scratch / "instrumented" / f"{app}.c", binary, "-O2")
            records = scratch / f"{app}.jsonl"
            env = {**os.environ, **MPI_ENV, "PERFCAST_FEATURES_FILE": str(records)}
            env["PERFCAST_FEATURES_RANK_MAX"] = "1"
            rng = np.random.default_rng(seed + index)
            for row in range(table.rows):
                drawn = DRAWS[app](rng)
                ranks = int(rng.integers(1, 3))
                _check_replay(table, row, {**drawn, "p": ranks})
                command = ["mpirun", "--oversubscribe", "-np", str(ranks), str(binary)]
                arguments = [str(v) for v in drawn.values()]
                subprocess.run([*command, *arguments], check=True, capture_output=True, env=env)
            native = read_feature_records(records)
            for name in table.costs:
                if not np.array_equal(native.numeric[name], table.numeric[name]):
                    row = int(np.flatnonzero(native.numeric[name] != table.numeric[name])[0])
                    raise RuntimeError(f"{app}: run {row + 1}: {name} differs natively")
            columns: dict[str, object] = {n: table.column(n) for n in table.columns}
            maxima = [n for n in native.columns if n.endswith(":rank_max")]
            columns |= {n: native.numeric[n] for n in maxima}
            columns |= {f"cost:{n}": c for n, c in table.costs.items()}
            columns |= {f"cost:{n}": table.costs[n.removesuffix(":rank_max")] for n in maxima}
            out = folder / f"{app}.O2.rankmax.csv"
            write_run_table(from_columns(columns, str(out)), out)  # type: ignore[arg-type]
            print(f"{app}: {table.rows} runs, {len(maxima)} maxima -> {out}", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def accuracy(tables: dict[str, RunTable], trees: int) -> str:
    """Held-out error per method and columns; "chosen by CV" is the method with the lowest
    cross-validated error on the training share (the held-out runs play no part)."""
    lines = [
        "| program | method | columns | " + " | ".join(f"{s:.0%} train" for s in SHARES) + " |",
        "|---|---|---|" + "---|" * len(SHARES),
    ]
    for app, table in tables.items():
        for label, features in (("features", None), ("parameters", parameters_of(app))):
            chosen: list[tuple[float, float, str]] = [(np.inf, np.nan, "")] * len(SHARES)
            for method in METHODS:
                errors = []
                for index, share in enumerate(SHARES):
                    train, test = _split(table.rows, share, seed=11)
                    model = LearnedModel(method, trees=trees).fit(
                        table.take(train), TARGET, features=features
                    )
                    errors.append(_error(model, table.take(test)))
                    if model.cv_error_ < chosen[index][0]:
                        chosen[index] = (model.cv_error_, errors[-1], method)
                cells = " | ".join(f"{e:.1%}" for e in errors)
                lines.append(f"| {app} | {method} | {label} | {cells} |")
            cells = " | ".join(f"{e:.1%} ({m})" for _, e, m in chosen)
            lines.append(f"| {app} | chosen by CV | {label} | {cells} |")
    return "\n".join(lines)


def transfer(
    sources: dict[str, RunTable], targets: dict[str, RunTable], method: str, trees: int
) -> str:
    """Error on the -O0 runs after the first 50 (fewer if that leaves under 10), learned from
    the first 5, 10, 20, 50 of them without and with the -O2 runs."""
    lines = [
        "| program | -O0 runs | held out | without source | log-linear map (default) "
        "| TrAdaBoost.R2 | map + TrAdaBoost.R2 | TrAdaBoost.R2 step, source weight |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for app, runs in targets.items():
        counts = [c for c in TARGET_RUNS if c <= runs.rows - 10]
        held = runs.take(np.arange(max(counts), runs.rows))
        for count in counts:
            few = runs.take(np.arange(count))
            cells = []
            records = []
            for how in (None, "map", "tradaboost", "map+tradaboost"):
                model = LearnedModel(method, trees=trees, transfer=how or "map")
                model.fit(few, TARGET, source=None if how is None else sources[app])
                cells.append(f"{_error(model, held):.1%}")
                records.append(model.transfer_ or {})
            cells.append("; ".join(f"{r['step'] + 1} of {r['steps']}, {r['source_weight']:.0%}"
                                   for r in records[2:]))  # fmt: skip
            lines.append(f"| {app} | {count} | {held.rows} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def determinism(apps: list[str]) -> str:
    """Each program's fixed input run three times on 2 ranks: the counts."""
    lines = ["| program | instructions, three runs | identical |", "|---|---|---|"]
    folder = Path(tempfile.mkdtemp(prefix="learn-bench-vg-"))
    try:
        instrument_features([APPS / f"{a}.c" for a in apps], folder / "instrumented")
        for app in apps:
            binary = folder / app
            _build(folder / "instrumented" / f"{app}.c", binary, "-O2")
            counts = [own_instructions(binary, FIXED[app], 2, folder / "r.jsonl") for _ in "abc"]
            same = "yes" if len(set(counts)) == 1 else "no"
            lines.append(f"| {app} | {', '.join(map(str, counts))} | {same} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return "\n".join(lines)


def evaluate(folder: Path, apps: list[str], trees: int) -> None:
    o2 = {app: read_run_table(folder / f"{app}.O2.csv") for app in apps}
    o0 = {app: read_run_table(folder / f"{app}.O0.csv") for app in apps}
    for app in apps:
        spread = o2[app].numeric[TARGET]
        print(f"{app}: {o2[app].rows} -O2 + {o0[app].rows} -O0 runs, "
              f"{len(o2[app].costs)} features, instructions {spread.min():.3g} to "
              f"{spread.max():.3g}\n")  # fmt: skip
    print("Mean relative error on held-out -O2 runs:\n")
    print(accuracy(o2, trees) + "\n")
    print("extra-trees with features at 50 % training share:\n")
    print(ablation(o2, TARGET, trees) + "\n")
    for method in ("extra-trees", "nn-linear"):
        print(f"Transfer from -O2 to -O0, {method} (held-out -O0 runs):\n")
        print(transfer(o2, o0, method, trees) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collect", type=Path, help="run the programs, tables into this folder")
    parser.add_argument("--tables", type=Path, help="evaluate the tables of this folder")
    parser.add_argument(
        "--determinism", action="store_true", help="run a fixed input 3 times per program"
    )
    parser.add_argument("--runs", type=int, default=150, help="-O2 runs per program")
    parser.add_argument(
        "--plain",
        type=int,
        default=0,
        metavar="N",
        help="with --collect: the uninstrumented build on the first N inputs of the tables",
    )
    parser.add_argument(
        "--fixed-part",
        type=Path,
        metavar="DIR",
        help="write APP.O2.fixed.csv: the feature runtime's instructions that every run spends",
    )
    parser.add_argument(
        "--add-rank-max",
        type=Path,
        metavar="DIR",
        help="write APP.O2.rankmax.csv: the table's runs again natively for the per-rank maxima",
    )
    parser.add_argument(
        "--rank-max",
        action="store_true",
        help="record each counter's largest per-rank value too ($PERFCAST_FEATURES_RANK_MAX)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="extend the tables already in the --collect folder (same --seed and --apps)",
    )
    parser.add_argument("--target-runs", type=int, default=80, help="-O0 runs per program")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--apps", default="nbody,bfs,solver")
    args = parser.parse_args(argv)
    apps = args.apps.split(",")
    if args.fixed_part is not None:
        collect_fixed(apps, args.fixed_part, args.rank_max)
        return 0
    if args.add_rank_max is not None:
        add_rank_maxima(apps, args.seed, args.add_rank_max)
        return 0
    if args.collect is None and args.tables is None and not args.determinism:
        parser.error("give --collect DIR, --tables DIR, --add-rank-max DIR or --determinism")
    if args.determinism:
        print(determinism(apps) + "\n")
    if args.collect is not None:
        if not all(shutil.which(tool) for tool in ("mpicc", "mpirun", "valgrind")):
            print("needs mpicc, mpirun and valgrind", file=sys.stderr)
            return 1
        if args.plain:
            collect_plain(apps, args.plain, args.seed, args.collect)
            return 0
        collect(
            apps,
            args.runs,
            args.target_runs,
            args.seed,
            args.collect,
            args.resume,
            args.rank_max,
        )
    if args.tables is not None:
        words = " ".join(argv or sys.argv[1:])
        print(f"Reproduce: `python -m benchmarks.learned_instructions {words}`\n")
        evaluate(args.tables, apps, args.trees)
    return 0


if __name__ == "__main__":
    sys.exit(main())
