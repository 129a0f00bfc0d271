"""The Slurm executor: every run of a campaign one batch job, results collected into the journal.

A campaign with ``executor = "slurm"`` (see :class:`~perfcast.measure.spec.SlurmOptions`)
submits one ``sbatch`` job per run (point x repetition x metric mode). The job runs
:mod:`perfcast.measure.slurm_job` on a compute node, which takes the run exactly as the local
executor does (:func:`perfcast.measure.campaign.execute_run`, the campaign's ``launcher``, e.g.
``srun --mpi=pmix -n {p}``, starting the program inside the job's allocation) and leaves the
run's journal line in a result file. Only the submitting process writes the results journal: it
watches the queue and appends each job's line, fsync'ed, as the job ends; a job that ends
without a result (failed, timed out, cancelled, its node lost) is recorded as a failed or
timed-out run with Slurm's state and the end of the job's output.

Everything about the jobs lives in a directory next to the output (``<output stem>.slurm/``):
the campaign, and per run its description, job script, job number, output and result. A
submitting process that dies leaves the jobs running; run the campaign again and it submits
nothing twice: it picks up the jobs it finds there, collecting what ended meanwhile and waiting
for the rest.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import pickle
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError, WorkError
from perfcast.io.campaign_results import RunKey
from perfcast.measure.spec import Campaign, campaign_line

#: Slurm job states of a job that may still produce its result.
ACTIVE_STATES = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
    }
)
#: End states that mean the run ran out of time.
TIMEOUT_STATES = frozenset({"TIMEOUT", "DEADLINE"})
#: Seconds a job's result may lag behind its end (a result written on a shared file system).
RESULT_GRACE = 10.0
#: Seconds one ``sbatch`` or ``squeue`` call may take.
COMMAND_TIMEOUT = 120.0
#: Characters of a failed job's output kept in the journal.
OUTPUT_TAIL = 2000


@dataclass(frozen=True)
class SubmittedJob:
    """A run's batch job.

    Attributes
    ----------
    key : RunKey
        The run.
    job_id : str
        Slurm's job number.
    stem : Path
        Its files without suffix: ``.job`` (the job number), ``.sh``, ``.out``, ``.result.json``.
    submitted : str
        When it was submitted (ISO 8601, UTC).
    command : list of str
        The ``sbatch`` command that submitted it.
    """

    key: RunKey
    job_id: str
    stem: Path
    submitted: str
    command: list[str]


class SlurmExecutor:
    """Runs a campaign's runs as Slurm batch jobs (see the module's description).

    Parameters
    ----------
    campaign : Campaign
        With ``executor = "slurm"``.
    """

    def __init__(self, campaign: Campaign):
        self.campaign = campaign
        output = campaign.output
        self.directory = output.with_name(f"{output.stem}.slurm")
        self.job_name = f"perfcast-{campaign.fingerprint}"

    def run(self, keys: Sequence[RunKey]) -> Iterator[dict[str, Any]]:
        """Submit a job for every run of ``keys`` (or find the one submitted before) and yield
        each run's journal line as its job ends, in the order they end.

        A yielded line's files are removed when the next line is asked for, i.e. once the
        caller has journaled it.

        Raises
        ------
        WorkError
            When ``sbatch`` or ``squeue`` is missing or refuses (jobs submitted before the
            refusal keep running and are picked up by the next run of the campaign).
        """
        try:
            self.directory.mkdir(exist_ok=True)
        except OSError as error:
            raise InputError(
                f"cannot keep the Slurm job files there: {error.strerror} "
                "(move it away or choose another output)",
                self.directory,
            ) from None
        write_atomically(self.directory / "campaign.pickle", pickle.dumps(self.campaign))
        jobs: dict[str, SubmittedJob] = {}
        earlier = [self._earlier_job(key) for key in keys]
        if not all(earlier):
            self._check_partition()
        for key, before in zip(keys, earlier, strict=True):
            job = before or self._submit(key)
            jobs[job.job_id] = job
        ended: dict[str, float] = {}  # job -> when it was first seen ended without a result
        while jobs:
            states = self._states()
            for job_id, job in list(jobs.items()):
                line = self._result(job)
                if line is None:
                    state = states.get(job_id)
                    if state in ACTIVE_STATES:
                        continue
                    first = ended.setdefault(job_id, time.monotonic())
                    if time.monotonic() - first < RESULT_GRACE and state is not None:
                        continue
                    line = self._result(job) or self._failure(job, state)
                del jobs[job_id]
                yield line
                self._forget(job)
            if jobs:
                time.sleep(self.campaign.slurm.poll)

    def _check_partition(self) -> None:
        """Refuse a ``partition`` the cluster does not have before any job is submitted, as a
        bad campaign setting (``sbatch`` would refuse the first job with a message that names
        no file). Without ``sinfo`` or its answer the check is left to ``sbatch``.

        Raises
        ------
        InputError
            Naming the campaign file, the line of ``partition`` and the cluster's partitions.
        """
        partition = self.campaign.slurm.partition
        if partition is None:
            return
        try:
            listed = _slurm_command(["sinfo", "--noheader", "--format=%R"], "list the partitions")
        except WorkError:
            return
        names = sorted({line.strip() for line in listed.splitlines() if line.strip()})
        if names and partition not in names:
            raise InputError(
                f"[slurm] partition '{partition}' is not a partition of this Slurm cluster "
                f"(it has {', '.join(names)})",
                self.campaign.source,
                campaign_line(self.campaign.source, "partition", "slurm"),
            )

    def _stem(self, key: RunKey) -> Path:
        """Where a run's files go, named by a hash of the run (stable across sessions)."""
        text = json.dumps([self.campaign.fingerprint, list(key.point), key.repetition, key.mode])
        return self.directory / f"run-{hashlib.sha256(text.encode()).hexdigest()[:16]}"

    def _earlier_job(self, key: RunKey) -> SubmittedJob | None:
        """The job an earlier session submitted for ``key``, if its record is there."""
        record = self._stem(key).with_suffix(".job")
        try:
            data = json.loads(record.read_text())
            return SubmittedJob(
                key, str(data["job_id"]), self._stem(key), data["submitted"], data["command"]
            )
        except (OSError, ValueError, KeyError, TypeError):  # unreadable: as if never submitted
            return None

    def _submit(self, key: RunKey) -> SubmittedJob:
        stem = self._stem(key)
        description = {
            "point": self.campaign.values_of(key.point),
            "repetition": key.repetition,
            "mode": key.mode,
        }
        run_file = stem.with_suffix(".run.json")
        write_atomically(run_file, json.dumps(description).encode())
        script = stem.with_suffix(".sh")
        entry = [
            sys.executable,
            "-m",
            "perfcast.measure.slurm_job",
            str(self.directory / "campaign.pickle"),
            str(run_file),
            str(stem.with_suffix(".result.json")),
        ]
        write_atomically(
            script,
            f"#!/bin/sh\nexec {shlex.join(entry)}\n".encode(),
        )
        command = ["sbatch", "--parsable", *self._options(key), str(script)]
        submitted = _now()
        result = _slurm_command(command, f"submit the run {_label(description)}")
        job_id = result.strip().split(";")[0]
        if not job_id.isdigit():
            raise WorkError(f"sbatch answered {result.strip()!r} instead of a job number")
        record = {"job_id": job_id, "submitted": submitted, "command": command}
        write_atomically(stem.with_suffix(".job"), json.dumps(record).encode())
        return SubmittedJob(key, job_id, stem, submitted, command)

    def _options(self, key: RunKey) -> list[str]:
        """The ``sbatch`` options of a run's job."""
        slurm = self.campaign.slurm
        nodes, tasks = self.campaign.slurm_shape(key.point)
        stem = self._stem(key)
        options = [
            f"--job-name={self.job_name}",
            f"--output={stem.with_suffix('.out')}",
            f"--chdir={self.campaign.workdir}",
            f"--nodes={nodes}",
        ]
        if tasks is not None:
            options.append(f"--ntasks-per-node={tasks}")
        limit = slurm.time_limit
        if limit is None and self.campaign.timeout is not None:
            limit = str(int(-(-self.campaign.timeout // 60)) + 1)  # minutes, rounded up, +1
        if limit is not None:
            options.append(f"--time={limit}")
        if slurm.partition is not None:
            options.append(f"--partition={slurm.partition}")
        if slurm.account is not None:
            options.append(f"--account={slurm.account}")
        return [*options, *slurm.options]

    def _states(self) -> dict[str, str]:
        """State of every job of this campaign Slurm still knows, by job number."""
        text = _slurm_command(
            ["squeue", "--noheader", "--states=all", f"--name={self.job_name}", "--format=%i|%T"],
            "watch the jobs",
        )
        states = {}
        for row in text.splitlines():
            job_id, _, state = row.strip().partition("|")
            if job_id:
                states[job_id] = state.strip()
        return states

    def _result(self, job: SubmittedJob) -> dict[str, Any] | None:
        """The journal line the job left, or None."""
        try:
            line: dict[str, Any] = json.loads(job.stem.with_suffix(".result.json").read_text())
        except (OSError, ValueError):  # not (yet) there, or not JSON text
            return None
        if not isinstance(line, dict):
            return None
        line["job_id"] = job.job_id
        return line

    def _failure(self, job: SubmittedJob, state: str | None) -> dict[str, Any]:
        """The journal line of a job that ended without a result."""
        if state is None:
            reason = f"Slurm job {job.job_id} ended without a result (Slurm no longer knows it)"
        else:
            reason = f"Slurm job {job.job_id} ended without a result: {state}"
        try:
            tail = job.stem.with_suffix(".out").read_text(errors="replace")[-OUTPUT_TAIL:]
        except OSError:
            tail = ""
        return {
            "type": "run",
            "fingerprint": self.campaign.fingerprint,
            "point": self.campaign.values_of(job.key.point),
            "repetition": job.key.repetition,
            "mode": job.key.mode,
            "status": "timeout" if state in TIMEOUT_STATES else "failed",
            "reason": reason,
            "wall_time": 0.0,
            "exit_status": None,
            "stderr_tail": tail or None,
            "started": job.submitted,
            "command": job.command,
            "records": [],
            "job_id": job.job_id,
        }

    def _forget(self, job: SubmittedJob) -> None:
        """Remove a journaled run's files (a later retry submits afresh)."""
        for suffix in (".job", ".run.json", ".sh", ".out", ".result.json"):
            job.stem.with_suffix(suffix).unlink(missing_ok=True)


def _slurm_command(command: list[str], purpose: str) -> str:
    """Run a Slurm client command and return its standard output.

    Raises
    ------
    WorkError
        When the command is missing, times out or fails (with the last line it printed).
    """
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise WorkError(
            f"cannot {purpose}: {command[0]} was not found on PATH (is Slurm installed here?)"
        ) from None
    except OSError as error:
        raise WorkError(f"cannot {purpose}: cannot start {command[0]}: {error.strerror}") from None
    except subprocess.TimeoutExpired:
        raise WorkError(
            f"cannot {purpose}: {command[0]} did not answer in {COMMAND_TIMEOUT:g} s"
        ) from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        last = said[-1] if said else f"exit status {done.returncode}"
        raise WorkError(f"cannot {purpose}: {command[0]} failed: {last}")
    return done.stdout


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed over it, fsync'ed)."""
    partial = path.with_name(f".partial.{path.name}")
    with partial.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def _label(description: dict[str, Any]) -> str:
    point = " ".join(f"{k}={v}" for k, v in description["point"].items())
    return f"{point} rep {description['repetition']} [{description['mode']}]"
