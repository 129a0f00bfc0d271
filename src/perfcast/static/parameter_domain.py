"""The parameter values a static count holds at: the analysis takes every parameter to be an
integer >= 1 (a loop bound ``(m + 40) / 8`` becomes ``floor(m/8) + 5`` passes, C's truncation
toward zero and the clamp at no pass are only the same for such values), so a count evaluated
or fixed at a value below 1 is refused rather than given as a number the program never runs."""

from __future__ import annotations

import math
from collections.abc import Mapping

from perfcast.core.errors import InputError


def check_parameter_values(values: Mapping[str, float], where: str | None = None) -> None:
    """Raise unless every value is a finite number >= 1.

    Parameters
    ----------
    values : mapping of str to float
        Parameter name -> value.
    where : str, optional
        What the values are for (a function, a profiled run), named in the message.

    Raises
    ------
    InputError
        With reason ``"bad-parameter-value"``, naming each value outside the domain.
    """
    outside = [
        f"{name} = {value:g}"
        for name, value in values.items()
        if not (math.isfinite(value) and value >= 1)
    ]
    if outside:
        raise InputError(
            f"{', '.join(outside)}{f' ({where})' if where else ''}: the static counts take "
            "every parameter to be an integer >= 1, and hold at such values only (a count "
            "there may differ from what the program runs, even be negative)",
            reason="bad-parameter-value",
            value=", ".join(outside),
        )
