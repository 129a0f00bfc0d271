"""``perfcast probe``: measure this machine's memory bandwidths and floating-point rates."""

from __future__ import annotations

import argparse
from pathlib import Path

from perfcast.api import InputError, probe_machine, render_pmac, save_machine


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast probe``."""
    parser = subparsers.add_parser(
        "probe",
        description="Compile and run perfcast's C probes: bandwidth over working-set size "
        "and access pattern, floating-point rates, integer issue rate and branch misprediction "
        "penalty, cache geometry; write a machine profile.",
    )
    parser.add_argument("-o", "--out", required=True, metavar="FILE", help="profile to write")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter probes (< 1 min)")
    parser.add_argument(
        "--largest", type=int, metavar="BYTES", help="largest working set to measure"
    )
    parser.add_argument("--name", help="the machine's name (default: the host name)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Probe, write the profile, print its summary."""
    out = Path(args.out)
    if out.is_dir() or not out.parent.is_dir():  # refused before probing, not after
        problem = "is a directory" if out.is_dir() else "its directory does not exist"
        raise InputError(f"cannot write the profile: {problem}", args.out)
    profile = probe_machine(quick=args.quick, largest_working_set=args.largest, name=args.name)
    save_machine(profile, args.out)
    print(render_pmac(profile), end="")
    return 0
