"""Deterministic per-function metrics from valgrind: callgrind instructions, cachegrind caches.

The runner puts ``valgrind`` between the launcher and the program (``mpirun -np 4 valgrind ...
./app``), so every rank writes its own profile (``%p`` in the file name is its process id).
The profiles are parsed here, without valgrind's annotate scripts, and summed over ranks (one
metric, ``instructions.rank_max``, takes the maximum instead).

Metrics (kernel = function name; ``file:function`` when one name belongs to several files):

``instructions``
    Instructions executed in the function itself (callgrind's exclusive ``Ir``).
``instructions.rank_max``
    The largest exclusive ``Ir`` of the function on any one rank: the critical path's share,
    which shrinks like ``1/p`` for work divided among ranks, where the sum stays constant.
``instructions.inclusive``
    Instructions executed in the function and everything it calls. Callgrind's recursion
    levels (``f'2``, ``f'3``) are merged into ``f``, and calls of a function to itself are not
    added again (they are already inside its own count); mutual recursion is counted twice.
``cache.reads`` / ``cache.writes``
    Data reads (``Dr``) and writes (``Dw``).
``cache.d1_misses`` / ``cache.ll_misses``
    First-level data misses (``D1mr + D1mw``) and last-level data misses (``DLmr + DLmw``).
``cache.d1_hit_rate``
    ``1 - d1_misses / (reads + writes)``, for functions with data accesses.
``cache.ll_hit_rate``
    ``1 - ll_misses / d1_misses`` (LL is reached by D1 misses), for functions with D1 misses.

Functions with no instructions (or, for cache metrics, no data accesses) carry no records.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from perfcast.core.errors import InputError

VALGRIND_MODES = ("instructions", "cache", "signature")
PROFILE_PREFIX = {
    "instructions": "callgrind.out",
    "cache": "cachegrind.out",
    "signature": "callgrind.out",
}
_COMPRESSED = re.compile(r"^\((\d+)\)(?:\s(.*))?$")
_COST_START = re.compile(r"^[0-9+\-*]")
_RECURSION_LEVEL = re.compile(r"'\d+$")  # callgrind names deeper recursion levels f'2, f'3


class ProfileError(ValueError):
    """A valgrind profile that cannot be read; the message names file and line."""


@dataclass(frozen=True, order=True)
class Function:
    """A function as valgrind identifies it: object file, source file and name."""

    name: str
    file: str = "???"
    obj: str = "???"


@dataclass
class Profile:
    """Costs of one or more valgrind runs, per function.

    Attributes
    ----------
    events : list of str
        Event names, the columns of every cost vector.
    exclusive : dict of Function to list of int
        Cost spent in the function itself.
    inclusive : dict of Function to list of int
        Cost of the function and its callees (equal to ``exclusive`` for cachegrind, which
        records no calls).
    """

    events: list[str]
    exclusive: dict[Function, list[int]] = field(default_factory=dict)
    inclusive: dict[Function, list[int]] = field(default_factory=dict)

    def add(self, other: Profile) -> None:
        """Add another profile's costs (e.g. another rank) to this one."""
        if other.events != self.events:
            raise ProfileError(f"profiles count different events: {self.events} vs {other.events}")
        for mine, theirs in ((self.exclusive, other.exclusive), (self.inclusive, other.inclusive)):
            for function, costs in theirs.items():
                _accumulate(mine, function, costs)


def _accumulate(table: dict[Function, list[int]], key: Function, costs: list[int]) -> None:
    current = table.get(key)
    if current is None:
        table[key] = list(costs)
    else:
        for i, cost in enumerate(costs):
            current[i] += cost


