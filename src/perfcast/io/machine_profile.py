"""Machine profiles (``perfcast-machine`` JSON, version 1): what a machine does how fast.

Layout (``perfcast probe`` writes it; a user may write one by hand, e.g. for a future system by
scaling the figures of one that can be probed)::

    {"format": "perfcast-machine", "version": 1, "name": "my-laptop",
     "cache": {"D1": {"size": 32768, "associativity": 8, "line": 64},
               "LL": {"size": 8388608, "associativity": 16, "line": 64}},
     "memory": {"load":  {"l1": 120.0, "ll": 40.0, "memory": 10.0},
                "store": {"l1": 60.0,  "ll": 30.0, "memory": 8.0}},
     "fp": {"add.f64.scalar": 4.0, "mul.f64.vector": 8.0, ...},
     "stream": {"load": {"ll": 30.0, "memory": 9.0}, "store": {"ll": 20.0, "memory": 6.0}},
     "core": {"instructions": 12.0, "misprediction_penalty": 5.0},
     "overlap": 1.0,
     "surface": [{"pattern": "stride1", "access": "load", "working_set": 4096,
                  "bandwidth": 118.2, "spread": 0.03, "l1_hit_rate": 1.0,
                  "ll_cumulative_hit_rate": 1.0}, ...]}

``memory`` holds the effective bandwidth in GB/s (1e9 bytes per second) of data served by the
first-level cache (``l1``), the last-level cache (``ll``) and main memory (``memory``), for
loads and stores; ``fp`` the rate in Gop/s (1e9 operations per second, one per vector lane) of
each floating-point kind ``<op>.<precision>.<shape>`` a signature counts (see
:mod:`perfcast.static.signature`). ``cache`` (for the cache simulation of signatures) and
``surface`` (the probe's raw measurements: the bandwidth over working-set size, access
pattern and operation, with the spread of the repetitions and the hit rates of each point)
are optional for the convolution, and so are (each refines the convolution when present):

``stream``
    GB/s of stride-1 streams of 8-byte accesses whose working set lies in the last-level cache
    (``ll``) or beyond it (``memory``), all bytes counted: what sequential access reaches with
    the hardware prefetchers, against the line-by-line (stride-8) figures of ``memory``.
``core``
    ``instructions``: Gop/s of independent integer instructions (the issue ceiling);
    ``misprediction_penalty``: nanoseconds a mispredicted branch costs.
``overlap``
    How much of the shorter of floating-point, memory and instruction time hides under the
    longest, from 0 (none: they add up) to 1 (all: the longest alone counts; the default).

Inside ``memory``, ``stream``, ``core`` and a ``cache`` level every field must be one of those
above (a misspelt one is refused, naming it, rather than ignored); other top-level fields are
kept as they are, for the user's notes.

Surface points written by earlier versions carry ``ll_hit_rate`` (the share of first-level
misses the last level serves) instead of the cumulative ``ll_cumulative_hit_rate``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError
from perfcast.core.jsonin import parse_json
from perfcast.core.jsonout import dumps

FORMAT = "perfcast-machine"
VERSION = 1
ACCESSES = ("load", "store")
LEVELS = ("l1", "ll", "memory")
CACHE_LEVELS = ("D1", "LL")
CACHE_FIELDS = ("size", "associativity", "line")
#: Line sizes a profile may give, in bytes: at least one 8-byte access (the probes' and the
#: convolution's unit), at most far beyond any cache built (a line of 2**62 bytes made the
#: convolution's streaming cost divide by zero).
LINE_RANGE = (8, 65536)
STREAM_LEVELS = ("ll", "memory")
CORE_FIELDS = ("instructions", "misprediction_penalty")
DEFAULT_OVERLAP = 1.0
#: valgrind reads cache sizes into a C int.
_VALGRIND_LARGEST = 2**31


@dataclass
class MachineProfile:
    """A machine's memory bandwidths per cache level, floating-point rates and caches.

    Attributes
    ----------
    name : str
        What machine this describes.
    memory : dict of str to dict of str to float
        GB/s per access (``load``, ``store``) and level (``l1``, ``ll``, ``memory``).
    fp : dict of str to float
        Gop/s per floating-point kind (``add.f64.scalar``, ...).
    cache : dict of str to dict of str to int
        Geometry of ``D1`` and ``LL`` (``size``, ``associativity``, ``line`` in bytes); may be
        empty.
    surface : list of dict
        The probe's measurements (free-form points; may be empty).
    stream : dict of str to dict of str to float
        GB/s of stride-1 streams per access and level (``ll``, ``memory``); may be empty.
    core : dict of str to float
        ``instructions`` (Gop/s) and ``misprediction_penalty`` (ns); may be empty.
    overlap : float
        Share of the shorter times hidden under the longest (0 to 1).
    source : str or None
        The file it was read from, for messages.
    extra : dict
        Other top-level keys, kept on a round trip.
    """

    name: str
    memory: dict[str, dict[str, float]]
    fp: dict[str, float]
    cache: dict[str, dict[str, int]] = field(default_factory=dict)
    surface: list[dict[str, Any]] = field(default_factory=list)
    source: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    stream: dict[str, dict[str, float]] = field(default_factory=dict)
    core: dict[str, float] = field(default_factory=dict)
    overlap: float = DEFAULT_OVERLAP

    def fp_rate(self, kind: str) -> float:
        """Operations per second of a floating-point kind.

        Raises
        ------
        InputError
            When the profile has no rate for ``kind`` (naming the file and field).
        """
        if kind not in self.fp:
            raise InputError(
                f"field 'fp.{kind}': missing; the signature counts {kind} operations",
                self.source,
                reason="machine-field-missing",
                value=f"fp.{kind}",
            )
        return self.fp[kind] * 1e9

    def bandwidth(self, access: str, level: str) -> float:
        """Bytes per second of ``access`` (``load``/``store``) served by ``level``."""
        return self.memory[access][level] * 1e9

    def stream_bandwidth(self, access: str, level: str) -> float | None:
        """Bytes per second of a stride-1 stream of ``access`` in ``level`` (``ll`` or
        ``memory``), or None when the profile has no ``stream`` figures."""
        figures = self.stream.get(access)
        return figures[level] * 1e9 if figures else None

    def cache_geometry(self) -> dict[str, str]:
        """``size,associativity,line`` per level ``D1`` and ``LL`` for the cache simulation
        (empty when the profile gives no caches).

        Valgrind simulates caches whose number of sets is a power of two: a cache with another
        number (a 480 MiB, 16-way last level has 491,520 sets) is simulated with the largest
        power of two of sets below it, at the same associativity and line size.

        Raises
        ------
        InputError
            When valgrind cannot simulate a level: a line size that is not a power of two, or
            a cache of 2 GiB or more (naming the file and field).
        """
        geometry = {}
        for level in CACHE_LEVELS:
            if level not in self.cache:
                continue
            size, ways, line = (self.cache[level][key] for key in CACHE_FIELDS)
            if line & (line - 1):
                raise _fail(
                    str(self.source), f"cache.{level}.line", "valgrind simulates lines of a "
                    f"power of two bytes, not {line}", line,
                )  # fmt: skip
            sets = max(1, size // (ways * line))
            sets = 1 << (sets.bit_length() - 1)
            if sets * ways * line >= _VALGRIND_LARGEST:
                raise _fail(
                    str(self.source), f"cache.{level}.size", "valgrind simulates caches below "
                    f"{_VALGRIND_LARGEST} bytes, not {size}", size,
                )  # fmt: skip
            geometry[level] = f"{sets * ways * line},{ways},{line}"
        return geometry

    def to_json(self) -> str:
        """The profile as ``perfcast-machine`` JSON text."""
        data = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "cache": self.cache,
            "memory": self.memory,
            "fp": self.fp,
            "surface": self.surface,
            **({"stream": self.stream} if self.stream else {}),
            **({"core": self.core} if self.core else {}),
            "overlap": self.overlap,
            **self.extra,
        }
        return dumps(data) + "\n"


def _fail(path: str, field_name: str, problem: str, value: Any = None) -> InputError:
    return InputError(
        f"field '{field_name}': {problem}", path, reason="bad-machine-profile", value=value
    )


def _positive(path: str, field_name: str, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise _fail(path, field_name, f"must be a number, not {json.dumps(raw)}", raw)
    if not math.isfinite(raw) or raw <= 0:
        raise _fail(path, field_name, f"must be a positive number, not {raw}", raw)
    return float(raw)


def _table(path: str, field_name: str, raw: Any) -> dict[str, Any]:
    if raw is None:
        raise _fail(path, field_name, "missing")
    if not isinstance(raw, dict):
        raise _fail(path, field_name, "must be an object", raw)
    return raw


def _known_fields(path: str, section: str, table: dict[str, Any], known: Sequence[str]) -> None:
    """Refuse a key of ``table`` outside ``known``: a misspelt field would otherwise be
    ignored and its default used silently."""
    for key in table:
        if key not in known:
            raise _fail(path, f"{section}.{key}", f"unknown field (known: {', '.join(known)})", key)


def parse_machine(data: Any, path: str) -> MachineProfile:
    """Validate decoded ``perfcast-machine`` JSON.

    Raises
    ------
    InputError
        Naming ``path`` and the field that is missing or wrong.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f'not a machine profile: no "format": "{FORMAT}"', path)
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= VERSION:
        raise _fail(path, "version", f"version {version!r} is not one this perfcast reads (1)")
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str):
        raise _fail(path, "name", "must be a text", name)
    memory = _bandwidths(path, "memory", data.get("memory"), LEVELS)
    fp_raw = _table(path, "fp", data.get("fp"))
    fp = {str(kind): _positive(path, f"fp.{kind}", rate) for kind, rate in fp_raw.items()}
    cache_raw = _table(path, "cache", data.get("cache", {}))
    cache: dict[str, dict[str, int]] = {}
    for level, geometry in cache_raw.items():
        table = _table(path, f"cache.{level}", geometry)
        _known_fields(path, f"cache.{level}", table, CACHE_FIELDS)
        cache[level] = {}
        for key in CACHE_FIELDS:
            raw = table.get(key)
            if not isinstance(raw, int) or isinstance(raw, bool) or raw <= 0:
                raise _fail(path, f"cache.{level}.{key}", "must be a positive integer", raw)
            cache[level][key] = raw
        if not LINE_RANGE[0] <= cache[level]["line"] <= LINE_RANGE[1]:
            raise _fail(
                path,
                f"cache.{level}.line",
                f"must be from {LINE_RANGE[0]} to {LINE_RANGE[1]} bytes",
                cache[level]["line"],
            )
    surface = data.get("surface", [])
    if not isinstance(surface, list):
        raise _fail(path, "surface", "must be a list", surface)
    stream: dict[str, dict[str, float]] = {}
    if "stream" in data:
        stream = _bandwidths(path, "stream", data["stream"], STREAM_LEVELS)
    core: dict[str, float] = {}
    if "core" in data:
        core_raw = _table(path, "core", data["core"])
        _known_fields(path, "core", core_raw, CORE_FIELDS)
        for key in CORE_FIELDS:
            if key not in core_raw:
                raise _fail(path, f"core.{key}", "missing")
            core[key] = _positive(path, f"core.{key}", core_raw[key])
    overlap = data.get("overlap", DEFAULT_OVERLAP)
    if isinstance(overlap, bool) or not isinstance(overlap, int | float) or not 0 <= overlap <= 1:
        raise _fail(path, "overlap", f"must be a number from 0 to 1, not {overlap!r}", overlap)
    known = {"format", "version", "name", "memory", "fp", "cache", "surface", "stream", "core",
             "overlap"}  # fmt: skip
    extra = {k: v for k, v in data.items() if k not in known}
    return MachineProfile(
        name, memory, fp, cache, surface, path, extra, stream, core, float(overlap)
    )


