"""Where perfcast's region library lives and the compiler arguments that build a program with it.

The library is one C file compiled together with the program by the program's own compiler, not a
prebuilt archive: that way it always matches the compiler and ABI, and built with ``mpicc`` it
becomes MPI-aware by itself (it sees ``<mpi.h>``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def library_dir() -> Path:
    """The directory holding ``perfcast.h``, ``perfcast.c``, ``perfcast.f90`` and ``caliper/``.

    Returns
    -------
    Path
        Absolute path of the shipped C sources.
    """
    return Path(str(resources.files("perfcast.measure") / "c")).resolve()


def compile_flags(functions: bool = False) -> list[str]:
    """Compiler flags for sources that include ``perfcast.h`` (or Caliper's ``caliper/cali.h``).

    Parameters
    ----------
    functions
        Also record every function as a region (``-finstrument-functions``).

    Returns
    -------
    list of str
        Flags to add to the compile command.
    """
    flags = [f"-I{library_dir()}"]
    if functions:
        flags.append("-finstrument-functions")
    return flags


def link_arguments() -> list[str]:
    """Arguments to add to the link (or single compile-and-link) command.

    Returns
    -------
    list of str
        The library's C source, compiled along with the program, and ``-ldl`` for symbol names.
    """
    return [str(library_dir() / "perfcast.c"), "-ldl"]


def fortran_module() -> Path:
    """The Fortran module source (``module perfcast``) binding the library through ISO_C_BINDING.

    Returns
    -------
    Path
        Absolute path of ``perfcast.f90``.
    """
    return library_dir() / "perfcast.f90"
