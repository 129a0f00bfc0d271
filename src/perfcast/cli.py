"""The ``perfcast`` command line: argument parsing and error reporting only."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from perfcast.commands.advice import with_advice
from perfcast.core.errors import InputError, WorkError
from perfcast.core.terminal import VisibleStream
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
    "learn",
    "features",
    "graph",
    "similar",
    "tune",
    "online",
    "signature",
    "extrapolate",
    "probe",
    "convolve",
    "advise",
)

# The line `perfcast --help` shows for each command module. Kept here so that listing the
# commands imports none of them (with their dependencies: pandas, scipy, sympy, clang bindings).
SUMMARIES = {
    "model": "fit scaling models to every kernel",
    "predict": "predict every kernel at a configuration, ranked by cost",
    "convert": "convert measurements between formats",
    "import_": "import Caliper or Score-P CUBE profiles, one run each",
    "run": "run a measurement campaign (every point x repetition) and write the experiment",
    "diagnose": "rank kernels at a target scale, flag scalability bugs, scaling error, hotspot "
    "shifts",
    "optimize": "search the configuration (threads, ranks per node, flags, ...) minimizing an "
    "objective",
    "compare": "compare two experiments: significant regressions (with p-values) and model "
    "differences",
    "report": "write a self-contained HTML report with plots, warnings and hotspot shifts",
    "instrument": "print compiler flags for perfcast's region library",
    "static": "count loops and functions of C sources symbolically",
    "learn": "learn run time from a run table of features (forests, reductions, transfer)",
    "features": "instrument C sources for run-time features (libclang); records to run table",
    "graph": "print the hybrid control-flow graphs (hCFG) of a C file's functions and loops",
    "similar": "rank loops or functions of C files by code-graph similarity to a kernel",
    "tune": "autotune a C kernel's flags and macros; tuning database with warm starts",
    "online": "life-long online modeling: replay a measurement stream, serve instrumented "
    "runs, show the model store",
    "signature": "run a program under valgrind: features per basic block, line and function",
    "extrapolate": "extrapolate signatures at small core counts to a large one, per element",
    "probe": "measure this machine's bandwidth surface and floating-point rates",
    "convolve": "predict computation time of a signature on a machine profile",
    "advise": "suggest the points to measure next that narrow a prediction most per cost",
}

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
#: As a shell reports a program killed by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own exit status is 2 already
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"perfcast: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the command line, with the module ``only`` loaded.

    Every command is listed with its summary; only the module ``only`` (one of
    :data:`COMMANDS`, or None for none) is imported to register its arguments, the others
    stay placeholders that cannot parse anything.
    """
    parser = _Parser(prog="perfcast", description="Forecast how HPC applications scale.")
    parser.add_argument("--version", action="version", version=f"perfcast {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        if name == only:
            importlib.import_module(f"perfcast.commands.{name}").add_parser(subparsers)
        else:
            subparsers.add_parser(name.rstrip("_"), help=SUMMARIES[name])
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The module of the command ``argv`` runs, or None (none, unknown, or top-level help).

    The top-level options take no values, so the first word not starting with ``-`` is the
    command, unless ``-h`` or ``--help`` comes before it: then the top-level help is printed and
    no command runs. Importing only the module of the command that runs keeps the others'
    dependencies (pandas, scipy, sympy, clang bindings) out of the start-up.
    """
    for token in argv:
        if token in ("-h", "--help"):
            return None
        if not token.startswith("-"):
            return next((name for name in COMMANDS if name.rstrip("_") == token), None)
    return None


def command_flags(parser: argparse.ArgumentParser, module: str | None) -> set[str] | None:
    """The option strings (``--metric``, ``-o``) of the command of ``module``, None for none."""
    if module is None:
        return None
    commands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    command = commands.choices[module.rstrip("_")]
    return {flag for action in command._actions for flag in action.option_strings}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 work failed, 2 bad input).

    Called without ``argv`` (as the program: ``perfcast ...``, ``python -m perfcast.cli``), it
    leaves the objects alive at its end to the operating system (see :func:`_leave_to_exit`).
    """
    as_program = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    module = chosen_command(argv)
    parser = build_parser(module)
    # Wrapped before parsing: argparse's own errors repeat the arguments (``perfcast model
    # *.csv`` in a directory of hostile file names) and must not drive the terminal either.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (
        VisibleStream(stream) if stream.isatty() else stream for stream in streams
    )
    try:
        args = parser.parse_args(argv)
        return int(args.run(args) or EXIT_OK)
    except InputError as error:
        print(
            f"perfcast: error: {with_advice(error, command_flags(parser, module))}", file=sys.stderr
        )
        return EXIT_USAGE
    except WorkError as error:
        print(f"perfcast: failed: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("perfcast: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of standard output left (``perfcast ... | head``): nothing more to say.
        # Point stdout at /dev/null so that the interpreter's final flush fails no more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, streams[0].fileno())
        return EXIT_BROKEN_PIPE
    finally:
        sys.stdout, sys.stderr = streams
        if as_program:
            _leave_to_exit()


def _leave_to_exit() -> None:
    """Collect the garbage once, then exempt every object still alive from the collector.

    At exit the interpreter clears the modules and runs its cyclic collector over what they
    held, in passes over every object left (sympy's classes and caches: about 0.04 s of a
    bare ``import sympy``, 0.1 s after a static analysis), only to hand memory back that the
    process is about to return anyway. After the collection here no unreachable object is left
    unfinalized; the frozen objects are those still in use now, whose finalizers at shutdown
    Python does not promise (``__del__`` of objects alive at exit); standard output and error
    are still flushed and ``atexit`` functions (temporary directories) still run.
    """
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
