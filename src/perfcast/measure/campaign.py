"""Running a campaign: every point x repetition x metric mode, journaled, resumable.

:func:`run_campaign` takes a validated :class:`~perfcast.measure.spec.Campaign`, skips the runs
its results journal already holds, runs the rest in interleaved randomized order and returns the
experiment; :func:`perfcast.io.campaign_results.load_results` turns the journal into an
experiment at any time (also after a crash).

The whole program's wall time is recorded as metric ``time`` of the kernel named after the
program file (``./jacobi`` -> ``jacobi``); the program's own records (``PERFCAST_OUTPUT``) are
added as they are. Both come from the ``time`` mode only; the valgrind modes record their
per-function counts (see :mod:`perfcast.measure.valgrind`). A campaign collecting ``features``
also keeps, per ``time`` run, the records its instrumented program wrote
(``$PERFCAST_FEATURES_FILE``), and writes the run table of them beside the experiment
(:func:`perfcast.io.campaign_runs.campaign_run_table`).
"""

from __future__ import annotations

import datetime
import json
import os
import random
import signal
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from perfcast.core.errors import InputError, WorkError
from perfcast.core.experiment import Experiment
from perfcast.core.jsonin import parse_json
from perfcast.core.progress import ProgressBar
from perfcast.io import output_format_for, write_experiment
from perfcast.io.campaign_results import (
    Journal,
    RunKey,
    campaign_scope,
    failure_summary,
    load_results,
    read_journal,
    run_key,
)
from perfcast.io.campaign_runs import campaign_run_table
from perfcast.io.run_table import write_run_table
from perfcast.measure.journal import JournalWriter
from perfcast.measure.metadata import collect_metadata
from perfcast.measure.process import ProcessOutcome, run_process
from perfcast.measure.records import OUTPUT_VARIABLE, RecordError, read_records
from perfcast.measure.schedule import plan_runs
from perfcast.measure.slurm import SlurmExecutor
from perfcast.measure.spec import Campaign, resolve_program
from perfcast.measure.valgrind import VALGRIND_MODES, ProfileError, profile_records, valgrind_prefix

ROOT_MPI_VARIABLES = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
#: Where a program built from ``perfcast features`` output appends its feature records.
FEATURES_VARIABLE = "PERFCAST_FEATURES_FILE"


@dataclass
class CampaignResult:
    """What :func:`run_campaign` did.

    Attributes
    ----------
    experiment : Experiment
        Every successful run recorded so far (this session and earlier ones).
    executed : int
        Runs started in this session.
    skipped : int
        Runs found already recorded and not repeated.
    failures : list of dict
        Every run whose latest attempt failed: point, repetition, mode, status, reason,
        stderr tail.
    output : Path
        Where the experiment table was written.
    run_table : Path or None
        Where the run table was written (a campaign collecting ``features``).
    """

    experiment: Experiment
    executed: int
    skipped: int
    failures: list[dict[str, Any]] = field(default_factory=list)
    output: Path | None = None
    run_table: Path | None = None


