"""Cache of static reports, keyed by what the analysis reads, so that a second run is fast.

A report depends on the sources' text, every header they include, the compile flags, the
parameters, the functions asked for, the analysis code itself and the libclang, sympy and
Python versions. :func:`report_key` hashes all but the headers (which are only known after a
parse); an entry stores the headers' paths and content hashes next to the report, and
:func:`cached_report` returns it only when every one of them still hashes the same. So an
edited header, an edited source or a changed flag is a miss, never a stale report.

Entries are Python pickles (exact sympy expressions, read back as they were written): the
cache directory must be the user's own, like any cache of executable state. The directory
keeps the most recently written :data:`KEEP` entries.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import platform
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import sympy

from perfcast.static.frontend import ParsedSource
from perfcast.static.report import StaticReport

KEEP = 256
"""How many reports the cache directory keeps (the oldest written are removed)."""

_FORMAT = 1
_CODE_DIRECTORY = Path(__file__).resolve().parent


def default_directory() -> Path:
    """``$PERFCAST_CACHE_DIR``, else ``$XDG_CACHE_HOME/perfcast/static``, else
    ``~/.cache/perfcast/static``."""
    chosen = os.environ.get("PERFCAST_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "perfcast" / "static"


def report_key(
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str],
    functions: Sequence[str] | None,
) -> str:
    """Hex digest of everything a report depends on but the included headers.

    A missing or unreadable source gives a key no entry has (the analysis then reports it).
    """
    digest = hashlib.sha256()
    for part in (
        f"format {_FORMAT}",
        _analysis_code_digest(),
        f"python {platform.python_version()} sympy {sympy.__version__}",
        _libclang_version(),
        "\0".join(compile_args),
        "\0".join(parameters),
        "all" if functions is None else "\0".join(["only", *functions]),
    ):
        digest.update(part.encode() + b"\1")
    for source in sources:
        path = Path(source).resolve()
        digest.update(str(path).encode() + b"\1")
        digest.update((_file_digest(path) or "missing").encode() + b"\1")
    return digest.hexdigest()


def cached_report(directory: Path, key: str) -> StaticReport | None:
    """The stored report of ``key`` when every header it read is unchanged, else None."""
    try:
        with open(directory / f"{key}.pickle", "rb") as stream:
            dependencies, report = pickle.load(stream)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
        return None
    if not isinstance(report, StaticReport):
        return None
    for path, digest in dependencies:
        if _file_digest(Path(path)) != digest:
            return None
    return report


def store_report(
    directory: Path, key: str, report: StaticReport, dependencies: Iterable[Path]
) -> None:
    """Write the report with the content hashes of the headers it read (atomically; a
    directory that cannot be written is skipped: the cache is an optimization)."""
    entries = [(str(path), _file_digest(path)) for path in dependencies]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".part")
        with os.fdopen(handle, "wb") as stream:
            pickle.dump((entries, report), stream, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, directory / f"{key}.pickle")
        _prune(directory)
    except (OSError, pickle.PicklingError, RecursionError):
        return


def included_files(parsed: Sequence[ParsedSource]) -> list[Path]:
    """Every file the translation units included (headers, at any depth)."""
    found = {
        Path(str(inclusion.include.name))
        for source in parsed
        for inclusion in source.unit.get_includes()
    }
    return sorted(found)


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in entries[KEEP:]:
        stale.unlink(missing_ok=True)


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@functools.cache
def _analysis_code_digest() -> str:
    """Hash of perfcast's analysis code (this package's modules and headers): a changed
    analysis never reads a report of the old one."""
    digest = hashlib.sha256()
    for path in sorted(_CODE_DIRECTORY.rglob("*")):
        if path.suffix in (".py", ".h", ".c") and path.is_file():
            digest.update(path.relative_to(_CODE_DIRECTORY).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _libclang_version() -> str:
    """The version of the installed libclang bindings (which ship the library)."""
    # imported here: importlib.metadata is a tenth of the analysis' imports, and an
    # uncached run (--no-cache) never asks
    from importlib import metadata

    try:
        return f"libclang {metadata.version('libclang')}"
    except metadata.PackageNotFoundError:
        return "libclang unknown"
