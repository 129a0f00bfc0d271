"""An autotuner for C kernels with a tuning database and warm starts from similar kernels.

The search space (a TOML file, see :func:`load_space`) lists compiler-flag alternatives and
macro values; a configuration picks one of each. Every configuration is compiled and measured
(:mod:`perfcast.measure.kernel_runs`: instructions of the kernel under callgrind, wall time of
the program, both recorded) and the objective (``instructions`` by default, since wall time on a
shared machine is noisy; ``cycles``, callgrind's cycle estimate under a fixed simulated cache,
which unlike instructions rewards tiling and loop orders that save cache misses; or ``time``)
is minimised by one of three strategies:

``exhaustive``  every configuration in the order of the space file
``random``      configurations drawn without replacement (seeded)
``model``       a few random configurations, then always the untried configuration that an
                additive model of log-objective per parameter value predicts best (an untried
                value is assumed as good as the best seen, so every value gets tried)

With a warm start, the measurements of the ``neighbours`` kernels of the database most similar
to this one (cosine of the function's hCFG embedding), adapted to this space (a parameter or
value the space lacks takes the space's first value), form a
:class:`~perfcast.analyze.transfer.TransferPrior`: every configuration's similarity-weighted
predicted ratio to the best. Each neighbour's best configuration is tried first, best ranked
first, then the strategy continues; ``model`` then alternates between the prior corrected with
this kernel's own measurements and its own additive model instead of starting over with random
picks. Results go to the
database keyed by the kernel's embedding. The result reports after how many evaluations the
search was within 5 % of the best value known for the kernel (this search and the database's
earlier ones), and how much of the budget that left unused.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import shutil
import tomllib
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.analyze.matching import WEAK_MATCH
from perfcast.analyze.transfer import TransferPrior, transfer_pick
from perfcast.core.errors import InputError
from perfcast.io.tuning_db import Evaluation, TuningDatabase
from perfcast.measure.kernel_runs import KernelRun, measure_configuration
from perfcast.static.embedding import embed
from perfcast.static.hcfg import build_graphs

STRATEGIES = ("exhaustive", "random", "model")
OBJECTIVES = ("instructions", "time", "cycles")
WITHIN = 0.05
"""A configuration within this fraction of the best counts as reaching it."""
MAX_CONFIGURATIONS = 1_000_000
"""The largest space searched: every strategy lists all configurations first."""

_SECTIONS = {"flags", "macros", "defines", "measure"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MEASURE_KEYS = {"objective", "repetitions", "compiler", "arguments"}


@dataclass(frozen=True)
class TuningSpace:
    """Parameters (name -> alternatives) and how to measure.

    ``flags`` map a name to alternative flag strings (``""`` for none, several words allowed);
    ``macros`` map a macro to values passed as ``-DNAME=value``; ``defines`` are fixed macros.
    """

    flags: dict[str, tuple[str, ...]]
    macros: dict[str, tuple[str, ...]]
    defines: dict[str, str] = field(default_factory=dict)
    objective: str = "instructions"
    repetitions: int = 3
    compiler: str = "clang-16"
    arguments: tuple[str, ...] = ()

    @property
    def parameters(self) -> dict[str, tuple[str, ...]]:
        """Every searched parameter: flag groups first, then macros."""
        return {**self.flags, **self.macros}

    @property
    def size(self) -> int:
        """Number of configurations."""
        return math.prod(len(values) for values in self.parameters.values())

    def default(self) -> dict[str, str]:
        """The configuration of every parameter's first value (the default build)."""
        return {name: values[0] for name, values in self.parameters.items()}

    def all_configurations(self) -> list[dict[str, str]]:
        """Every configuration, in the order of the space file."""
        names = list(self.parameters)
        return [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*self.parameters.values())
        ]

    def adapt(self, config: dict[str, Any]) -> dict[str, str]:
        """``config`` restricted to this space (missing or unknown values take the first)."""
        return {
            name: str(config[name]) if str(config.get(name)) in values else values[0]
            for name, values in self.parameters.items()
        }

    def compile_flags(self, config: dict[str, str]) -> list[str]:
        """The compiler flags of a configuration."""
        flags: list[str] = []
        for name in self.flags:
            flags.extend(config[name].split())
        flags.extend(f"-D{name}={config[name]}" for name in self.macros)
        flags.extend(f"-D{name}={value}" for name, value in self.defines.items())
        return flags