def valgrind_prefix(mode: str, profile_dir: Path, cache: Mapping[str, str]) -> list[str]:
    """The ``valgrind ...`` words that go before the program for a metric mode.

    Parameters
    ----------
    mode : {"instructions", "cache", "signature"}
    profile_dir : Path
        Directory the per-process profiles are written to.
    cache : mapping
        Cache geometry ``"size,assoc,line"`` per level ``I1``, ``D1``, ``LL`` (cache mode).
    """
    out = profile_dir / f"{PROFILE_PREFIX[mode]}.%p"
    if mode == "instructions":
        return ["valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if mode == "cache":
        geometry = [f"--{level}={cache[level]}" for level in ("I1", "D1", "LL")]
        return [
            "valgrind",
            "-q",
            "--tool=cachegrind",
            "--cache-sim=yes",
            *geometry,
            f"--cachegrind-out-file={out}",
        ]
    if mode == "signature":  # PMaC signatures: per-instruction costs with cache simulation
        from perfcast.measure.signature import callgrind_command

        return callgrind_command(profile_dir, cache)
    raise ValueError(f"no valgrind tool for metric mode '{mode}'")


class _Names:
    """Callgrind's name compression: ``(id) name`` defines, ``(id)`` refers back."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}

    def resolve(self, text: str, where: str) -> str:
        match = _COMPRESSED.match(text)
        if match is None:
            return text
        ident, name = match.groups()
        if name is not None:
            self.by_id[ident] = name
            return name
        if ident not in self.by_id:
            raise ProfileError(f"{where}: name id ({ident}) used before it is defined")
        return self.by_id[ident]


def parse_profile(path: str | Path) -> Profile:
    """Parse one callgrind or cachegrind output file.

    Reads the header (``events:``, ``positions:``), the ``ob=``/``fl=``/``fn=`` context lines
    (with name compression), cost lines, and callgrind's ``calls=`` lines whose following cost
    line is the inclusive cost of a call.

    Raises
    ------
    ProfileError
        On a file without ``events:`` or a cost line that is not numbers.
    """
    path = Path(path)
    files, functions, objects = _Names(), _Names(), _Names()
    events: list[str] | None = None
    n_positions = 1
    obj = file = "???"
    current: Function | None = None
    callee: Function | None = None
    pending_call = False
    callee_file: str | None = None
    callee_obj: str | None = None
    exclusive: dict[Function, list[int]] = {}
    calls: dict[Function, list[int]] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\n")
            where = f"{path}:{number}"
            if not line or line.startswith("#"):
                continue
            if _COST_START.match(line):
                if events is None or current is None:
                    raise ProfileError(f"{where}: cost line before 'events:' and 'fn='")
                costs = _costs(line, n_positions, len(events), where)
                if pending_call:
                    if callee != current:  # recursion is already inside the own count
                        _accumulate(calls, current, costs)
                    pending_call = False
                else:
                    _accumulate(exclusive, current, costs)
                continue
            key, equals, value = line.partition("=")
            if key in ("fl", "fi", "fe", "cfi", "cfl", "ob", "cob", "fn", "cfn") and equals:
                if key == "fl":
                    file = files.resolve(value, where)
                elif key in ("fi", "fe"):
                    files.resolve(value, where)
                elif key in ("cfi", "cfl"):
                    callee_file = files.resolve(value, where)
                elif key == "ob":
                    obj = objects.resolve(value, where)
                elif key == "cob":
                    callee_obj = objects.resolve(value, where)
                elif key == "fn":
                    name = _RECURSION_LEVEL.sub("", functions.resolve(value, where))
                    current = Function(name, file, obj)
                    callee_file = callee_obj = None
                else:  # cfn
                    name = _RECURSION_LEVEL.sub("", functions.resolve(value, where))
                    callee = Function(name, callee_file or file, callee_obj or obj)
                continue
            if key == "calls" and equals:
                pending_call = True
                continue
            header, _colon, rest = line.partition(":")
            if header == "events":
                events = rest.split()
            elif header == "positions":
                n_positions = len(rest.split())
    if events is None:
        raise ProfileError(f"{path}: no 'events:' line; not a callgrind/cachegrind profile")
    inclusive = {function: list(costs) for function, costs in exclusive.items()}
    for function, costs in calls.items():
        _accumulate(inclusive, function, costs)
    return Profile(events, exclusive, inclusive)


def _costs(line: str, n_positions: int, n_events: int, where: str) -> list[int]:
    words = line.split()[n_positions:]
    if len(words) > n_events:
        raise ProfileError(f"{where}: {len(words)} costs but {n_events} events")
    try:
        values = [int(w, 0) for w in words]
    except ValueError:
        raise ProfileError(f"{where}: cost line {line!r} is not numbers") from None
    return values + [0] * (n_events - len(values))


def sum_profiles(profiles: list[Profile]) -> Profile:
    """The sum of per-rank profiles (the inputs are left unchanged)."""
    if not profiles:
        raise ProfileError("valgrind wrote no profile")
    total = Profile(list(profiles[0].events))
    for profile in profiles:
        total.add(profile)
    return total


def rank_max_records(ranks: list[Profile]) -> list[dict[str, object]]:
    """``instructions.rank_max`` records: each function's largest exclusive ``Ir`` on one rank."""
    names = kernel_names([f for rank in ranks for f in rank.exclusive])
    largest: dict[str, int] = {}
    for rank in ranks:
        column = rank.events.index("Ir")
        for kernel, costs in _by_kernel(rank.exclusive, names).items():
            largest[kernel] = max(largest.get(kernel, 0), costs[column])
    return [
        {"kernel": kernel, "metric": "instructions.rank_max", "value": value}
        for kernel, value in sorted(largest.items())
        if value > 0
    ]


def kernel_names(functions: Iterable[Function]) -> dict[Function, str]:
    """Kernel name per function: its name, or ``file:name`` when the name is ambiguous."""
    functions = sorted(set(functions))
    files_per_name: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for function in functions:
        files_per_name[function.name].add((function.file, function.obj))
    names = {}
    for function in functions:
        if len(files_per_name[function.name]) == 1:
            names[function] = function.name
        else:
            where = function.file if function.file != "???" else function.obj
            names[function] = f"{Path(where).name}:{function.name}"
    return names


def _by_kernel(table: Mapping[Function, list[int]], names: Mapping[Function, str]) -> dict:
    merged: dict[str, list[int]] = {}
    for function, costs in table.items():
        key = names[function]
        if key in merged:
            merged[key] = [a + b for a, b in zip(merged[key], costs, strict=True)]
        else:
            merged[key] = list(costs)
    return merged


def instruction_records(profile: Profile) -> list[dict[str, object]]:
    """``instructions`` and ``instructions.rank_max``
        The largest exclusive ``Ir`` of the function on any one rank: the critical path's share,
        which shrinks like ``1/p`` for work divided among ranks, where the sum stays constant.
    ``instructions.inclusive`` records per function of a callgrind profile.

        Raises
        ------
        ProfileError
            When the profile has no ``Ir`` event.
    """
    if "Ir" not in profile.events:
        raise ProfileError(f"the profile counts {profile.events}, not Ir")
    column = profile.events.index("Ir")
    names = kernel_names([*profile.exclusive, *profile.inclusive])
    exclusive = _by_kernel(profile.exclusive, names)
    inclusive = _by_kernel(profile.inclusive, names)
    records: list[dict[str, object]] = []
    for kernel in sorted(set(exclusive) | set(inclusive)):
        own = exclusive.get(kernel, [0] * len(profile.events))[column]
        total = inclusive.get(kernel, [own])[column] if inclusive else own
        if own == 0 and total == 0:
            continue
        records.append({"kernel": kernel, "metric": "instructions", "value": own})
        records.append({"kernel": kernel, "metric": "instructions.inclusive", "value": total})
    return records


CACHE_EVENTS = ("Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw")


def cache_records(profile: Profile) -> list[dict[str, object]]:
    """``cache.*`` records per function of a cachegrind profile (see the module docstring).

    Raises
    ------
    ProfileError
        When the profile lacks the data-cache events (cache simulation was off).
    """
    missing = [e for e in CACHE_EVENTS if e not in profile.events]
    if missing:
        missing_events = ", ".join(missing)
        raise ProfileError(f"the profile has no {missing_events} events (cache simulation off?)")
    index = {e: profile.events.index(e) for e in CACHE_EVENTS}
    names = kernel_names(profile.exclusive)
    records: list[dict[str, object]] = []
    for kernel, costs in sorted(_by_kernel(profile.exclusive, names).items()):
        reads, writes = costs[index["Dr"]], costs[index["Dw"]]
        if reads + writes == 0:
            continue
        d1 = costs[index["D1mr"]] + costs[index["D1mw"]]
        ll = costs[index["DLmr"]] + costs[index["DLmw"]]
        values: dict[str, float] = {
            "cache.reads": reads,
            "cache.writes": writes,
            "cache.d1_misses": d1,
            "cache.ll_misses": ll,
            "cache.d1_hit_rate": 1.0 - d1 / (reads + writes),
        }
        if d1 > 0:
            values["cache.ll_hit_rate"] = 1.0 - ll / d1
        records.extend({"kernel": kernel, "metric": m, "value": v} for m, v in values.items())
    return records


def profile_records(
    mode: str, profile_dir: Path, program: str | None = None
) -> list[dict[str, object]]:
    """Parse every rank's profile of one run in ``profile_dir`` into records.

    The ``signature`` mode needs the ``program`` that ran (its disassembly classifies the
    instructions) and records the features of the busiest rank (:mod:`perfcast.measure.signature`).

    Raises
    ------
    ProfileError
        When no profile was written or one is malformed.
    """
    paths = sorted(profile_dir.glob(f"{PROFILE_PREFIX[mode]}.*"))
    if mode == "signature":
        from perfcast.measure.signature import signature_records

        if program is None:
            raise ProfileError("a signature needs the program that ran")
        if not paths:
            raise ProfileError("valgrind wrote no profile")
        try:
            return signature_records(program, paths)
        except InputError as error:
            raise ProfileError(str(error)) from None
    ranks = [parse_profile(path) for path in paths]
    profile = sum_profiles(ranks)
    if mode == "cache":
        return cache_records(profile)
    return instruction_records(profile) + rank_max_records(ranks)
