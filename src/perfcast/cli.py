"""The ``perfcast`` command line: argument parsing and error reporting only."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from perfcast.commands.advice import with_advice
from perfcast.core.errors import InputError, WorkError
from perfcast.core.version import __version__

# Sub-command modules under perfcast.commands, in the order `perfcast --help` lists them; each
# registers the command named like the module without a trailing underscore.
COMMANDS = (
    "model",
    "predict",
    "convert",
    "import_",
    "run",
    "diagnose",
    "optimize",
    "compare",
    "report",
    "instrument",
    "static",
)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own exit status is 2 already
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"perfcast: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered, or just the module ``only``."""
    parser = _Parser(prog="perfcast", description="Forecast how HPC applications scale.")
    parser.add_argument("--version", action="version", version=f"perfcast {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"perfcast.commands.{name}").add_parser(subparsers)
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The module of the command ``argv`` names, or None (no or unknown command).

    The top-level options take no values, so the first word not starting with ``-`` is the
    command. Importing only its module keeps the others' dependencies (sympy, clang bindings,
    scipy) out of the start-up.
    """
    word = next((token for token in argv if not token.startswith("-")), None)
    return next((name for name in COMMANDS if name.rstrip("_") == word), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 work failed, 2 bad input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(chosen_command(argv)).parse_args(argv)
    try:
        return int(args.run(args) or EXIT_OK)
    except InputError as error:
        print(f"perfcast: error: {with_advice(error)}", file=sys.stderr)
        return EXIT_USAGE
    except WorkError as error:
        print(f"perfcast: failed: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("perfcast: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