def _refuse_unknown_keys(
    table: Mapping[str, Any],
    allowed: Collection[str],
    path: Path,
    text: str,
    spelled: Callable[[str], str],
) -> None:
    """An error naming the file, line and key of the first key of ``table`` not ``allowed``."""
    for key in table:
        if key not in allowed:
            raise InputError(
                f"unknown key {spelled(key)} (allowed: {', '.join(sorted(allowed))})",
                path,
                _line_of(text, key),
                reason="unknown-key",
                value=key,
            )


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(f"[{key}]") or stripped.split("=")[0].strip() == key:
            return number
    return None


def _table(path: Path, text: str, section: str, table: Any) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise InputError(
            f"[{section}] must be a table", path, _line_of(text, section), reason="bad-space"
        )
    return table


def _alternatives(path: Path, text: str, section: str, table: Any) -> dict[str, tuple[str, ...]]:
    table = _table(path, text, section, table)
    result = {}
    for name, values in table.items():
        if not isinstance(values, list) or not values or not all(_is_c_value(v) for v in values):
            raise InputError(
                f"{section}.{name} must be a non-empty list of strings or finite numbers",
                path,
                _line_of(text, name),
                reason="bad-space",
                value=name,
            )
        result[name] = tuple(str(v) for v in values)
        if len(set(result[name])) != len(values):
            raise InputError(
                f"{section}.{name} lists a value twice",
                path,
                _line_of(text, name),
                reason="bad-space",
                value=name,
            )
    return result


def _is_c_value(value: Any) -> bool:
    """True for a value a flag or macro can take: a string or a finite number (TOML's ``nan``,
    ``inf``, booleans, arrays and tables have no C spelling the space's author could mean)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _check_size(size: int, path: Path | None = None) -> None:
    if size > MAX_CONFIGURATIONS:
        raise InputError(
            f"the space has {size:,} configurations; perfcast lists them all to search them, "
            f"at most {MAX_CONFIGURATIONS:,}: fix some values with [defines]",
            path,
            reason="bad-space",
            value=size,
        )


def load_space(path: str | Path) -> TuningSpace:
    """Read a search-space TOML file.

    Sections: ``[flags]`` (name = list of alternative flag strings), ``[macros]`` (macro = list
    of values), ``[defines]`` (macro = fixed value) and ``[measure]`` (``objective`` =
    ``"instructions"``, ``"time"`` or ``"cycles"``, ``repetitions``, ``compiler``,
    ``arguments``).

    Raises
    ------
    InputError
        Naming the file, the line and the key for an unknown key or a bad value.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as error:
        raise InputError(
            f"cannot read the space file: {error}", path, reason="missing-file"
        ) from error
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte {error.start}): not a space file", path, reason="bad-space"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML: {error}", path, reason="bad-space") from error
    except RecursionError:  # tomllib recurses once per level of ``[[[[...``
        raise InputError(
            "not valid TOML: arrays or tables nested too deeply", path, reason="bad-space"
        ) from None
    _refuse_unknown_keys(data, _SECTIONS, path, text, repr)
    measure = _table(path, text, "measure", data.get("measure", {}))
    _refuse_unknown_keys(measure, _MEASURE_KEYS, path, text, lambda key: f"measure.{key}")
    flags = _alternatives(path, text, "flags", data.get("flags", {}))
    macros = _alternatives(path, text, "macros", data.get("macros", {}))
    if not flags and not macros:
        raise InputError("the space has no parameter to search", path, reason="bad-space")
    _check_size(math.prod(len(values) for values in (*flags.values(), *macros.values())), path)
    defines = _table(path, text, "defines", data.get("defines", {}))
    for name, value in defines.items():
        if not _is_c_value(value):
            raise InputError(
                f"defines.{name} must be a string or a finite number, not {value!r}",
                path,
                _line_of(text, name),
                reason="bad-space",
                value=name,
            )
    for section, names in (("macros", macros), ("defines", defines)):
        for name in names:
            if not _IDENTIFIER.fullmatch(name):
                raise InputError(
                    f"{section}.{name!r} is not a C macro name",
                    path,
                    _line_of(text, name) or _line_of(text, f'"{name}"'),
                    reason="bad-space",
                    value=name,
                )
    objective = measure.get("objective", "instructions")
    if objective not in OBJECTIVES:
        raise InputError(
            f"measure.objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}",
            path,
            _line_of(text, "objective"),
            reason="bad-space",
            value=objective,
        )
    repetitions = measure.get("repetitions", 3)
    if not isinstance(repetitions, int) or isinstance(repetitions, bool) or repetitions < 1:
        raise InputError(
            "measure.repetitions must be a whole number of at least 1",
            path,
            _line_of(text, "repetitions"),
            reason="bad-space",
            value=repetitions,
        )
    compiler = measure.get("compiler", "clang-16")
    if not isinstance(compiler, str) or not compiler:
        raise InputError(
            "measure.compiler must be a command name",
            path,
            _line_of(text, "compiler"),
            reason="bad-space",
            value=compiler,
        )
    arguments = measure.get("arguments", [])
    if not isinstance(arguments, list) or not all(
        isinstance(a, str | int | float) and not isinstance(a, bool) for a in arguments
    ):
        raise InputError(
            "measure.arguments must be a list of strings or numbers",
            path,
            _line_of(text, "arguments"),
            reason="bad-space",
            value=arguments,
        )
    return TuningSpace(
        flags,
        macros,
        {str(k): str(v) for k, v in defines.items()},
        objective,
        repetitions,
        compiler,
        tuple(str(a) for a in arguments),
    )


