"""Trace extrapolation (PMaC) on the MPI examples: accuracy, convolution against wall time, cost.

1. Extrapolation accuracy (the paper's Table I): signatures of CG and Jacobi under strong scaling
   (fixed problem) at p = 1, 2, 4 extrapolated to p = 8 and 16 and compared with signatures
   collected there. Influential blocks are those with more than 0.1 % of the memory operations
   (blocks without memory operations: of the floating-point operations) of the collected
   signature; every feature of every influential block is an element (the paper's features:
   counts and hit rates; the miss counts the rates are derived from are not counted again).
   Hit rates are cumulative (the share of accesses served at or above the level, as MultiMAPS
   and PMaC index them). ``--rates derived`` (the default) extrapolates the miss counts and
   derives the rates from them; ``--rates fitted`` drops the miss counts first, so the rates
   are fitted like any other feature. Per form set (canonical forms, PMNF): the share of
   elements within 20 % (the paper's bound) and 10 % (the target) relative error, with and
   without the branch misprediction counts (not in the paper's feature vector; tens of events
   per block); the same for the count features alone with their largest error; the largest
   absolute error of a hit rate (relative errors of rates near 0 say little: 0.011 against 0
   is an infinite relative error); and the convolved time from the extrapolated signature
   against the one from the collected signature (paper: within 5 %, target 2 %). Beside it,
   the time's interval from the extrapolation's uncertainty
   (:mod:`perfcast.analyze.extrapolate_interval`), whether the collected signature's time lies
   inside it, how many of the paper's elements lie inside their own interval, and what the
   commands warn about: how many elements of influential blocks they call ambiguous, and
   whether the time's interval reaches more than 5 % from the prediction.
2. Convolution against measured time: each example on one rank; the measured computation time is
   the CPU time (user + system) of the run minus that of a trivial problem (MPI start-up),
   fastest of three each (CPU time, because other jobs on a shared machine inflate wall time).
   The convolved column gives each part's share of the total before overlap (fp, memory,
   instructions, branches: they may add up to more than 100 %).
3. Cost: signature collection wall time against the plain run, and the quick probe's time.

``--plain-convolution`` convolves with the level bandwidths alone and adds floating-point and
memory time (the first version's convolution: no overlap, streams, instructions or branches).
``--machine FILE`` uses a profile written by ``perfcast probe`` instead of probing (the same
machine for several runs: quick probes on a loaded machine differ from run to run).
``--keep DIR`` stores every collected signature there and reuses it on the next run (valgrind
at p = 32 costs minutes on a small machine).

Run from the repository root: ``.venv/bin/python -m benchmarks.pmac [--quick]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfcast.analyze.extrapolate_interval import influential_kernels
from perfcast.api import (
    Experiment,
    collect_signature,
    convolve,
    extrapolate_signature,
    load,
    load_machine,
    merge_signatures,
    probe_machine,
    save,
)

REPO = Path(__file__).resolve().parents[1]
_ROUNDING = 1e-9  # relative: an element within this of an interval's end is at the end
MISS_COUNTS = ("l1.misses", "ll.misses")
MISPREDICTIONS = "branch.mispredictions"  # not in the paper's feature vector
PREDICTION_RATE = "branch.prediction_rate"  # judged like a hit rate, not fitted
# Strong scaling problems (fixed size) and the single-rank problems timed against convolution.
SCALING = {
    "cg": ["256", "20"],
    "jacobi": ["512", "40"],
    "histogram": ["8000000", "65536"],
    "samplesort": ["500000"],
}
SCALING_QUICK = {
    "cg": ["128", "10"],
    "jacobi": ["256", "20"],
    "histogram": ["2000000", "65536"],
    "samplesort": ["125000"],
}
TIMED = {
    "cg": (["512", "100"], ["8", "1"]),
    "jacobi": (["1024", "200"], ["8", "1"]),
    "histogram": (["20000000"], ["1000", "16"]),
    "samplesort": (["2000000"], ["1000"]),
}
TIMED_QUICK = {
    "cg": (["256", "50"], ["8", "1"]),
    "jacobi": (["512", "100"], ["8", "1"]),
    "histogram": (["4000000"], ["1000", "16"]),
    "samplesort": (["400000"], ["1000"]),
}
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def build(app: str, directory: Path) -> Path:
    """Compile an example without perfcast regions."""
    program = directory / app
    subprocess.run(
        ["mpicc", "-O2", "-g", "-DPERFCAST_DISABLE", f"-I{REPO}/src/perfcast/measure/c",
         "-o", str(program), str(REPO / "examples" / app / f"{app}.c"), "-lm"],
        check=True,
    )  # fmt: skip
    return program


def best_times(argv: list[str], runs: int = 3) -> tuple[float, float]:
    """Fastest wall time and fastest CPU time (user + system of the process and its children)
    of ``runs`` runs; CPU time is what other load on a shared machine inflates least."""
    best_wall = best_cpu = float("inf")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=ENV)
        best_wall = min(best_wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu = min(best_cpu, cpu)
    return best_wall, best_cpu


def _block_values(signature) -> dict[str, dict[str, float]]:
    frame = signature.frame
    blocks = frame[frame["kernel"].str.startswith("bb:")]
    out: dict[str, dict[str, float]] = {}
    for kernel, metric, value in zip(
        blocks["kernel"], blocks["metric"], blocks["value"], strict=True
    ):
        out.setdefault(kernel, {})[metric] = float(value)
    return out


def influential(blocks: dict[str, dict[str, float]]) -> list[str]:
    """Blocks with more than 0.1 % of the memory (else floating-point) operations (PMaC's rule,
    as the extrapolation's warnings apply it), in the signature's order."""
    chosen = influential_kernels(blocks)
    return [kernel for kernel in blocks if kernel in chosen]


def element_errors(extrapolated, collected) -> list[tuple[str, float, float]]:
    """(feature, relative error, absolute error) of every feature of every influential block of
    the collected signature; an element the extrapolation lacks counts as infinitely wrong, a
    count the collected signature lacks (a block that ran at the target but without, e.g.,
    mispredictions) is 0 there. Beside the features, each block with branches gets the element
    ``branch.prediction_rate`` (``1 - mispredictions / branches``, as the hit rates are to the
    miss counts)."""
    guess, truth = _block_values(extrapolated), _block_values(collected)
    errors = []
    for kernel in influential(truth):
        actual_features = dict(truth[kernel])
        predicted_features = dict(guess.get(kernel, {}))
        for features in (actual_features, predicted_features):
            if features.get("branches"):
                features[PREDICTION_RATE] = (
                    1 - features.get(MISPREDICTIONS, 0.0) / features["branches"]
                )
        names = set(actual_features) | {
            f for f in predicted_features if f == MISPREDICTIONS and "branches" in actual_features
        }
        for feature in sorted(names):
            if feature == "instructions.rank_spread" or feature in MISS_COUNTS:
                continue  # a property of the ranks; the hit rates' own inputs
            actual = actual_features.get(feature, 0.0)
            predicted = predicted_features.get(feature)
            if predicted is None and feature == MISPREDICTIONS and kernel in guess:
                predicted = 0.0  # the block is predicted to run without mispredictions
            if predicted is None:
                errors.append((feature, float("inf"), float("inf")))
                continue
            absolute = abs(predicted - actual)
            if actual == 0:
                relative = 0.0 if predicted == 0 else float("inf")
            else:
                relative = absolute / abs(actual)
            errors.append((feature, relative, absolute))
    return errors


def element_coverage(
    intervals: dict[tuple[str, str], tuple[float, float]], collected
) -> tuple[int, int]:
    """How many of the paper's elements of the influential blocks (counts and hit rates) the
    collected signature puts inside their extrapolated interval, out of how many; an element
    without an interval (or not extrapolated) is outside. An exact fit's interval is a point
    up to rounding: the ends are taken a billionth wider (a count of 1310720 predicted as
    1310720.0000000012 is inside)."""
    truth = _block_values(collected)
    inside = judged = 0
    for kernel in influential(truth):
        for feature, actual in truth[kernel].items():
            if feature in ("instructions.rank_spread", MISPREDICTIONS, *MISS_COUNTS):
                continue
            judged += 1
            low, high = intervals.get((kernel, feature), (math.inf, -math.inf))
            inside += low - _ROUNDING * abs(low) <= actual <= high + _ROUNDING * abs(high)
    return inside, judged


def _share(values: list[float], bound: float) -> str:
    return f"{sum(v <= bound for v in values) / len(values):.1%}" if values else "-"


def without_miss_counts(signature: Experiment) -> Experiment:
    """The signature without its miss counts: its hit rates are then fitted, not derived."""
    frame = signature.frame
    return Experiment.from_frame(
        frame[~frame["metric"].isin(MISS_COUNTS)],
        parameters=signature.parameters,
        metrics=signature.metrics,
        metadata=signature.metadata,
        source=signature.source,
    )


def collected_signature(
    command: list[str], ranks: int, machine, keep: Path | None
) -> tuple[Experiment, bool]:
    """The signature of ``command`` on ``ranks`` ranks, and whether it was taken from ``keep``
    (collected by an earlier run) rather than collected now."""
    stored = None
    if keep is not None:
        name = "_".join(Path(word).name for word in command)
        stored = keep / f"{name}_p{ranks}.json"
        if stored.exists():
            return load(stored), True
    signature = collect_signature(command, ranks=ranks, machine=machine)
    if stored is not None:
        save(signature, stored)
    return signature, False


@dataclasses.dataclass(frozen=True)
class Fitting:
    """How the elements are extrapolated: form set, hit rates derived from miss counts or
    fitted, how many largest points validate a form, relative or absolute residuals."""

    forms: str
    rates: str = "derived"
    holdouts: int = 1
    relative: bool = False

    def label(self) -> str:
        """The row's description."""
        residuals = "relative" if self.relative else "absolute"
        return f"{self.forms} | {self.rates} | {self.holdouts} | {residuals}"


def _canonical_options_only(fitting: Fitting) -> Fitting:
    """PMNF's fitting with the canonical forms' options at their defaults."""
    if fitting.forms != "pmnf":
        return fitting
    return dataclasses.replace(fitting, holdouts=1, relative=False)


def accuracy_row(
    merged: Experiment, collected: Experiment, target: int, machine, fitting: Fitting
) -> str:
    """The table's columns after the problem and extrapolation for one way of fitting."""
    base = merged if fitting.rates == "derived" else without_miss_counts(merged)
    result = extrapolate_signature(
        base, {"p": target}, forms=fitting.forms, holdouts=fitting.holdouts,
        relative=fitting.relative,
    )  # fmt: skip
    errors = element_errors(result.signature, collected)
    paper = [e[1] for e in errors if e[0] not in (MISPREDICTIONS, PREDICTION_RATE)]
    with_counts = [e[1] for e in errors if e[0] != PREDICTION_RATE]
    with_rate = [e[1] for e in errors if e[0] != MISPREDICTIONS]
    counts = [e[1] for e in errors if not e[0].endswith("_rate") and e[0] != MISPREDICTIONS]
    rates = [e[2] for e in errors if e[0].endswith("hit_rate")]
    mispredicted = [e[2] for e in errors if e[0] == MISPREDICTIONS]
    penalty = machine.core.get("misprediction_penalty", 0.0)
    truth_time = convolve(collected, machine).total
    convolution = convolve(result.signature, machine)
    predicted = convolution.total
    time_error = abs(predicted - truth_time) / truth_time
    intervals = {
        (e.kernel, e.feature): (e.low, e.high)
        for e in result.elements
        if e.low is not None and e.high is not None
    }
    inside, judged = element_coverage(intervals, collected)
    low, high = convolution.interval or (predicted, predicted)
    covered = "yes" if low <= truth_time <= high else "**no**"
    warned = [w for w in result.warnings if "element(s) of influential blocks" in w]
    flagged = warned[0].split(" ", 1)[0] if warned else "0"
    time_warned = any("not to be trusted" in w for w in convolution.warnings)
    worst_miss = max(mispredicted, default=0.0)
    return (
        f"{fitting.label()} | {len(paper)} | {_share(paper, 0.2)} / {_share(paper, 0.1)} | "
        f"{_share(with_counts, 0.2)} / {_share(with_counts, 0.1)} | "
        f"{_share(with_rate, 0.2)} / {_share(with_rate, 0.1)} | "
        f"{max(counts, default=0.0):.1%} | {max(rates, default=0.0):.3f} | "
        f"{worst_miss:.0f} ({worst_miss * penalty:.3g} ns) | "
        f"{predicted:.4g} s | {truth_time:.4g} s | {time_error:.2%} | "
        f"{low:.4g}-{high:.4g} s (-{(predicted - low) / predicted:.1%} / "
        f"+{(high - predicted) / predicted:.1%}) | {covered} | {inside}/{judged} | "
        f"{flagged} / {'yes' if time_warned else 'no'} |"
    )


def accuracy(
    programs: dict[str, Path],
    sizes: dict[str, list[str]],
    machine,
    bases: tuple[int, ...],
    targets: tuple[int, ...],
    fittings: list[Fitting],
    keep: Path | None = None,
) -> list[str]:
    """Rows of the extrapolation accuracy table."""
    rows = []
    for app, program in programs.items():
        if app not in sizes:
            continue
        command = [str(program), *sizes[app]]
        collected = {
            p: collected_signature(command, p, machine, keep)[0] for p in (*bases, *targets)
        }
        merged = merge_signatures([collected[p] for p in bases])
        for target in targets:
            for fitting in fittings:
                rows.append(
                    f"| {app} {' '.join(sizes[app])} | {','.join(map(str, bases))} -> {target} | "
                    + accuracy_row(merged, collected[target], target, machine, fitting)
                )
                print(rows[-1], flush=True)
    return rows


def convolution_vs_wall(
    programs: dict[str, Path], timed, machine, keep: Path | None = None
) -> list[str]:
    """Rows of the convolution-against-measured table (one rank); the collection time is
    "reused" for a signature taken from ``keep``."""
    rows = []
    for app, program in programs.items():
        size, trivial = timed[app]
        command = [str(program), *size]
        plain, plain_cpu = best_times(command)
        startup, startup_cpu = best_times([str(program), *trivial])
        start = time.perf_counter()
        signature, reused = collected_signature(command, 1, machine, keep)
        collection = time.perf_counter() - start
        result = convolve(signature, machine)
        predicted = result.total
        parts = {
            "fp": sum(b.fp_time for b in result.blocks),
            "mem": sum(b.memory_time for b in result.blocks),
            "instr": sum(b.instruction_time for b in result.blocks),
            "branch": sum(b.branch_time for b in result.blocks),
        }
        shares = ", ".join(f"{k} {v / predicted:.0%}" for k, v in parts.items() if predicted)
        measured = plain_cpu - startup_cpu
        ratio = predicted / measured if measured > 0 else float("nan")
        rows.append(
            f"| {app} {' '.join(size)} | {plain:.3f} s | {plain_cpu:.3f} s | {startup_cpu:.3f} s "
            f"| {measured:.3f} s | "
            f"{predicted:.3f} s ({shares}) | {ratio:.2f} | "
            + ("reused |" if reused else f"{collection:.1f} s ({collection / plain:.0f}x) |")
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the three parts and print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller problems, p up to 8")
    parser.add_argument("--apps", default="cg,jacobi,histogram,samplesort")
    parser.add_argument(
        "--parts", default="accuracy,wall", help="accuracy and/or wall (convolution vs wall)"
    )
    parser.add_argument("--bases", default="1,2,4", help="core counts extrapolated from")
    parser.add_argument("--targets", help="core counts extrapolated to (default 8,16; quick 8)")
    parser.add_argument("--forms", default="pmac,pmnf", help="form sets compared")
    parser.add_argument(
        "--rates", default="derived", help="hit rates derived from miss counts and/or fitted"
    )
    parser.add_argument(
        "--holdouts", default="1", help="largest points validating a form (1 and/or 2, ...)"
    )
    parser.add_argument(
        "--residuals", default="absolute", help="canonical forms fitted to absolute/relative"
    )
    parser.add_argument("--keep", type=Path, help="store and reuse collected signatures here")
    parser.add_argument(
        "--plain-convolution", action="store_true", help="level bandwidths only, fp + memory"
    )
    parser.add_argument(
        "--machine", type=Path, help="a machine profile to use instead of a quick probe"
    )
    args = parser.parse_args(argv)
    apps = args.apps.split(",")
    print(f"command: python -m benchmarks.pmac {' '.join(shlex.quote(a) for a in sys.argv[1:])}")
    with tempfile.TemporaryDirectory(prefix="pmac-bench-") as scratch:
        programs = {app: build(app, Path(scratch)) for app in apps}
        start = time.perf_counter()
        if args.machine:
            machine = load_machine(args.machine)
        else:
            machine = probe_machine(quick=True)
            print(f"quick probe: {time.perf_counter() - start:.1f} s")
        if args.plain_convolution:
            machine = dataclasses.replace(machine, stream={}, core={}, overlap=0.0)
        for access, levels in machine.memory.items():
            figures = ", ".join(f"{level} {gbs:.3g}" for level, gbs in levels.items())
            print(f"machine {access} GB/s: {figures}; caches {machine.cache_geometry()}")
        print(f"machine fp add.f64.scalar {machine.fp['add.f64.scalar']:.3g} Gop/s")
        for access, levels in machine.stream.items():
            figures = ", ".join(f"{level} {gbs:.3g}" for level, gbs in levels.items())
            print(f"machine stride-1 stream {access} GB/s: {figures}")
        print(f"machine core: {machine.core}; overlap {machine.overlap}")
        parts = args.parts.split(",")
        if "accuracy" in parts:
            print("\n| problem | extrapolation | forms | rates | holdouts | residuals | "
                  "elements (paper's) | paper's: within 20 % / 10 % | "
                  "+ mispredictions: within 20 % / 10 % | "
                  "+ prediction rates: within 20 % / 10 % | "
                  "counts: max error | hit rates: max abs. error | "
                  "mispredictions: max abs. error | "
                  "time (extrapolated) | time (collected) | time error | "
                  "time interval | collected time inside | paper's elements inside | "
                  "warned: ambiguous elements / time interval |")  # fmt: skip
            print(
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
            )
            targets = (8,) if args.quick else (8, 16)
            if args.targets:
                targets = tuple(int(p) for p in args.targets.split(","))
            bases = tuple(int(p) for p in args.bases.split(","))
            sizes = SCALING_QUICK if args.quick else SCALING
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
            fittings = [
                Fitting(forms, rates, int(holdouts), residuals == "relative")
                for forms in args.forms.split(",")
                for rates in args.rates.split(",")
                for holdouts in args.holdouts.split(",")
                for residuals in args.residuals.split(",")
            ]
            # holdouts and residuals are the canonical forms' options: PMNF rows once
            fittings = list(dict.fromkeys(_canonical_options_only(f) for f in fittings))
            accuracy(programs, sizes, machine, bases, targets, fittings, args.keep)
        if "wall" in parts:
            print("\n| problem (1 rank) | wall | CPU | start-up CPU | computation CPU | "
                  "convolved | convolved / measured | signature collection |")  # fmt: skip
            print("|---|---|---|---|---|---|---|---|")
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
            convolution_vs_wall(programs, TIMED_QUICK if args.quick else TIMED, machine, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
