"""Header search paths every analysis of C sources adds, so that HPC programs parse as they
build: the MPI installation's headers (``#include <mpi.h>``) and perfcast's own region headers
(``#include "perfcast.h"``, as ``perfcast instrument --cflags`` gives them to the compiler).

Only search paths are added: a program that includes neither is parsed exactly as before, and
flags the user gives come first, so their headers win.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
from pathlib import Path

#: perfcast's region headers (``perfcast.h`` and the online and Caliper variants); a path, not
#: an import, as the static analysis stays below the measurement layer.
REGION_HEADERS = Path(__file__).resolve().parents[1] / "measure" / "c"


@functools.cache
def mpi_include_flags() -> tuple[str, ...]:
    """The ``-I`` flags of the MPI compiler wrapper (Open MPI's ``mpicc -showme:compile``,
    MPICH's ``mpicc -show``); empty without one."""
    if shutil.which("mpicc") is None:
        return ()
    for query in (["mpicc", "-showme:compile"], ["mpicc", "-show"]):
        try:
            done = subprocess.run(query, capture_output=True, text=True, timeout=20, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return tuple(w for w in shlex.split(done.stdout) if w.startswith(("-I", "-isystem")))
    return ()


def source_include_flags() -> tuple[str, ...]:
    """MPI's and perfcast's header search paths, to follow the user's own flags."""
    return (*mpi_include_flags(), f"-I{REGION_HEADERS}")