@dataclass(frozen=True)
class TuningResult:
    """The evaluations of one search, the best, and what the warm start saved."""

    file: str
    function: str
    objective: str
    strategy: str
    budget: int
    evaluations: tuple[Evaluation, ...]
    best: Evaluation | None
    reference: float | None
    steps_to_within: int | None
    warm_sources: tuple[tuple[str, str, float], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def budget_saved(self) -> float | None:
        """Share of the budget left after first reaching within 5 % of the reference."""
        if self.steps_to_within is None or self.budget == 0:
            return None
        return 1.0 - self.steps_to_within / self.budget

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "file": self.file,
            "function": self.function,
            "objective": self.objective,
            "strategy": self.strategy,
            "budget": self.budget,
            "best": None if self.best is None else _evaluation_dict(self.best),
            "reference_best": self.reference,
            "evaluations_to_within_5_percent": self.steps_to_within,
            "budget_saved": self.budget_saved,
            "warm_start_from": [
                {"file": f, "function": fn, "similarity": s} for f, fn, s in self.warm_sources
            ],
            "evaluations": [_evaluation_dict(e) for e in self.evaluations],
            "notes": list(self.notes),
        }


def _evaluation_dict(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "step": evaluation.step,
        "config": evaluation.config,
        "value": evaluation.value,
        "instructions": evaluation.instructions,
        "seconds": evaluation.seconds,
        "scope": evaluation.scope,
        "origin": evaluation.origin,
        "error": evaluation.error,
    }


Measure = Callable[[dict[str, str]], KernelRun]


def _model_pick(
    space: TuningSpace, tried: list[tuple[dict[str, str], float]], untried: list[dict[str, str]]
) -> dict[str, str]:
    effects: dict[tuple[str, str], list[float]] = {}
    for config, value in tried:
        for name, choice in config.items():
            effects.setdefault((name, choice), []).append(math.log(max(value, 1e-300)))
    best_seen = min((min(v) for v in effects.values()), default=0.0)

    def predicted(config: dict[str, str]) -> float:
        total = 0.0
        for name, choice in config.items():
            values = effects.get((name, choice))
            total += sum(values) / len(values) if values else best_seen
        return total

    return min(untried, key=predicted)


