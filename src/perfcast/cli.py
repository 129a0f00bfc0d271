"""The ``perfcast`` command line: argument parsing and error reporting only."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from perfcast import __version__
from perfcast.errors import InputError, WorkError

# Sub-command modules under perfcast.commands, in the order `perfcast --help` lists them.
COMMANDS = ("model", "predict", "convert", "instruction_mix")

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit status is 2 already
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"perfcast: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every sub-command registered."""
    parser = _Parser(prog="perfcast", description="Forecast how HPC applications scale.")
    parser.add_argument("--version", action="version", version=f"perfcast {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"perfcast.commands.{name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 work failed, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or EXIT_OK)
    except InputError as error:
        print(f"perfcast: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except WorkError as error:
        print(f"perfcast: failed: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("perfcast: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
