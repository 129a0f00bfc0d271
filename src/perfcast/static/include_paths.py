"""Header search paths every analysis of C sources adds, so that HPC programs parse as they
build: the MPI installation's headers (``#include <mpi.h>``) and perfcast's own region headers
(``#include "perfcast.h"``, as ``perfcast instrument --cflags`` gives them to the compiler),
and, searched last, the installed Clang's ``omp.h`` (``#include <omp.h>``): the libclang of
the Python package ships Clang's compiler headers without the OpenMP one, which comes with
Clang's OpenMP runtime (Debian's ``libomp-16-dev``). GCC's ``omp.h`` is no substitute: it uses
attributes Clang rejects.

Only search paths are added: a program that includes neither is parsed exactly as before, and
flags the user gives come first, so their headers win.
"""

from __future__ import annotations

import functools
import os
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


#: Clang executables asked for their resource folder, newest first after the unversioned one.
CLANG_EXECUTABLES = (
    "clang",
    "clang-19",
    "clang-18",
    "clang-17",
    "clang-16",
    "clang-15",
    "clang-14",
)


@functools.cache
def openmp_include_flags() -> tuple[str, ...]:
    """``-idirafter`` the compiler-header folder of the first installed Clang whose folder holds
    ``omp.h`` (``$PERFCAST_CLANG`` first): searched after every other folder, so only a missing
    ``omp.h`` is taken from it; empty when no Clang has one."""
    chosen = os.environ.get("PERFCAST_CLANG")
    for clang in (*((chosen,) if chosen else ()), *CLANG_EXECUTABLES):
        if shutil.which(clang) is None:
            continue
        try:
            done = subprocess.run(
                [clang, "-print-resource-dir"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        headers = Path(done.stdout.strip()) / "include"
        if done.returncode == 0 and (headers / "omp.h").is_file():
            return ("-idirafter", str(headers))
    return ()


def source_include_flags() -> tuple[str, ...]:
    """MPI's, perfcast's and OpenMP's header search paths, to follow the user's own flags."""
    return (*mpi_include_flags(), f"-I{REGION_HEADERS}", *openmp_include_flags())
