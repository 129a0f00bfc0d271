"""Reader of a campaign's results journal (``<name>.results.jsonl``, written by ``perfcast run``).

One JSON object per line. A ``session`` line opens every invocation of ``perfcast run`` (campaign,
seed, machine and software metadata); a ``run`` line follows every finished run (point,
repetition, metric mode, status, wall time, records). A torn last line (no newline at the end) is
reported and ignored; a malformed line anywhere else is an error. Reading the journal gives the
full experiment with the campaign's metadata, also for a campaign that is still running or was
killed. :mod:`perfcast.measure.journal` writes it.
"""

from __future__ import annotations

import itertools
import json
import string
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment, Metric, Parameter
from perfcast.core.jsonin import parse_json

NAME = "perfcast-campaign"
RUN_STATUSES = ("ok", "failed", "timeout")
_RUN_FIELDS = ("fingerprint", "point", "repetition", "mode", "status", "records")
#: A parameter value of a run: a number, or a category's name (a drawn campaign's word list).
Value = int | float | str


@dataclass(frozen=True, order=True)
class RunKey:
    """Identity of one run: parameter values, repetition number and metric mode."""

    point: tuple[Value, ...]
    repetition: int
    mode: str


class JournalWarning(UserWarning):
    """Something in a results journal was skipped (a torn last line)."""


@dataclass
class Journal:
    """What a results journal holds.

    Attributes
    ----------
    path : Path
    sessions : list of dict
        The ``session`` lines in file order; ``runs_recorded`` counts the run lines after each.
    runs : dict of RunKey to dict
        The latest ``run`` line of every run (a failed run retried later is replaced).
    complete_bytes : int
        Length of the file up to the end of its last complete line.
    """

    path: Path
    sessions: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[RunKey, dict[str, Any]] = field(default_factory=dict)
    complete_bytes: int = 0

    @property
    def parameter_names(self) -> list[str]:
        """Parameter names of the campaign, from the latest session."""
        if not self.sessions:
            return []
        return list(self.sessions[-1]["campaign"]["parameters"])


def run_key(line: dict[str, Any], names: list[str]) -> RunKey:
    """The :class:`RunKey` of a ``run`` line, with the point ordered as ``names``."""
    point = line["point"]
    return RunKey(tuple(point[n] for n in names), int(line["repetition"]), str(line["mode"]))