def search(
    space: TuningSpace,
    measure: Measure,
    *,
    budget: int,
    strategy: str = "random",
    seed: int = 0,
    first: Sequence[dict[str, str]] = (),
    prior: TransferPrior | None = None,
) -> list[tuple[dict[str, str], KernelRun, str]]:
    """Evaluate up to ``budget`` configurations: ``first`` ones, then by ``strategy``.

    With a ``prior`` from similar kernels, the ``model`` strategy alternates from the first
    step on between the configuration the prior corrected with this kernel's measurements
    ranks best (:func:`~perfcast.analyze.transfer.transfer_pick`) and the one its own additive
    model ranks best (which tries every parameter value early), instead of starting with
    random configurations: when the neighbours are right the search follows them at half
    speed at worst, when they are wrong it still explores.

    Returns
    -------
    list of (configuration, KernelRun, origin)
        In evaluation order; ``origin`` is ``warm`` for the ``first`` ones, else the strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy: must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if budget < 1:
        raise ValueError(f"budget: must be at least 1, not {budget}")
    _check_size(space.size)
    rng = random.Random(seed)
    pending = space.all_configurations()
    if strategy != "exhaustive":
        rng.shuffle(pending)
    done: list[tuple[dict[str, str], KernelRun, str]] = []
    scored: list[tuple[dict[str, str], float]] = []

    def evaluate(config: dict[str, str], origin: str) -> None:
        pending.remove(config)
        run = measure(config)
        done.append((config, run, origin))
        value = _objective(run, space.objective)
        if value is not None:
            scored.append((config, value))

    for config in first:
        if len(done) < budget and config in pending:
            evaluate(config, "warm")
    initial = max(3, budget // 4)
    transfer_turn = True
    while len(done) < budget and pending:
        if strategy == "model" and prior is not None and (transfer_turn or not scored):
            evaluate(transfer_pick(prior, scored, pending), strategy)
            transfer_turn = False
        elif strategy == "model" and prior is not None:
            evaluate(_model_pick(space, scored, pending), strategy)
            transfer_turn = True
        elif strategy == "model" and len(done) >= initial and scored:
            evaluate(_model_pick(space, scored, pending), strategy)
        else:
            evaluate(pending[0], strategy)
    return done


def _objective(run: KernelRun, objective: str) -> float | None:
    if run.error:
        return None
    value = {"instructions": run.instructions, "cycles": run.cycles}.get(objective, run.seconds)
    return None if value is None else float(value)


def tune(
    source: str | Path,
    function: str,
    space: TuningSpace,
    *,
    budget: int | None = None,
    strategy: str = "random",
    seed: int = 0,
    database: str | Path | None = None,
    warm_start: bool = False,
    neighbours: int = 3,
    flags: Sequence[str] = (),
    measure: Measure | None = None,
) -> TuningResult:
    """Search the space for the configuration of ``function`` minimising the objective.

    Parameters
    ----------
    source : str or Path
        C program (with ``main``) containing the kernel function.
    function : str
        The kernel function (its hCFG keys the database).
    space : TuningSpace
        Parameters and measurement settings (:func:`load_space`).
    budget : int, optional
        Evaluations at most (default: the whole space for ``exhaustive``, else 20).
    strategy : {"exhaustive", "random", "model"}
        Search strategy after the warm-start configurations.
    seed : int
        Seed of the random choices.
    database : str or Path, optional
        Tuning database file to read (warm start) and write; none when omitted.
    warm_start : bool
        Try the best configurations of the most similar tuned kernels first.
    neighbours : int
        How many similar kernels a warm start draws from.
    flags : sequence of str
        Flags for clang when building the kernel's graph (``-D``, ``-I``).
    measure : callable, optional
        ``measure(config) -> KernelRun``; by default the configuration is compiled and run.

    Returns
    -------
    TuningResult

    Raises
    ------
    InputError
        When a warm start has no database, or the space's compiler is not installed.
    """
    if warm_start and database is None:
        raise InputError("a warm start needs a tuning database", reason="warm-without-database")
    if measure is None and shutil.which(space.compiler) is None:
        raise InputError(
            f"the space's measure.compiler '{space.compiler}' is not installed",
            reason="missing-compiler",
            value=space.compiler,
        )
    if budget is None:
        budget = space.size if strategy == "exhaustive" else min(20, space.size)
    graph = build_graphs(source, function=function, scope="function", flags=flags)[0]
    where = str(Path(source).resolve())  # the database names kernels by absolute path
    vector = embed(graph)
    notes: list[str] = []

    def build_and_run(config: dict[str, str]) -> KernelRun:
        return measure_configuration(
            source,
            function,
            space.compile_flags(config),
            compiler=space.compiler,
            arguments=space.arguments,
            repetitions=space.repetitions,
            count_instructions=space.objective == "instructions",
            simulate_cache=space.objective == "cycles",
        )

    store = TuningDatabase(database) if database is not None else None
    try:
        first: list[dict[str, str]] = []
        prior: TransferPrior | None = None
        sources: list[tuple[str, str, float]] = []
        previous: float | None = None
        if store is not None:
            me = {"file": where, "function": function}
            if warm_start:
                measured = []
                for kernel, score in store.nearest(vector, neighbours, exclude=me):
                    done_there = [
                        (e.config, e.value)
                        for e in store.evaluations(kernel.id)
                        if e.objective == space.objective and not e.error and e.value is not None
                    ]
                    if not done_there:
                        continue
                    measured.append((score, done_there))
                    sources.append((kernel.file, kernel.function, score))
                prior = TransferPrior.from_neighbours(measured, space.adapt)
                if prior is not None:
                    bests = [space.adapt(min(m, key=lambda cv: cv[1])[0]) for _, m in measured]
                    unique = [c for i, c in enumerate(bests) if c not in bests[:i]]
                    first = prior.ranked(unique)[:budget]
                if not first:
                    notes.append("warm start found no tuned kernel in the database")
                weak = [f"{fn} ({score:.2f})" for _, fn, score in sources if score < WEAK_MATCH]
                if weak:
                    notes.append(
                        f"warm start from weakly similar kernels: {', '.join(weak)}; their "
                        "best configurations may not suit this one"
                    )
            known = [k for k in store.kernels() if k.file == where and k.function == function]
            if known:
                earlier = store.best(known[0].id, space.objective)
                previous = earlier.value if earlier is not None else None
        done = search(
            space,
            measure or build_and_run,
            budget=budget,
            strategy=strategy,
            seed=seed,
            first=first,
            prior=prior,
        )
        evaluations = tuple(
            Evaluation(
                step,
                config,
                space.objective,
                _objective(run, space.objective),
                run.instructions,
                run.seconds,
                run.scope,
                origin,
                run.error,
            )
            for step, (config, run, origin) in enumerate(done, start=1)
        )
        if store is not None:
            kernel_id = store.add_kernel(where, function, graph.scope, graph.line, vector)
            store.add_evaluations(kernel_id, uuid.uuid4().hex, evaluations)
    finally:
        if store is not None:
            store.close()
    ok = [e for e in evaluations if e.value is not None]
    best = min(ok, key=lambda e: e.value or 0.0) if ok else None
    if best is None:
        notes.append("no configuration built and ran; see the errors of the evaluations")
    failed = sum(1 for e in evaluations if e.error)
    if failed:
        notes.append(f"{failed} of {len(evaluations)} configurations failed")
    if any(e.scope == "program" for e in evaluations):
        notes.append(
            f"{function} was inlined in some builds: their instructions are the whole program's"
        )
    reference = None if best is None else best.value
    if previous is not None and (reference is None or previous < reference):
        reference = previous
        notes.append("the database holds a better configuration from an earlier search")
    steps = None
    if reference is not None:
        steps = next(
            (
                e.step
                for e in evaluations
                if e.value is not None and e.value <= reference * (1 + WITHIN)
            ),
            None,
        )
    if space.objective == "time":
        notes.extend(_noise_notes(done))
    return TuningResult(
        str(source),
        function,
        space.objective,
        strategy,
        budget,
        evaluations,
        best,
        reference,
        steps,
        tuple(sources),
        tuple(notes),
    )


def _noise_notes(done: Sequence[tuple[dict[str, str], KernelRun, str]]) -> list[str]:
    spreads = []
    for _, run, _ in done:
        times = run.seconds_all
        if len(times) > 1 and min(times) > 0:
            spreads.append((max(times) - min(times)) / min(times))
    if spreads and max(spreads) > WITHIN:
        return [
            f"wall time varied by up to {max(spreads):.0%} between repetitions: differences "
            "below that are noise; the instruction counts are deterministic"
        ]
    return []
