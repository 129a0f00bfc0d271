"""Checks of modeler settings: a setting outside its allowed range is a ``ValueError`` that names
the setting, the allowed range and the value given, raised when the modeler is constructed."""

from __future__ import annotations

import math
from collections.abc import Collection
from numbers import Integral, Real
from typing import Any


def _fail(name: str, allowed: str, value: Any) -> ValueError:
    return ValueError(f"{name}: must be {allowed}, not {value!r}")


def check_int(
    name: str, value: Any, low: int, high: int | None = None, *, optional: bool = False
) -> None:
    """``value`` is an integer in ``[low, high]`` (``high`` None: no upper bound), or None if
    ``optional``."""
    if value is None and optional:
        return
    allowed = f"an integer from {low}" + (f" to {high}" if high is not None else " up")
    if optional:
        allowed += " or None"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise _fail(name, allowed, value)
    number = int(value)
    if number < low or (high is not None and number > high):
        raise _fail(name, allowed, value)


def check_open_interval(name: str, value: Any, low: float, high: float) -> None:
    """``value`` is a real number strictly between ``low`` and ``high``."""
    allowed = f"a number strictly between {low:g} and {high:g}"
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise _fail(name, allowed, value)
    if not low < float(value) < high:
        raise _fail(name, allowed, value)


def check_bool(name: str, value: Any, *, optional: bool = False) -> None:
    """``value`` is True or False (or None if ``optional``)."""
    if isinstance(value, bool) or (optional and value is None):
        return
    raise _fail(name, "True, False or None" if optional else "True or False", value)


def check_choice(name: str, value: Any, choices: Collection[str]) -> None:
    """``value`` is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise _fail(name, "one of " + ", ".join(repr(c) for c in choices), value)