def read_machine(path: str | Path) -> MachineProfile:
    """Read a ``perfcast-machine`` JSON file.

    Raises
    ------
    InputError
        When the file is missing, not JSON (naming the line), or lacks a needed field.
    """
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read machine profile: {error.strerror}", where) from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte {error.start}): not a machine profile", where
        ) from None
    try:
        data = parse_json(text, parse_constant=lambda c: _reject_constant(c, where))
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg}", where, error.lineno) from None
    return parse_machine(data, where)


def _bandwidths(
    path: str, section: str, raw: Any, levels: Sequence[str]
) -> dict[str, dict[str, float]]:
    """The positive bandwidths of ``section`` (``memory``, ``stream``): per access kind, one per
    level in ``levels``; a missing or bad one is an error naming its field."""
    table = _table(path, section, raw)
    _known_fields(path, section, table, ACCESSES)
    found: dict[str, dict[str, float]] = {}
    for access in ACCESSES:
        per_level = _table(path, f"{section}.{access}", table.get(access))
        _known_fields(path, f"{section}.{access}", per_level, levels)
        found[access] = {}
        for level in levels:
            where = f"{section}.{access}.{level}"
            if level not in per_level:
                raise _fail(path, where, "missing")
            found[access][level] = _positive(path, where, per_level[level])
    return found


def _reject_constant(constant: str, path: str) -> float:
    raise InputError(f"{constant} is not a number a machine profile may hold", path)


def write_machine(profile: MachineProfile, path: str | Path) -> None:
    """Write a profile as ``perfcast-machine`` JSON.

    Raises
    ------
    InputError
        When the file cannot be written.
    """
    try:
        Path(path).write_text(profile.to_json(), encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", str(path)) from None