def _environment(campaign: Campaign, extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(OUTPUT_VARIABLE, None)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        for name, value in ROOT_MPI_VARIABLES.items():
            env.setdefault(name, value)
    env.update(extra)
    return env


def _failure_reason(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def execute_run(campaign: Campaign, key: RunKey) -> dict[str, Any]:
    """Run one point/repetition/mode and return its journal line (``type: run``).

    A non-zero exit, a timeout, malformed program records or a missing valgrind profile give
    status ``failed`` or ``timeout`` with a ``reason``; nothing raises for a failing program.
    """
    launcher, command, extra = campaign.render(key.point)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    with tempfile.TemporaryDirectory(prefix="perfcast-") as scratch:
        scratch_dir = Path(scratch)
        env = _environment(campaign, extra)
        if key.mode in VALGRIND_MODES:
            argv = [*launcher, *valgrind_prefix(key.mode, scratch_dir, campaign.cache), *command]
        else:
            env[OUTPUT_VARIABLE] = str(scratch_dir / "records.jsonl")
            argv = [*launcher, *command]
        if key.mode == "time" and campaign.collect_features:
            env[FEATURES_VARIABLE] = str(scratch_dir / "features.jsonl")
        status: str
        reason: str | None
        records: list[dict]
        try:
            outcome = run_process(argv, campaign.workdir, env, campaign.timeout)
        except OSError as error:  # e.g. the program vanished or is not a valid executable
            outcome = ProcessOutcome(None, 0.0, False, "")
            status, reason, records = "failed", f"cannot start {argv[0]}: {error.strerror}", []
        else:
            program = None
            if key.mode == "signature":  # its disassembly classifies the profiled instructions
                program = resolve_program(command[0], campaign.workdir, env.get("PATH"))
            status, reason, records = _judge(campaign, key.mode, outcome, scratch_dir, program)
        features: list[dict[str, Any]] | None = None
        if status == "ok" and key.mode == "time" and campaign.collect_features:
            try:
                features = _feature_records(scratch_dir / "features.jsonl")
            except RecordError as error:
                status, reason, records = "failed", f"feature records: {error}", []
    line = {
        "type": "run",
        "fingerprint": campaign.fingerprint,
        "point": campaign.values_of(key.point),
        "repetition": key.repetition,
        "mode": key.mode,
        "status": status,
        "reason": reason,
        "wall_time": outcome.wall_time,
        "exit_status": outcome.returncode,
        "stderr_tail": outcome.stderr_tail if status != "ok" else None,
        "started": started,
        "command": argv,
        "records": records,
    }
    if features is not None:
        line["features"] = features
    return line


def _feature_records(path: Path) -> list[dict[str, Any]]:
    """The records an instrumented program wrote in one run: JSON objects with a ``phase``,
    exactly one of them ``exit``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(
            "the program wrote none; build it from the sources perfcast features wrote"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise RecordError(f"cannot read them: {error}") from None
    records = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = parse_json(raw)
        except json.JSONDecodeError as error:
            raise RecordError(f"line {number} is not JSON ({error.msg})") from None
        if not isinstance(record, dict) or record.get("phase") not in ("exit", "features_end"):
            raise RecordError(f"line {number} is no record with phase exit or features_end")
        try:  # the journal keeps the records and is strict JSON
            json.dumps(record, allow_nan=False)
        except ValueError:
            raise RecordError(
                f"line {number} holds a number that is not finite (NaN, Infinity or beyond a "
                "double)"
            ) from None
        records.append(record)
    ends = sum(record["phase"] == "exit" for record in records)
    if ends != 1:
        raise RecordError(
            f"{ends} exit records in one run (one expected: a program run once, or under MPI)"
        )
    return records


def _judge(
    campaign: Campaign,
    mode: str,
    outcome: ProcessOutcome,
    scratch_dir: Path,
    program: str | None = None,
) -> tuple[str, str | None, list[dict]]:
    """Status, failure reason and records of a finished process."""
    if outcome.timed_out or outcome.returncode is None:  # no exit status only after a timeout
        return "timeout", f"killed after the timeout of {campaign.timeout:g} s", []
    if outcome.returncode != 0:
        return "failed", _failure_reason(outcome.returncode), []
    try:
        if mode in VALGRIND_MODES:
            return "ok", None, profile_records(mode, scratch_dir, program)
        return "ok", None, _time_records(campaign, outcome.wall_time, scratch_dir)
    except (RecordError, ProfileError) as error:
        label = "program records" if mode == "time" else "valgrind profile"
        return "failed", f"{label}: {error}", []


def _time_records(campaign: Campaign, wall_time: float, scratch_dir: Path) -> list[dict]:
    records = read_records(scratch_dir / "records.jsonl")
    kernel = campaign.program_kernel
    if any(r["kernel"] == kernel and r["metric"] == "time" for r in records):
        raise RecordError(
            f"the program reports kernel '{kernel}' metric 'time', which is the name of the "
            "whole-program wall time; rename that region"
        )
    return [{"kernel": kernel, "metric": "time", "value": wall_time}, *records]


def _label(campaign: Campaign, key: RunKey) -> str:
    point = " ".join(f"{k}={v}" for k, v in campaign.values_of(key.point).items())
    mode = "" if campaign.metrics == ("time",) else f" [{key.mode}]"
    return f"{point} rep {key.repetition}{mode}"


def _check_compatible(campaign: Campaign, sessions: list[dict[str, Any]], path: Path) -> None:
    for session in sessions:
        if session["fingerprint"] != campaign.fingerprint:
            raise InputError(
                "these results were measured with another command, launcher, environment, "
                "parameter set or metric list; delete the file or choose another output to "
                "start afresh",
                path,
            )


def _pending(
    campaign: Campaign, journal: Journal, retry_failed: bool, seed: int
) -> tuple[list[RunKey], list[RunKey]]:
    """The whole run order and the runs of it the journal does not hold yet."""
    _check_compatible(campaign, journal.sessions, journal.path)
    names = list(campaign.parameter_names)
    done = {
        run_key(line, names)
        for line in journal.runs.values()
        if line["status"] == "ok" or not retry_failed
    }
    plan = plan_runs(campaign.points(), campaign.repetitions, campaign.metrics, seed)
    return plan, [key for key in plan if key not in done]


def pending_runs(campaign: Campaign, retry_failed: bool = False) -> list[dict[str, Any]]:
    """The runs :func:`run_campaign` would take now, in order, without taking any.

    Returns
    -------
    list of dict
        Per run: ``point``, ``repetition``, ``mode`` and the ``command`` words (the valgrind
        profile location shown as ``PROFILE_DIR``).

    Raises
    ------
    InputError
        When the journal holds results of a different campaign or is corrupt.
    """
    seed = campaign.seed if campaign.seed is not None else 0
    _, todo = _pending(campaign, read_journal(campaign.results_path), retry_failed, seed)
    runs = []
    for key in todo:
        launcher, command, _ = campaign.render(key.point)
        tool = []
        if key.mode in VALGRIND_MODES:
            tool = valgrind_prefix(key.mode, Path("PROFILE_DIR"), campaign.cache)
        runs.append(
            {
                "point": campaign.values_of(key.point),
                "repetition": key.repetition,
                "mode": key.mode,
                "command": [*launcher, *tool, *command],
            }
        )
    return runs


def run_campaign(
    campaign: Campaign,
    retry_failed: bool = False,
    progress: TextIO | None = None,
    extends: Campaign | None = None,
) -> CampaignResult:
    """Run every missing run of a campaign, journal it, and write the experiment table.

    Parameters
    ----------
    campaign : Campaign
        A validated campaign.
    retry_failed : bool
        Also repeat runs whose recorded attempt failed or timed out (by default every recorded
        run, failed or not, is kept).
    progress : text stream, optional
        Where the progress bar goes (standard error by default; drawn only on a terminal).
    extends : Campaign, optional
        For an advised round of ``run --advise``: the campaign whose results ``campaign`` (its
        advised point) adds to. Its session says so, and reading the journal then gives the
        runs of both (:func:`perfcast.io.campaign_results.results_scope`).

    Returns
    -------
    CampaignResult

    Raises
    ------
    InputError
        When the journal holds results of a different campaign or is corrupt.
    WorkError
        When no run of the campaign has succeeded.
    """
    seed = campaign.seed if campaign.seed is not None else random.SystemRandom().randrange(2**31)
    results_path = campaign.results_path
    executed = 0
    with JournalWriter(results_path) as writer:
        journal = writer.journal
        plan, todo = _pending(campaign, journal, retry_failed, seed)
        latest = journal.sessions[-1]["campaign"] if journal.sessions else None
        extended = None if extends is None else campaign_scope(extends.to_dict())
        if (
            todo
            or _scope(latest) != _scope(campaign.to_dict())
            or (journal.sessions and journal.sessions[-1].get("extends") != extended)
        ):
            program = resolve_program(
                campaign.render(campaign.points()[0])[1][0],
                campaign.workdir,
                campaign.environment.get("PATH"),
            )
            session = {
                "type": "session",
                "fingerprint": campaign.fingerprint,
                "seed": seed,
                "campaign": campaign.to_dict(),
                "program_kernel": campaign.program_kernel,
                "metadata": collect_metadata(
                    Path(program).parent if program else campaign.workdir,
                    use_valgrind=any(m in VALGRIND_MODES for m in campaign.metrics),
                ),
            }
            if extended is not None:
                session["extends"] = extended
            writer.append(session)
        bar = ProgressBar(len(todo), progress)
        try:
            for line in _executed_runs(campaign, todo, bar):
                writer.append(line)
                executed += 1
                bar.advance(line["status"] == "ok")
        finally:
            bar.close()
    journal = read_journal(results_path)
    planned = set(plan)
    failures = [
        failure_summary(line)
        for key, line in journal.runs.items()
        if key in planned and line["status"] != "ok"
    ]
    if not any(line["status"] == "ok" for key, line in journal.runs.items() if key in planned):
        raise WorkError(
            f"every run of the campaign failed; first: {describe_failure(failures[0])}"
            if failures
            else "the campaign recorded no run"
        )
    experiment = load_results(results_path)
    write_output(experiment, campaign.output)
    run_table = None
    if campaign.collect_features:
        run_table = campaign.run_table_path
        write_run_table(campaign_run_table(results_path), run_table)
    return CampaignResult(
        experiment, executed, len(plan) - len(todo), failures, campaign.output, run_table
    )


def _executed_runs(
    campaign: Campaign, todo: Sequence[RunKey], bar: ProgressBar
) -> Iterator[dict[str, Any]]:
    """The journal line of every run of ``todo``: taken here one after another, or with the
    ``slurm`` executor as batch jobs, in the order they end."""
    if campaign.executor == "slurm":
        if todo:
            bar.start(f"{len(todo)} runs as Slurm jobs")
        yield from SlurmExecutor(campaign).run(todo)
        return
    for key in todo:
        bar.start(_label(campaign, key))
        yield execute_run(campaign, key)


def describe_failure(failure: dict[str, Any]) -> str:
    """One line about a failed run (point, repetition, mode, reason, last stderr line)."""
    point = " ".join(f"{k}={v}" for k, v in failure["point"].items())
    text = f"{point} rep {failure['repetition']} ({failure['mode']}): {failure['reason']}"
    if failure.get("stderr_tail"):
        text += f"; stderr ends: {failure['stderr_tail'].splitlines()[-1]}"
    return text


def _scope(campaign: dict[str, Any] | None) -> dict[str, Any] | None:
    """The parts of a campaign's data that decide which runs belong to it."""
    if campaign is None:
        return None
    return campaign_scope(campaign)


def write_output(experiment: Experiment, output: Path) -> None:
    """Write the experiment in the format :func:`perfcast.io.output_format_for` names.

    A ``.csv`` output is the bare long table, without the ``# perfcast`` description line the
    table writer adds, so that ``pandas.read_csv`` reads it without options (the campaign's
    metadata stays in the results journal). The experiment goes to a temporary file next to
    ``output`` that then replaces it in one step, so an interrupted write never leaves a
    truncated table; the temporary name ends like ``output`` so writers that look at the
    suffix (CSV or Parquet) write the same format.

    Raises
    ------
    InputError
        When no writer takes the file name or the file cannot be written.
    """
    output_format = output_format_for(output)
    partial = output.with_name(f".partial.{output.name}")
    try:
        if output.suffix.lower() == ".csv":
            experiment.to_frame().to_csv(partial, index=False)
        else:
            write_experiment(experiment, partial, output_format)
        os.replace(partial, output)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", output) from None
