"""Campaign specifications: what to run, at which parameter values, how often and how.

A campaign is read from a TOML file (:func:`load_campaign`) or built from a mapping of the same
keys (:func:`campaign_from_mapping`, used for command-line flags). Everything is checked before
anything runs: unknown keys, bad ranges, templates naming undefined parameters, programs that do
not exist. See the README section "Running a measurement campaign" for the file format.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import re
import shlex
import shutil
import string
import tomllib
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError
from perfcast.io import output_format_for
from perfcast.io.run_table import PARQUET_SUFFIXES
from perfcast.measure.draws import DrawSpace, Value, draw_points, parse_draw_space, space_to_data
from perfcast.measure.ranges import RangeError, parse_values

METRIC_MODES = ("time", "instructions", "cache", "signature")
#: The metric that collects, during every ``time`` run, the records of a program built from
#: ``perfcast features`` output into the campaign's run table (no run mode of its own).
FEATURES_METRIC = "features"
#: Modes whose counts (valgrind's simulation) are the same on every run of a point: run once.
DETERMINISTIC_MODES = ("instructions", "cache", "signature")
CACHE_LEVELS = ("I1", "D1", "LL")
# Cache geometry used when a campaign names none, so simulated counts do not depend on the host.
DEFAULT_CACHE = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "8388608,16,64"}
KNOWN_KEYS = (
    "parameters",
    "command",
    "launcher",
    "repetitions",
    "timeout",
    "environment",
    "workdir",
    "metrics",
    "cache",
    "output",
    "seed",
    "max_runs",
    "executor",
    "slurm",
    "runs",
)
#: Where runs execute: ``local`` (this machine, one after another) or ``slurm`` (one batch job
#: per run, see :mod:`perfcast.measure.slurm`).
EXECUTORS = ("local", "slurm")
#: Fewest seconds between two looks at the Slurm queue: each look is an ``squeue`` call that
#: the controller answers, and a tighter loop only loads it (a job takes seconds to start).
MIN_POLL = 0.1
#: Most seconds between two looks at the queue.
MAX_POLL = 3600.0
#: Keys of the ``[slurm]`` table.
SLURM_KEYS = ("partition", "account", "nodes", "tasks_per_node", "time_limit", "options", "poll")
# sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS.
_TIME_LIMIT = re.compile(r"\d+(:\d{1,2}){0,2}|\d+-\d+(:\d{1,2}){0,2}")
#: Most runs (points x repetitions x metric modes) a campaign may have unless its ``max_runs``
#: key raises the limit: checked before any run is planned, so a typo like ``1..1e9`` in two
#: parameters fails at once instead of exhausting memory.
MAX_RUNS = 100_000
#: Largest width or precision a template field may ask for (``{n:08d}`` asks for 8): a command
#: word is at most 128 KiB on Linux, and ``{n:99999999999d}`` would exhaust memory when filled in.
MAX_FIELD_WIDTH = 1_000
_TABLES = ("parameters", "environment", "cache", "slurm")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Point = tuple[Value, ...]
# Makes the InputError for a message about a key of the campaign (and its table), with its line.
_Fail = Callable[..., InputError]


@dataclass(frozen=True)
class SlurmOptions:
    """How a campaign with ``executor = "slurm"`` submits its runs (the ``[slurm]`` table).

    Every run (point x repetition x metric mode) becomes one batch job.

    Attributes
    ----------
    partition, account : str or None
        ``sbatch --partition`` and ``--account``; the cluster's defaults when None.
    nodes : str
        ``--nodes`` of every job, a number or a template of the parameters (``"{nodes}"``).
    tasks_per_node : str or None
        ``--ntasks-per-node``, a number or a template (``"{p}"``); Slurm's default when None.
    time_limit : str or None
        ``--time`` (minutes, ``HH:MM:SS`` or ``D-HH:MM:SS``); when None, the campaign's
        ``timeout`` rounded up to minutes plus one minute, or the partition's limit.
    options : tuple of str
        Further ``sbatch`` options, word by word (e.g. ``["--exclusive"]``).
    poll : float
        Seconds between two looks at the queue, :data:`MIN_POLL` to :data:`MAX_POLL`.
    """

    partition: str | None = None
    account: str | None = None
    nodes: str = "1"
    tasks_per_node: str | None = None
    time_limit: str | None = None
    options: tuple[str, ...] = ()
    poll: float = 2.0

    def to_dict(self) -> dict[str, Any]:
        """The options as the keys of a ``[slurm]`` table."""
        return {
            "partition": self.partition,
            "account": self.account,
            "nodes": self.nodes,
            "tasks_per_node": self.tasks_per_node,
            "time_limit": self.time_limit,
            "options": list(self.options),
            "poll": self.poll,
        }


class CampaignWarning(UserWarning):
    """Something legal but probably unintended in a campaign, e.g. a parameter never used."""


@dataclass(frozen=True)
class Campaign:
    """A validated measurement campaign.

    Attributes
    ----------
    parameters : dict of str to list of values
        Values of every parameter; a grid campaign measures their Cartesian product, a drawn
        one (``runs``) lists here the distinct values its points hold.
    command : tuple of str
        The command template, one word per element; ``{name}`` is replaced by parameter values.
    launcher : tuple of str
        Words put before the command (e.g. ``mpirun -np {p}``), also templates; may be empty.
    repetitions : int
        Runs per point and metric mode.
    timeout : float or None
        Seconds one run may take before it is killed.
    environment : dict of str to str
        Extra environment variables (values are templates).
    workdir : Path
        Absolute directory the runs start in.
    metrics : tuple of str
        Metric modes, each a separate run per point and repetition: ``time`` (plain run, wall
        time and the program's own region records), ``instructions`` (callgrind) and ``cache``
        (cachegrind).
    cache : dict of str to str
        Simulated cache geometry ``"size,associativity,line"`` for ``I1``, ``D1`` and ``LL``.
    output : Path
        Where the experiment table is written; the results journal sits next to it.
    seed : int or None
        Seed of the randomized run order; None draws one (and records it).
    source : str
        The campaign file, or ``"command line"``, for messages.
    executor : str
        ``local`` (default) or ``slurm`` (see :data:`EXECUTORS`).
    slurm : SlurmOptions
        How runs are submitted with the ``slurm`` executor.
    runs : int or None
        With a number, the campaign measures that many points drawn at random from
        ``spaces`` (see :mod:`perfcast.measure.draws`) instead of the grid.
    spaces : dict of str to DrawSpace
        What each parameter of a drawn campaign is drawn from.
    drawn : tuple of points
        The drawn points, in draw order (empty for a grid campaign).
    collect_features : bool
        ``metrics`` named ``features``: every ``time`` run collects the feature records of a
        program built from ``perfcast features`` output into the run table.
    """

    parameters: dict[str, list[Value]]
    command: tuple[str, ...]
    launcher: tuple[str, ...] = ()
    repetitions: int = 1
    timeout: float | None = None
    environment: dict[str, str] = field(default_factory=dict)
    workdir: Path = field(default_factory=Path.cwd)
    metrics: tuple[str, ...] = ("time",)
    cache: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CACHE))
    output: Path = field(default_factory=lambda: Path.cwd() / "campaign.csv")
    seed: int | None = None
    source: str = "command line"
    executor: str = "local"
    slurm: SlurmOptions = field(default_factory=SlurmOptions)
    runs: int | None = None
    spaces: dict[str, DrawSpace] = field(default_factory=dict)
    drawn: tuple[Point, ...] = ()
    collect_features: bool = False

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """Parameter names in declaration order."""
        return tuple(self.parameters)

    @property
    def results_path(self) -> Path:
        """The append-only results journal, ``<output stem>.results.jsonl`` next to the output."""
        return self.output.with_name(f"{self.output.stem}.results.jsonl")

    def points(self) -> list[Point]:
        """Every point of the campaign: the drawn ones, or the Cartesian product of the values
        (declaration order)."""
        if self.runs is not None:
            return list(self.drawn)
        return list(itertools.product(*self.parameters.values()))

    @property
    def run_count(self) -> int:
        """Runs of the whole campaign (none expanded): points x metric modes x their runs per
        point, ``repetitions`` for ``time`` and one for the deterministic modes."""
        per_point = sum(1 if m in DETERMINISTIC_MODES else self.repetitions for m in self.metrics)
        if self.runs is not None:
            return len(self.drawn) * per_point
        return math.prod(map(len, self.parameters.values())) * per_point

    @property
    def run_table_path(self) -> Path:
        """The run table of a campaign collecting features: ``<output stem>.runs.parquet`` for
        a Parquet output, else ``<output stem>.runs.csv``."""
        suffix = ".parquet" if self.output.suffix.lower() in PARQUET_SUFFIXES else ".csv"
        return self.output.with_name(f"{self.output.stem}.runs{suffix}")

    def values_of(self, point: Point) -> dict[str, Value]:
        """The point as a mapping from parameter name to value."""
        return dict(zip(self.parameter_names, point, strict=True))

    def render(self, point: Point) -> tuple[list[str], list[str], dict[str, str]]:
        """Substitute a point into the launcher, command and environment templates.

        Returns
        -------
        launcher : list of str
        command : list of str
        environment : dict of str to str
        """
        values = self.values_of(point)
        launcher = [word.format(**values) for word in self.launcher]
        command = [word.format(**values) for word in self.command]
        environment = {k: v.format(**values) for k, v in self.environment.items()}
        return launcher, command, environment

    @property
    def program_kernel(self) -> str:
        """Kernel name of the whole-program wall time: the program's file name."""
        word = self.command[0]
        return Path(word).name if "{" not in word else "program"

    def identity(self) -> dict[str, Any]:
        """What makes two campaigns measure the same thing (parameters and counts aside)."""
        identity: dict[str, Any] = {
            "parameters": sorted(self.parameters),
            "command": list(self.command),
            "launcher": list(self.launcher),
            "environment": dict(sorted(self.environment.items())),
            "metrics": list(self.metrics),
        }
        if "cache" in self.metrics:
            identity["cache"] = dict(sorted(self.cache.items()))
        if self.collect_features:
            identity["features"] = True
        return identity

    @property
    def fingerprint(self) -> str:
        """Short hash of :meth:`identity`; results recorded under another one are not reused."""
        text = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The campaign as plain JSON-able data (recorded in the results metadata)."""
        data = {
            "source": self.source,
            "parameters": {k: list(v) for k, v in self.parameters.items()},
            "command": list(self.command),
            "launcher": list(self.launcher),
            "repetitions": self.repetitions,
            "timeout": self.timeout,
            "environment": dict(self.environment),
            "workdir": str(self.workdir),
            "metrics": list(self.metrics),
            "cache": dict(self.cache),
            "output": str(self.output),
            "seed": self.seed,
            "executor": self.executor,
            "slurm": self.slurm.to_dict(),
            "fingerprint": self.fingerprint,
        }
        if self.collect_features:
            data["features"] = True
        if self.runs is not None:
            data["runs"] = self.runs
            data["spaces"] = {k: space_to_data(v) for k, v in self.spaces.items()}
            data["points"] = [list(point) for point in self.drawn]
        return data

    def slurm_shape(self, point: Point) -> tuple[int, int | None]:
        """Nodes and tasks per node of the batch job of ``point`` (None: Slurm's default)."""
        values = self.values_of(point)
        nodes = int(self.slurm.nodes.format(**values))
        tasks = self.slurm.tasks_per_node
        return nodes, None if tasks is None else int(tasks.format(**values))


def _toml_line(error: tomllib.TOMLDecodeError, text: str) -> int | None:
    match = re.search(r"line (\d+)", str(error))
    if match:
        return int(match.group(1))
    return max(1, len(text.splitlines())) if "end of document" in str(error) else None


def _key_line(text: str, key: str, section: str | None = None) -> int | None:
    """1-based line where ``key = ...`` is set (inside ``[section]`` when given)."""
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[\s*([^\]\s]+)\s*\]", line)
        if header:
            current = header.group(1)
            if section is None and current == key:  # the key is a table: its header line
                return number
            continue
        if current == section and re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=", line):
            return number
    return None


def campaign_line(source: str, key: str, section: str | None = None) -> int | None:
    """The 1-based line where ``key`` is set (inside ``[section]`` when given) in the campaign
    file ``source``, for a message about a setting found wrong only when the campaign runs.

    Parameters
    ----------
    source : str
        :attr:`Campaign.source`: the campaign file, or ``"command line"``.
    key : str
        The setting.
    section : str, optional
        The table it is set in.

    Returns
    -------
    int or None
        None when ``source`` is no readable file or does not set ``key``.
    """
    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _key_line(text, key, section)


def load_campaign(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Campaign:
    """Read and validate a campaign file.

    Parameters
    ----------
    path : str or Path
        The TOML campaign file.
    overrides : mapping, optional
        Keys replacing the file's (e.g. from command-line flags); the entries of the tables
        ``parameters``, ``environment`` and ``cache`` replace single entries.

    Returns
    -------
    Campaign

    Raises
    ------
    InputError
        Naming the file (and the line where known) for anything wrong in it.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read the campaign file: {error.strerror}", path) from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte {error.start}): not a campaign file", path
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(error))
        raise InputError(f"not valid TOML: {message}", path, _toml_line(error, text)) from None
    except RecursionError:  # tomllib recurses once per level of ``[[[[...``
        raise InputError("not valid TOML: arrays or tables nested too deeply", path) from None
    for key, value in (overrides or {}).items():
        if key in _TABLES:
            data[key] = {**(data.get(key) or {}), **value}
        else:
            data[key] = value
    return campaign_from_mapping(data, base=path.resolve().parent, source=str(path), text=text)


def campaign_from_mapping(
    data: Mapping[str, Any],
    base: Path | None = None,
    source: str = "command line",
    text: str | None = None,
) -> Campaign:
    """Validate a campaign given as a mapping of the campaign-file keys.

    Parameters
    ----------
    data : mapping
        The keys of a campaign file (``command`` may be a string or a list of words).
    base : Path, optional
        Directory relative paths (``workdir``, ``output``) start from; the current directory
        by default.
    source : str
        Name used in messages.
    text : str, optional
        The file's text, to report line numbers.

    Raises
    ------
    InputError
        For anything that would make the campaign fail or measure something else than intended.
    """
    base = Path.cwd() if base is None else base

    def fail(
        message: str, key: str | None = None, section: str | None = None, **details: Any
    ) -> InputError:
        line = _key_line(text, key, section) if text is not None and key is not None else None
        return InputError(message, source, line, **details)

    unknown = [k for k in data if k not in KNOWN_KEYS]
    if unknown:
        raise fail(f"unknown key '{unknown[0]}' (known: {', '.join(KNOWN_KEYS)})", unknown[0])

    runs = _runs(data, fail)
    spaces = _draw_spaces(data, fail) if runs is not None else {}
    parameters = _parameters(data, fail) if runs is None else {}
    command = _words(data.get("command"), "command", fail)
    if not command:
        raise fail("the campaign has no command", "command")
    launcher = _words(data.get("launcher", []), "launcher", fail)

    environment = _environment(data, fail)
    repetitions, timeout, seed = _run_settings(data, fail)
    metrics, collect_features = _metrics(data, fail)
    cache = _cache(data, fail)
    workdir, output = _paths(data, base, source, fail)
    executor, slurm = _executor(data, fail)

    campaign = Campaign(
        parameters=parameters,
        command=tuple(command),
        launcher=tuple(launcher),
        repetitions=repetitions,
        timeout=float(timeout) if timeout is not None else None,
        environment=environment,
        workdir=workdir,
        metrics=tuple(metrics),
        cache=cache,
        output=output,
        seed=seed,
        source=source,
        executor=executor,
        slurm=slurm,
        collect_features=collect_features,
    )
    if runs is not None:
        campaign = _drawn_campaign(campaign, runs, spaces, data, fail)
    _check_size(campaign, data, fail)
    _check_templates(campaign, fail)
    _check_slurm_shapes(campaign, fail)
    _check_programs(campaign, fail)
    return campaign


def _parameters(data: Mapping[str, Any], fail: _Fail) -> dict[str, list[Value]]:
    """The ``[parameters]`` table: each identifier with its values."""
    raw_parameters = data.get("parameters")
    if not isinstance(raw_parameters, Mapping) or not raw_parameters:
        raise fail("the campaign defines no [parameters]", "parameters")
    parameters: dict[str, list[Value]] = {}
    for name, raw in raw_parameters.items():
        if not _IDENTIFIER.fullmatch(name):
            raise fail(f"parameter name '{name}' is not an identifier", name, "parameters")
        if isinstance(raw, Mapping) or (
            isinstance(raw, list) and any(isinstance(v, str) for v in raw)
        ):
            kind = "a {min, max} range" if isinstance(raw, Mapping) else "a list of categories"
            raise fail(
                f"parameter '{name}': {kind} is drawn from at random; set runs = N to draw N "
                "points",
                name,
                "parameters",
            )
        try:
            parameters[name] = [*parse_values(raw)]
        except RangeError as error:
            raise fail(f"parameter '{name}': {error}", name, "parameters") from None
    return parameters


def _runs(data: Mapping[str, Any], fail: _Fail) -> int | None:
    """``runs``: how many random points to draw, or None for the grid."""
    runs = data.get("runs")
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        raise fail(f"runs must be a positive integer, not {runs!r}", "runs")
    return runs


def _draw_spaces(data: Mapping[str, Any], fail: _Fail) -> dict[str, DrawSpace]:
    """The ``[parameters]`` table of a drawn campaign: each identifier with its space."""
    raw_parameters = data.get("parameters")
    if not isinstance(raw_parameters, Mapping) or not raw_parameters:
        raise fail("the campaign defines no [parameters]", "parameters")
    spaces: dict[str, DrawSpace] = {}
    for name, raw in raw_parameters.items():
        if not _IDENTIFIER.fullmatch(name):
            raise fail(f"parameter name '{name}' is not an identifier", name, "parameters")
        try:
            spaces[name] = parse_draw_space(raw)
        except RangeError as error:
            raise fail(f"parameter '{name}': {error}", name, "parameters") from None
    return spaces


def _drawn_campaign(
    campaign: Campaign,
    runs: int,
    spaces: dict[str, DrawSpace],
    data: Mapping[str, Any],
    fail: _Fail,
) -> Campaign:
    """The campaign with its ``runs`` points drawn (from ``seed``, 0 when not given) and, as
    its parameter values, the distinct values they hold."""
    if all(isinstance(space, tuple) and isinstance(space[0], str) for space in spaces.values()):
        raise fail(
            "every parameter is a category; the experiment needs at least one numeric "
            "parameter (a range or a list of numbers)",
            "parameters",
        )
    limit = data.get("max_runs", MAX_RUNS)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        # checked here too: drawing an unbounded ``runs`` first would not end
        raise fail(f"max_runs must be a positive integer, not {limit!r}", "max_runs")
    if runs > limit:
        raise fail(f"runs = {runs} is more than max_runs = {limit}", "runs")
    try:
        drawn = draw_points(spaces, runs, campaign.seed if campaign.seed is not None else 0)
    except RangeError as error:
        raise fail(str(error), "runs") from None
    values = {
        name: list(dict.fromkeys(point[i] for point in drawn)) for i, name in enumerate(spaces)
    }
    return dataclasses.replace(campaign, parameters=values, runs=runs, spaces=spaces, drawn=drawn)


def _environment(data: Mapping[str, Any], fail: _Fail) -> dict[str, str]:
    """The ``[environment]`` table, values as strings."""
    environment = data.get("environment", {})
    if not isinstance(environment, Mapping) or not all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in environment.values()
    ):
        raise fail("[environment] must map names to strings or numbers", "environment")
    environment = {str(k): str(v) for k, v in environment.items()}
    return environment


def _run_settings(
    data: Mapping[str, Any], fail: _Fail
) -> tuple[int, float | int | None, int | None]:
    """``repetitions``, ``timeout`` (seconds, or None) and ``seed`` (or None)."""
    repetitions = data.get("repetitions", 1)
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise fail(f"repetitions must be a positive integer, not {repetitions!r}", "repetitions")
    timeout = data.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise fail(f"timeout must be a positive number of seconds, not {timeout!r}", "timeout")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise fail(f"seed must be an integer, not {seed!r}", "seed")
    return repetitions, timeout, seed


def _executor(data: Mapping[str, Any], fail: _Fail) -> tuple[str, SlurmOptions]:
    """``executor`` and the ``[slurm]`` table (its defaults when absent)."""
    executor = data.get("executor", "local")
    if executor not in EXECUTORS:
        raise fail(f"executor must be one of {', '.join(EXECUTORS)}, not {executor!r}", "executor")
    raw = data.get("slurm", {})
    if not isinstance(raw, Mapping):
        raise fail("[slurm] must be a table of " + ", ".join(SLURM_KEYS), "slurm")
    for key in raw:
        if key not in SLURM_KEYS:
            raise fail(
                f"unknown key '{key}' in [slurm] (known: {', '.join(SLURM_KEYS)})", key, "slurm"
            )
    texts: dict[str, str | None] = {}
    for key in ("partition", "account"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise fail(f"[slurm] {key} must be a name, not {value!r}", key, "slurm")
        texts[key] = value
    shapes: dict[str, str | None] = {}
    for key, default in (("nodes", 1), ("tasks_per_node", None)):
        value = raw.get(key, default)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            value = str(value)
        elif value is not None and not (isinstance(value, str) and "{" in value):
            raise fail(
                f'[slurm] {key} must be a positive integer or a template such as "{{p}}", '
                f"not {value!r}",
                key,
                "slurm",
            )
        shapes[key] = value
    limit = raw.get("time_limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1:
        limit = str(limit)
    elif limit is not None and not (isinstance(limit, str) and _TIME_LIMIT.fullmatch(limit)):
        raise fail(
            f"[slurm] time_limit must be minutes, HH:MM:SS or D-HH:MM:SS, not {limit!r}",
            "time_limit",
            "slurm",
        )
    options = _words(raw.get("options", []), "options", fail, "slurm")
    poll = raw.get("poll", 2.0)
    if (
        isinstance(poll, bool)
        or not isinstance(poll, int | float)
        or not MIN_POLL <= poll <= MAX_POLL
    ):
        raise fail(
            f"[slurm] poll must be seconds in [{MIN_POLL:g}, {MAX_POLL:g}], not {poll!r}",
            "poll",
            "slurm",
        )
    nodes = shapes["nodes"]
    assert nodes is not None, "nodes has a default"
    slurm = SlurmOptions(
        partition=texts["partition"],
        account=texts["account"],
        nodes=nodes,
        tasks_per_node=shapes["tasks_per_node"],
        time_limit=limit,
        options=tuple(options),
        poll=float(poll),
    )
    return executor, slurm


def _check_slurm_shapes(campaign: Campaign, fail: _Fail) -> None:
    """The ``[slurm]`` templates name parameters, and with the ``slurm`` executor every
    point's job gets a positive whole number of nodes and tasks per node."""
    templates = {"nodes": campaign.slurm.nodes, "tasks_per_node": campaign.slurm.tasks_per_node}
    for key, template in templates.items():
        for name in template_fields([template or ""]):
            if name not in campaign.parameters:
                raise fail(
                    f"[slurm] {key} uses {{{name}}} but no such parameter is defined", key, "slurm"
                )
    if campaign.executor != "slurm":
        return
    for point in campaign.points():
        try:
            nodes, tasks = campaign.slurm_shape(point)
            valid = nodes >= 1 and (tasks is None or tasks >= 1)
        except (ValueError, KeyError, IndexError):
            valid = False
        if not valid:
            values = " ".join(f"{k}={v}" for k, v in campaign.values_of(point).items())
            raise fail(
                f"[slurm] nodes and tasks_per_node must be positive whole numbers; at {values} "
                f"they are {campaign.slurm.nodes!r} and {campaign.slurm.tasks_per_node!r}",
                "slurm",
            )


def _check_size(campaign: Campaign, data: Mapping[str, Any], fail: _Fail) -> None:
    """Refuse a campaign of more runs than its ``max_runs`` (default :data:`MAX_RUNS`) allows,
    before any run is planned."""
    limit = data.get("max_runs", MAX_RUNS)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise fail(f"max_runs must be a positive integer, not {limit!r}", "max_runs")
    if campaign.run_count > limit:
        sizes = " x ".join(str(len(values)) for values in campaign.parameters.values())
        if campaign.runs is not None:
            sizes = f"{campaign.runs} drawn"
        raise fail(
            f"the campaign has {campaign.run_count} runs ({sizes} points x "
            f"{_runs_per_point(campaign)}), more than max_runs = {limit}",
            "max_runs" if "max_runs" in data else "parameters",
            reason="campaign-too-large",
            value=campaign.run_count,
        )


def _runs_per_point(campaign: Campaign) -> str:
    """How many runs a point takes, in words: ``3 repetitions x 2 metric modes``, or with a
    deterministic mode, ``3 repetitions of time + 1 run of instructions``."""
    if not any(m in DETERMINISTIC_MODES for m in campaign.metrics):
        return f"{campaign.repetitions} repetitions x {len(campaign.metrics)} metric modes"
    return " + ".join(
        f"1 run of {m}"
        if m in DETERMINISTIC_MODES
        else f"{campaign.repetitions} repetitions of {m}"
        for m in campaign.metrics
    )


def _metrics(data: Mapping[str, Any], fail: _Fail) -> tuple[list[str], bool]:
    """The metric modes to measure, each once, in the order given, and whether ``features``
    are collected (in the ``time`` runs, which it implies)."""
    metrics = data.get("metrics", ["time"])
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not metrics:
        raise fail("metrics must be a non-empty list", "metrics")
    known = (*METRIC_MODES, FEATURES_METRIC)
    for metric in metrics:
        if metric not in known:
            raise fail(f"unknown metric '{metric}' (known: {', '.join(known)})", "metrics")
    collect_features = FEATURES_METRIC in metrics
    modes = [m for m in dict.fromkeys(metrics) if m != FEATURES_METRIC]
    if collect_features and "time" not in modes:
        modes.insert(0, "time")
    return modes, collect_features


def _cache(data: Mapping[str, Any], fail: _Fail) -> dict[str, str]:
    """The simulated cache geometries: the defaults with the ``[cache]`` table's entries."""
    cache = dict(DEFAULT_CACHE)
    raw_cache = data.get("cache", {})
    if not isinstance(raw_cache, Mapping):
        raise fail("[cache] must be a table of I1, D1, LL geometries", "cache")
    for level, geometry in raw_cache.items():
        if level not in CACHE_LEVELS:
            raise fail(f"unknown cache level '{level}' (known: I1, D1, LL)", level, "cache")
        problem = cache_geometry_problem(geometry)
        if problem:
            raise fail(f"cache {level}: {problem}", level, "cache")
        cache[level] = str(geometry).replace(" ", "")
    return cache


def _paths(data: Mapping[str, Any], base: Path, source: str, fail: _Fail) -> tuple[Path, Path]:
    """The working directory and the output file, resolved from ``base``."""
    workdir = (base / str(data.get("workdir", "."))).resolve()
    if not workdir.is_dir():
        raise fail(f"working directory {workdir} does not exist", "workdir")
    default_output = f"{Path(source).stem}.csv" if source != "command line" else "campaign.csv"
    output = (base / str(data.get("output", default_output))).resolve()
    if not output.parent.is_dir():
        raise fail(f"the output directory {output.parent} does not exist", "output")
    if output.is_dir():
        raise fail(f"the output {output} is a directory, not a file", "output")
    try:
        output_format_for(output)
    except InputError as error:
        raise fail(f"output '{output.name}': {error.message}", "output") from None
    return workdir, output


def _words(raw: Any, key: str, fail: Any, section: str | None = None) -> list[str]:
    """``raw`` as a list of words (a string is split as a shell would); ``section`` is the
    table the key lies in, for the error's name and line."""
    name = key if section is None else f"[{section}] {key}"
    if isinstance(raw, str):
        try:
            return shlex.split(raw)
        except ValueError as error:
            raise fail(f"{name}: {error}", key, section) from None
    if isinstance(raw, list) and all(isinstance(w, str) for w in raw):
        return list(raw)
    if raw is None:
        return []
    raise fail(f"{name} must be a string or a list of strings", key, section)


def cache_geometry_problem(geometry: Any) -> str | None:
    """Why ``"size,associativity,line"`` is not a cache valgrind can simulate (None if it is)."""
    parts = str(geometry).replace(" ", "").split(",")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        return f"expected 'size,associativity,line_size' in bytes, not {geometry!r}"
    size, assoc, line = (int(p) for p in parts)
    if line & (line - 1):
        return f"line size {line} is not a power of two"
    if size % (assoc * line):
        return f"size {size} is not a multiple of associativity x line size"
    sets = size // (assoc * line)
    if sets & (sets - 1):
        return f"{sets} sets is not a power of two"
    return None


def template_fields(words: Iterable[str]) -> Iterator[str]:
    """Names of the ``{fields}`` in template words (``{{`` and ``}}`` are literal braces).

    Raises
    ------
    ValueError
        On unbalanced braces.
    """
    for word in words:
        for _, name, _, _ in string.Formatter().parse(word):
            if name is not None:
                yield name


def _format_spec_problem(word: str) -> str | None:
    """Why a format spec of the template ``word`` cannot be filled in safely (None if none).

    A nested field (``{n:{w}d}``) would take its width from a parameter value, unchecked; a
    width or precision above :data:`MAX_FIELD_WIDTH` would build a huge string.
    """
    for _, name, spec, _ in string.Formatter().parse(word):
        if name is None or not spec:
            continue
        if "{" in spec or "}" in spec:
            return f"the format of {{{name}}} holds a nested field, which is not supported"
        for run in re.findall(r"\d+", spec):
            digits = run.lstrip("0") or "0"
            if len(digits) > len(str(MAX_FIELD_WIDTH)) or int(digits) > MAX_FIELD_WIDTH:
                return (
                    f"the format of {{{name}}} asks for a width or precision of {digits}, "
                    f"more than {MAX_FIELD_WIDTH}"
                )
    return None


def _check_templates(campaign: Campaign, fail: Any) -> None:
    templates = {
        "command": campaign.command,
        "launcher": campaign.launcher,
        "environment": tuple(campaign.environment.values()),
    }
    used: set[str] = set()
    for key, words in templates.items():
        for word in words:
            try:
                names = list(template_fields([word]))
            except ValueError as error:
                raise fail(f"{key}: bad template {word!r}: {error}", key) from None
            problem = _format_spec_problem(word)
            if problem:
                raise fail(f"{key}: template {word!r}: {problem}", key, value=word)
            for name in names:
                if name not in campaign.parameters:
                    defined = ", ".join(campaign.parameters)
                    raise fail(
                        f"{key} uses {{{name}}} but no such parameter is defined "
                        f"(defined: {defined})",
                        key,
                    )
                used.add(name)
    first = [tuple(values[0] for values in campaign.parameters.values())]
    try:
        for point in campaign.points() if campaign.runs is not None else first:
            campaign.render(point)
    except (ValueError, KeyError, IndexError) as error:
        raise fail(f"a template cannot be filled in: {error}", "command") from None
    for name in campaign.parameters:
        if name not in used:
            warnings.warn(
                f"{campaign.source}: parameter '{name}' is not used by the command, launcher or "
                "environment, so every value of it runs the same thing",
                CampaignWarning,
                stacklevel=3,
            )


def resolve_program(word: str, workdir: Path, path_variable: str | None) -> str | None:
    """Absolute path of the program ``word`` names, as the runner would start it, or None.

    A word with a slash is taken relative to ``workdir``; a bare name is looked up on
    ``path_variable``.
    """
    if "/" in word:
        candidate = workdir / word
        ok = candidate.is_file() and os.access(candidate, os.X_OK)
        return str(candidate.resolve()) if ok else None
    return shutil.which(word, path=path_variable)


def _check_programs(campaign: Campaign, fail: Any) -> None:
    search_path = campaign.environment.get("PATH", os.environ.get("PATH", os.defpath))
    words: dict[str, tuple[str, str]] = {}
    for point in campaign.points():
        launcher, command, environment = campaign.render(point)
        path_variable = environment.get("PATH", search_path)
        if launcher:
            words.setdefault(launcher[0], (path_variable, "launcher"))
        words.setdefault(command[0], (path_variable, "command"))
    if any(m in ("instructions", "cache", "signature") for m in campaign.metrics):
        words.setdefault("valgrind", (search_path, "metrics"))
    for word, (path_variable, key) in words.items():
        if resolve_program(word, campaign.workdir, path_variable) is None:
            where = f"in {campaign.workdir}" if "/" in word else "on PATH"
            hint = ""
            if "/" not in word and (campaign.workdir / word).is_file():
                hint = f"; to run the one in the working directory, write './{word}'"
            raise fail(f"{key}: program '{word}' not found {where} (or not executable){hint}", key)
