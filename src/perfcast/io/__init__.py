"""Readers and writers, one module per format, behind :func:`read_experiment` and
:func:`write_experiment`.

A format module defines ``NAME`` and any of: ``read(path) -> Experiment``,
``write(experiment, path) -> None``, ``sniff(path, head) -> bool`` (``head`` is the first few KiB
of the file as text, empty for directories) and ``SUFFIXES`` (file endings it writes).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment

# Module names under perfcast.io; sniffing tries them in this order.
FORMAT_MODULES = (
    "perfcast_json",
    "campaign_results",
    "extrap_json",
    "jsonlines",
    "talpas",
    "extrap_text",
    "caliper",
    "cube",
    "table",
)


def _modules() -> list[ModuleType]:
    return [importlib.import_module(f"perfcast.io.{name}") for name in FORMAT_MODULES]


def formats() -> dict[str, ModuleType]:
    """Format name to module, for every known format."""
    return {m.NAME: m for m in _modules()}


def _head(path: Path) -> str:
    if path.is_dir():
        return ""
    with path.open("rb") as handle:
        return handle.read(8192).decode("utf-8-sig", errors="replace")


def detect_format(path: str | Path) -> str:
    """Name of the format of ``path``, judged from its content and name.

    Raises
    ------
    InputError
        When the file does not exist or no reader recognizes it.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or directory", path)
    try:
        head = _head(path)
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", path) from None
    if path.is_file() and not head.strip() and path.stat().st_size <= 8192:
        raise InputError("the file is empty", path)
    for module in _modules():
        if hasattr(module, "read") and module.sniff(path, head):
            return module.NAME
    raise InputError(
        "cannot tell the format of this file; it is none of "
        f"{', '.join(n for n, m in formats().items() if hasattr(m, 'read'))}",
        path,
        reason="unknown-input-format",
        value=str(path),
    )


def read_experiment(path: str | Path, input_format: str | None = None) -> Experiment:
    """Read an experiment from a file (format detected unless ``input_format`` is given)."""
    name = input_format or detect_format(path)
    module = formats().get(name)
    if module is None or not hasattr(module, "read"):
        raise InputError(f"unknown input format '{name}'", path)
    if not Path(path).exists():
        raise InputError("no such file or directory", path)
    try:
        return module.read(Path(path))
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", path) from None


def output_format_for(path: str | Path) -> str:
    """Name of the format an experiment written to ``path`` gets, judged from the file name.

    The first format (in :data:`FORMAT_MODULES` order) with a writer and a suffix the name ends
    with, ignoring case, wins.

    Raises
    ------
    InputError
        With reason ``"unknown-output-format"`` when no writer takes the file name.
    """
    path = Path(path)
    name = path.name.lower()
    for module in _modules():
        if hasattr(module, "write") and name.endswith(tuple(getattr(module, "SUFFIXES", ()))):
            return str(module.NAME)
    suffixes = sorted(
        {s for m in _modules() if hasattr(m, "write") for s in getattr(m, "SUFFIXES", ())}
    )
    raise InputError(
        f"cannot tell the output format from the file name (writers take {', '.join(suffixes)})",
        path,
        reason="unknown-output-format",
        value=path.name,
    )


def write_experiment(
    experiment: Experiment, path: str | Path, output_format: str | None = None
) -> None:
    """Write an experiment; the format follows ``output_format`` or the file's suffix.

    Raises
    ------
    InputError
        When the format is unknown or has no writer, or the file cannot be written.
    """
    path = Path(path)
    if output_format is None:
        output_format = output_format_for(path)
    module = formats().get(output_format)
    if module is None or not hasattr(module, "write"):
        writable = ", ".join(n for n, m in formats().items() if hasattr(m, "write"))
        raise InputError(
            f"no writer for the format '{output_format}' (writers: {writable})",
            path,
            reason="no-writer",
            value=output_format,
        )
    try:
        module.write(experiment, path)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", path) from None
