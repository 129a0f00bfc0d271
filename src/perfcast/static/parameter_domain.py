"""The parameter values a static count holds at. The analysis takes a size parameter to be an
integer >= 1 and a probability of ``#pragma perfcast probability(...)`` to lie in [0, 1]: a
loop bound ``(m + 40) / 8`` becomes ``floor(m/8) + 5`` passes, which C's truncation toward zero
and the clamp at no pass only give for such values. A count evaluated, fixed or profiled at a
negative value is therefore refused rather than given as a number the program never runs (it
may even be negative)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from perfcast.core.errors import InputError


def check_parameter_values(values: Mapping[str, float], where: str | None = None) -> None:
    """Raise unless every value is a finite number >= 0.

    Parameters
    ----------
    values : mapping of str to float
        Parameter name -> value (numbers of any kind ``float()`` takes).
    where : str, optional
        What the values are for (a function, a profiled run), named in the message.

    Raises
    ------
    InputError
        With reason ``"bad-parameter-value"``, naming each value outside the domain.
    """
    outside = []
    for name, value in values.items():
        number = float(value)
        if not (math.isfinite(number) and number >= 0):
            outside.append(f"{name} = {number:g}")
    if outside:
        raise InputError(
            f"{', '.join(outside)}{f' ({where})' if where else ''}: the static counts take "
            "sizes to be integers >= 1 and probabilities to lie in [0, 1], and hold at such "
            "values only (a count at a negative value may differ from what the program runs, "
            "even be negative)",
            reason="bad-parameter-value",
            value=", ".join(outside),
        )