def read_journal(path: str | Path) -> Journal:
    """Read a results journal (an absent file is an empty journal).

    Raises
    ------
    InputError
        Naming the file and line of a malformed line that is not a torn last line.
    """
    path = Path(path)
    journal = Journal(path)
    if not path.exists():
        return journal
    data = path.read_bytes()
    offset = 0
    lines: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        end = offset + len(raw) + 1
        if end > len(data):  # the part after the last newline
            if raw.strip():
                warnings.warn(
                    f"{path}:{number}: ignoring an incomplete last line (a run interrupted "
                    "while its result was written)",
                    JournalWarning,
                    stacklevel=2,
                )
            break
        offset = end
        journal.complete_bytes = end
        if not raw.strip():
            continue
        try:
            line = parse_json(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InputError("corrupt results line (not JSON)", path, number) from None
        if not isinstance(line, dict) or line.get("type") not in ("session", "run"):
            raise InputError("corrupt results line (neither a session nor a run)", path, number)
        lines.append((number, line))
    for number, line in lines:
        if line["type"] == "session":
            if not isinstance(line.get("campaign"), dict) or "fingerprint" not in line:
                raise InputError("corrupt session line (no campaign)", path, number)
            journal.sessions.append(line)
            continue
        if not journal.sessions:
            raise InputError("run line before any session line", path, number)
        missing = [f for f in _RUN_FIELDS if f not in line]
        if missing:
            raise InputError(f"corrupt run line (missing {', '.join(missing)})", path, number)
        if line["status"] not in RUN_STATUSES:
            raise InputError(
                f"corrupt run line (status {line['status']!r}, not one of "
                f"{', '.join(RUN_STATUSES)})",
                path,
                number,
                value=line["status"],
            )
        try:
            key = run_key(line, journal.parameter_names)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(
                "run line whose point does not match the campaign's parameters", path, number
            ) from None
        journal.runs[key] = line
        journal.sessions[-1]["runs_recorded"] = journal.sessions[-1].get("runs_recorded", 0) + 1
    return journal


def failure_summary(line: dict[str, Any]) -> dict[str, Any]:
    """The fields of a failed ``run`` line that tell what failed and why."""
    keys = ("point", "repetition", "mode", "status", "reason", "stderr_tail")
    return {k: line.get(k) for k in keys}


def scope_test(campaign: dict[str, Any], names: list[str]) -> Callable[[RunKey], bool]:
    """Whether a run belongs to the campaign (its point, repetition and mode are planned):
    one of its drawn ``points``, or of the grid of its ``parameters``."""
    if campaign.get("points") is not None:
        points = {tuple(point) for point in campaign["points"]}
    else:
        points = set(itertools.product(*(campaign["parameters"][n] for n in names)))
    repetitions, modes = campaign["repetitions"], set(campaign["metrics"])
    return lambda key: key.point in points and key.repetition < repetitions and key.mode in modes


#: The parts of a campaign's data that decide which runs belong to it.
SCOPE_KEYS = ("parameters", "repetitions", "metrics", "fingerprint")


def campaign_scope(campaign: dict[str, Any]) -> dict[str, Any]:
    """The parts of a campaign's data (:data:`SCOPE_KEYS`) that decide which runs belong to it."""
    return {k: campaign.get(k) for k in SCOPE_KEYS}


def results_scope(journal: Journal) -> tuple[dict[str, Any], Callable[[RunKey], bool]]:
    """The session whose campaign the journal's results are of, and which runs belong to them.

    That campaign is the one of the latest session that is no advised round (an ordinary
    ``perfcast run``, or the campaign part of ``run --advise``). Its runs belong to the
    results, and so do the runs of every advised round (a session with ``extends``, written by
    ``run --advise`` for one point outside the grid) that extends a campaign of the same scope:
    the advised points measured for this campaign, in this invocation or an earlier one. The
    advised rounds of a campaign whose points, repetitions or metrics differ stay outside.
    """
    plain = [s for s in journal.sessions if "extends" not in s] or journal.sessions
    base = plain[-1]
    names = journal.parameter_names
    scope = campaign_scope(base["campaign"])
    tests = [scope_test(base["campaign"], names)]
    tests += [
        scope_test(s["campaign"], names)
        for s in journal.sessions
        if s is not base and s.get("extends") == scope
    ]
    return base, lambda key: any(test(key) for test in tests)


def _unit(metric: str) -> str:
    if metric == "time" or metric.startswith("time."):
        return "s"
    if metric.startswith("instructions"):
        return "instructions"
    if metric.endswith("_rate"):
        return "ratio"
    return ""


def load_results(results_path: str | Path) -> Experiment:
    """Read a campaign's results journal (``<name>.results.jsonl``) as an experiment.

    Every successful run of the latest session's campaign (its points, repetitions and metric
    modes) contributes its records (repetition numbers as run), and so does every run of the
    advised rounds ``run --advise`` took for that campaign (:func:`results_scope`); runs
    outside them, from a wider earlier version of the campaign, stay in the journal and are
    counted in ``metadata["runs"]["outside_campaign"]``. Failed runs are listed in
    ``metadata["failures"]``; ``metadata`` also holds the campaign, the machine and software
    facts of the latest session that measured, and run counts. Works on the journal of a campaign
    that is still running or was killed. Parameters used in the launcher get the role
    ``processes``. A category parameter (words, in a drawn campaign) is no coordinate: it goes
    into the kernel's name instead (``app[algo=tree]``).

    Raises
    ------
    InputError
        When the file is corrupt, holds no session, or no successful run.
    """
    path = Path(results_path)
    journal = read_journal(path)
    if not journal.sessions:
        raise InputError("no campaign session in this results file", path)
    session, in_scope = results_scope(journal)
    names = journal.parameter_names
    categories = _categorical(session["campaign"], names)
    in_launcher = _launcher_fields(session["campaign"].get("launcher", []))
    rows: list[dict[str, Any]] = []
    failures = []
    outside = 0
    for key, line in journal.runs.items():
        if not in_scope(key):
            outside += 1
            continue
        if line["status"] != "ok":
            failures.append(failure_summary(line))
            continue
        for record in line["records"]:
            row = {"kernel": _kernel(record["kernel"], line["point"], categories)}
            row["metric"] = record["metric"]
            row.update({n: line["point"][n] for n in names if n not in categories})
            row["repetition"] = line["repetition"]
            row["value"] = record["value"]
            rows.append(row)
    if not rows:
        raise InputError("no successful run recorded in this results file", path)
    names = [n for n in names if n not in categories]
    parameters = [Parameter(n, "processes" if n in in_launcher else None) for n in names]
    import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

    frame = pd.DataFrame(rows, columns=["kernel", "metric", *names, "repetition", "value"])
    metrics = {m: Metric(m, _unit(m)) for m in pd.unique(frame["metric"])}
    statuses = [line["status"] for key, line in journal.runs.items() if in_scope(key)]
    counts = {status: statuses.count(status) for status in ("ok", "failed", "timeout")}
    counts["outside_campaign"] = outside
    measuring = [s for s in journal.sessions if s.get("runs_recorded")] or journal.sessions
    metadata = {
        "campaign": session["campaign"],
        "program_kernel": session.get("program_kernel"),
        "machine": measuring[-1].get("metadata", {}),
        "sessions": [
            {"seed": s.get("seed"), "date": s.get("metadata", {}).get("date")}
            for s in journal.sessions
        ],
        "runs": counts,
        "failures": failures,
    }
    return Experiment.from_frame(frame, parameters, metrics, metadata, source=str(path))


def _categorical(campaign: dict[str, Any], names: list[str]) -> list[str]:
    """The parameters whose values are words (categories of a drawn campaign)."""
    values = campaign["parameters"]
    return [n for n in names if any(isinstance(v, str) for v in values.get(n, []))]


def _kernel(kernel: str, point: dict[str, Any], categories: list[str]) -> str:
    """The kernel's name in the experiment: with the run's categories, ``app[algo=tree]``, as
    a category is no coordinate of a scaling model but another code path."""
    if not categories:
        return kernel
    return f"{kernel}[{','.join(f'{n}={point[n]}' for n in categories)}]"


def sniff(path: Path, head: str) -> bool:
    """True when the first line is a campaign ``session`` object."""
    first = head.split("\n", 1)[0]
    try:
        line = parse_json(first)
    except json.JSONDecodeError:
        return False
    return isinstance(line, dict) and line.get("type") == "session" and "fingerprint" in line


def read(path: Path) -> Experiment:
    """The experiment of every successful run in the journal (see :func:`load_results`)."""
    return load_results(path)


def _launcher_fields(words: list[str]) -> set[str]:
    """Names of the ``{fields}`` in the launcher's template words."""
    return {name for word in words for _, name, _, _ in string.Formatter().parse(word) if name}
