"""A real one-node Slurm cluster for tests: munged, slurmctld and slurmd started in a directory.

Debian's ``slurm-wlm`` and ``munge`` packages (``scripts/setup`` installs them). Everything the
daemons write (key, sockets, state, spool, logs) stays in the directory; they listen on free
loopback ports and are started in the foreground by this process, so :meth:`SlurmCluster.stop`
ends exactly them. Slurm's client commands find the cluster through ``SLURM_CONF``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "srun")


def missing_programs() -> list[str]:
    """The programs of :data:`DAEMONS` not installed (``/usr/sbin`` included)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return [name for name in DAEMONS if shutil.which(name, path=path) is None]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SlurmCluster:
    """One node (this machine, all its cores) in one partition ``debug``.

    Parameters
    ----------
    directory : Path
        Empty directory for the daemons' files.
    """

    def __init__(self, directory: Path):
        self.directory = directory
        self.conf = directory / "slurm.conf"
        self.processes: list[subprocess.Popen] = []
        self.node = socket.gethostname().split(".")[0]

    @property
    def environment(self) -> dict[str, str]:
        """Variables that point Slurm's commands at this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def start(self) -> None:
        d = self.directory
        for sub in ("state", "spool"):
            (d / sub).mkdir()
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.conf.write_text(self._configuration())
        sbin = "/usr/sbin/"
        self._spawn(
            [
                sbin + "munged", "--foreground", "--force", f"--key-file={key}",
                f"--socket={d / 'munge.socket'}", f"--pid-file={d / 'munged.pid'}",
                f"--log-file={d / 'munged.log'}", f"--seed-file={d / 'munged.seed'}",
            ],
            "munged.out",
        )  # fmt: skip
        self._wait(lambda: (d / "munge.socket").exists(), "munged")
        env = {**os.environ, **self.environment}
        self._spawn([sbin + "slurmctld", "-D", "-i", "-f", str(self.conf)], "slurmctld.out", env)
        self._wait(lambda: self._sinfo(env) is not None, "slurmctld")
        self._spawn([sbin + "slurmd", "-D", "-f", str(self.conf)], "slurmd.out", env)
        self._wait(lambda: (self._sinfo(env) or "").strip() in ("idle", "mixed"), "slurmd")

    def stop(self) -> None:
        """Cancel the cluster's jobs and end the daemons this object started."""
        env = {**os.environ, **self.environment}
        subprocess.run(["scancel", "--full", "--user", str(os.getuid())], env=env, check=False,
                       capture_output=True, timeout=30)  # fmt: skip
        for process in reversed(self.processes):
            process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()

    def log(self) -> str:
        """The daemons' logs, for a failing test's message."""
        parts = []
        for name in ("slurmctld.log", "slurmd.log", "munged.log"):
            path = self.directory / name
            if path.exists():
                parts.append(f"== {name}\n" + path.read_text(errors="replace")[-3000:])
        return "\n".join(parts)

    def _configuration(self) -> str:
        d = self.directory
        cpus = os.cpu_count() or 1
        return "\n".join(
            [
                "ClusterName=perfcast-test",
                f"SlurmctldHost={self.node}(127.0.0.1)",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={d / 'munge.socket'}",
                f"StateSaveLocation={d / 'state'}",
                f"SlurmdSpoolDir={d / 'spool'}",
                f"SlurmctldPidFile={d / 'slurmctld.pid'}",
                f"SlurmdPidFile={d / 'slurmd.pid'}",
                f"SlurmctldLogFile={d / 'slurmctld.log'}",
                f"SlurmdLogFile={d / 'slurmd.log'}",
                "ProctrackType=proctrack/pgid",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "MpiDefault=none",
                "ReturnToService=2",
                "SchedulerType=sched/builtin",
                "JobCompType=jobcomp/none",
                "AccountingStorageType=accounting_storage/none",
                "MinJobAge=3600",
                "KillWait=2",
                "OverTimeLimit=0",
                "InactiveLimit=0",
                f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
                f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )

    def _spawn(self, argv: list[str], output: str, env: dict[str, str] | None = None) -> None:
        with (self.directory / output).open("wb") as sink:
            self.processes.append(
                subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
            )

    def _sinfo(self, env: dict[str, str]) -> str | None:
        done = subprocess.run(
            ["sinfo", "--noheader", "--format=%T"], env=env, capture_output=True, text=True,
            timeout=30, check=False,
        )  # fmt: skip
        return done.stdout if done.returncode == 0 else None

    def _wait(self, ready, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.processes):
                break
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{what} did not come up\n{self.log()}")


def running_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A started cluster with its client environment set, stopped when the caller is done
    (the body of a module-scoped fixture: ``yield from running_cluster(tmp_path_factory)``)."""
    slurm = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    slurm.start()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in slurm.environment.items():
            patch.setenv(name, value)
        try:
            yield slurm
        finally:
            slurm.stop()
