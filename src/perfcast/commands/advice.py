"""Advice about command-line flags for library errors.

Library errors say what went wrong in the library's own terms and carry a machine-readable
``reason`` code (see :class:`perfcast.core.errors.InputError`); only the command line knows
which flag fixes the problem. This table maps those codes to that advice.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the type alone: the CLI imports this module before any command runs
    from perfcast.api import InputError

ADVICE: dict[str, str] = {
    "ambiguous-metric": "name one with --metric (perfcast model --metric all models them all)",
    "mixed-metrics": "name one with --metric",
    "no-scale-parameter": "name it with --scale",
    "unknown-input-format": "name it with --input-format",
    "unknown-output-format": "name it with --output-format",
    "unknown-profile-format": "name the format with --format",
    "unparsed-run-name": "give the layout with --pattern",
    "unknown-run-parameters": "name them with --param KEY=NAME or --pattern",
    "cube-has-no-metadata": "give the layout of the run names with --pattern instead of --param",
    "bad-parameter-key": "check --param",
    "duplicate-parameter-name": "give every --param its own NAME",
    "no-configuration-parameters": "name them with --config-params",
    "configuration-grid-too-large": "fix some parameters with --fix or add a --constraint",
    "bad-constraint": "check --constraint",
    "bad-expectation": "check --expect",
    "bad-role": "check --role",
    "campaign-too-large": "or raise the limit with --max-runs",
    # perfcast advise
    "bad-budget": "check --budget",
    "bad-candidates": "check --candidates",
    # perfcast run --advise on a parameter with too few values for a model (advice9)
    "too-few-values": "give --candidates with new values of that parameter",
    "budget-too-small": "raise --budget",
}


_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def with_advice(error: InputError, flags: Collection[str] | None = None) -> str:
    """The error's message followed by the flag advice for its reason, when there is any.

    With ``flags`` (the options of the command that failed), advice naming a flag the command
    does not have is left out: a command without ``--output-format`` is not told to use it.
    """
    advice = ADVICE.get(error.reason) if error.reason is not None else None
    if advice and flags is not None and not set(_FLAG.findall(advice)) <= set(flags):
        advice = None
    return f"{error}; {advice}" if advice else str(error)
