"""The run table of a campaign that collects features (``metrics = ["time", "features"]``).

Every successful ``time`` run of the campaign's journal becomes one row: the run's parameter
values (categories as words), ``repetition``, the features its instrumented program wrote
(``perfcast features``) with their ``cost:`` columns, and the targets ``time`` and ``cpu``
(the program's own wall and CPU seconds, the slowest rank's, from ``MPI_Init`` under MPI, as
``perfcast features --records`` gives them) and ``launch_time`` (the whole launch's wall seconds
as the campaign measured them, ``mpirun`` start-up included: the experiment's ``time``). A
feature named like a parameter or a target (``perfcast features --param n`` names one so) is
kept as ``feature:NAME``. This is the table ``perfcast learn`` reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError
from perfcast.core.numbers import parse_number
from perfcast.io.campaign_results import read_journal, scope_test
from perfcast.io.run_table import COST_PREFIX, RunTable, from_columns

#: Phases an instrumented program writes records at.
PHASES = ("exit", "features_end")
#: Keys of a feature record that are no features.
_RECORD_KEYS = ("phase", "elapsed", "cpu", "ranks_reduced")
#: The measured columns of a campaign's run table (the targets; never features).
MEASURED = ("time", "cpu", "launch_time")
#: Prefix of a feature column whose name is taken by a parameter.
FEATURE_PREFIX = "feature:"


def campaign_run_table(results_path: str | Path, phase: str = "exit") -> RunTable:
    """The run table of a campaign's results journal.

    Parameters
    ----------
    results_path : str or Path
        The journal (``<name>.results.jsonl``) of a campaign with ``features`` among its metrics.
    phase : str
        ``exit`` (the features of the whole run) or ``features_end`` (those written at
        ``#pragma perfcast features_end``, the early phase predicting the whole run).

    Raises
    ------
    InputError
        Naming the journal (and the line of the run) when the campaign collects no features,
        no run succeeded, a run lacks a record of ``phase``, or runs name other features
        than the first (records of another build).
    """
    path = Path(results_path)
    if phase not in PHASES:
        raise InputError(f"phase must be one of {', '.join(PHASES)}, not {phase!r}", path)
    journal = read_journal(path)
    if not journal.sessions or not journal.sessions[-1]["campaign"].get("features"):
        raise InputError(
            'this campaign collects no features (metrics = ["time", "features"])', path
        )
    campaign = journal.sessions[-1]["campaign"]
    names = journal.parameter_names
    in_scope = scope_test(campaign, names)
    rows: list[dict[str, Any]] = []
    features: list[str] | None = None
    for run, line in journal.runs.items():
        if not in_scope(run) or run.mode != "time" or line["status"] != "ok":
            continue
        where = f"run at {' '.join(f'{n}={v}' for n, v in line['point'].items())}"
        record = _record(line, phase, path, where)
        keys = [k for k in record if k not in _RECORD_KEYS]
        if features is None:
            features = keys
        elif keys != features:
            extra = sorted(set(keys) ^ set(features))
            raise InputError(
                f"{where}: other features than the first run's ({', '.join(extra[:3])}): "
                "records of another program or build",
                path,
                reason="bad-run-table",
            )
        row = {n: line["point"][n] for n in names}
        row["repetition"] = line["repetition"]
        # kept apart: a feature may be named like a parameter, ``repetition`` or a target
        row["features"] = {
            k: parse_number(record[k], f"{where}: feature {k!r}", path, None) for k in keys
        }
        row["time"] = parse_number(record.get("elapsed"), f"{where}: elapsed", path, None)
        if row["time"] < 0:
            raise InputError(
                f"{where}: elapsed is {row['time']:g}, not a number of seconds >= 0",
                path,
                reason="bad-run-table",
            )
        row["launch_time"] = line["wall_time"]
        if "cpu" in record:
            row["cpu"] = parse_number(record["cpu"], f"{where}: cpu", path, None)
        rows.append(row)
    if not rows or features is None:
        raise InputError("no successful run with features in this results file", path)
    columns: dict[str, list[Any]] = {n: [row[n] for row in rows] for n in [*names, "repetition"]}
    taken = {*columns, *MEASURED}
    for key in features:
        column = FEATURE_PREFIX + key if key in taken else key
        feature = key[len(COST_PREFIX) :]
        if key.startswith(COST_PREFIX) and feature in taken:
            column = COST_PREFIX + FEATURE_PREFIX + feature
        if column in columns:
            raise InputError(
                f"the feature {key!r} and another one would both be column {column!r}",
                path,
                reason="bad-run-table",
                value=key,
            )
        columns[column] = [row["features"][key] for row in rows]
    columns["time"] = [row["time"] for row in rows]
    columns["launch_time"] = [row["launch_time"] for row in rows]
    if all("cpu" in row for row in rows):
        columns["cpu"] = [row["cpu"] for row in rows]
    return from_columns(columns, str(path))


def _record(line: dict[str, Any], phase: str, path: Path, where: str) -> dict[str, Any]:
    """The run's last feature record of ``phase``."""
    records = [r for r in line.get("features") or [] if r.get("phase") == phase]
    if not records:
        raise InputError(
            f"{where}: no feature record of phase {phase!r}", path, reason="bad-run-table"
        )
    return records[-1]
