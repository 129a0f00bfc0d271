"""Argument helpers shared by sub-commands that read an experiment."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from perfcast.api import Experiment, InputError, formats, load


def readable_formats() -> list[str]:
    """Names of the formats perfcast can read."""
    return [name for name, can in formats().items() if can["read"]]


def writable_formats() -> list[str]:
    """Names of the formats perfcast can write."""
    return [name for name, can in formats().items() if can["write"]]


def add_input_arguments(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """Add the positional ``FILE`` (may be left out when ``optional``) and ``--input-format``
    to ``parser``."""
    parser.add_argument(
        "file",
        metavar="FILE",
        nargs="?" if optional else None,
        help="measurements (format detected from content)",
    )
    parser.add_argument(
        "--input-format",
        choices=readable_formats(),
        help="read FILE in this format instead of detecting it",
    )


def load_experiment(args: argparse.Namespace) -> Experiment:
    """The experiment named by the arguments of :func:`add_input_arguments`.

    Raises
    ------
    InputError
        When the file is missing, of unknown format or malformed.
    """
    return load(args.file, format=args.input_format)


def write_output(text: str, out: str | None) -> None:
    """Print ``text`` to standard output, or write it to the file ``out`` when given.

    Raises
    ------
    InputError
        When ``out`` cannot be written.
    """
    if text and not text.endswith("\n"):
        text += "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", out) from None


def terminal_width(out: str | None) -> int | None:
    """The width tables are fitted to: the terminal's when the output goes to one, else None
    (a file or a pipe gets full rows)."""
    if out is not None or not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns
