"""Parameter value lists and ranges of a campaign.

Grammar of a range string (spaces are optional)::

    START..STOP           every integer step of 1 from START up to STOP
    START..STOP +STEP     arithmetic: START, START+STEP, ... while <= STOP
    START..STOP *FACTOR   geometric:  START, START*FACTOR, ... while <= STOP

START, STOP, STEP and FACTOR are decimal numbers; STEP must be > 0, FACTOR > 1 and, for a
geometric range, START > 0. STOP is included when the sequence reaches it exactly. A range whose
START exceeds STOP is empty and rejected. Values are integers when START and STEP (or FACTOR)
are integers, floats otherwise. A value list is a TOML array of numbers or, on the command line,
numbers separated by commas (``1,2,4``).
"""

from __future__ import annotations

import math
import re

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_RANGE = re.compile(
    rf"^\s*(?P<start>{_NUMBER})\s*\.\.\s*(?P<stop>{_NUMBER})\s*"
    rf"(?:(?P<op>[*+])\s*(?P<step>{_NUMBER}))?\s*$"
)
_MAX_VALUES = 100_000

Number = int | float


class RangeError(ValueError):
    """A range or value list that cannot be expanded; the message says why."""


def _number(text: str) -> Number:
    value = float(text)
    if value.is_integer() and re.fullmatch(r"[+-]?\d+", text.strip()):
        return int(text)
    return value


def expand_range(text: str) -> list[Number]:
    """Expand a range string such as ``"2..64 *2"`` into its values.

    Parameters
    ----------
    text : str
        The range, in the grammar of this module's docstring.

    Returns
    -------
    list of int or float
        The values in increasing order.

    Raises
    ------
    RangeError
        On bad syntax, a non-positive step, a factor <= 1, or an empty range.
    """
    match = _RANGE.match(text)
    if match is None:
        raise RangeError(
            f"bad range {text!r}: expected START..STOP, START..STOP +STEP or START..STOP *FACTOR"
        )
    start, stop = _number(match["start"]), _number(match["stop"])
    op, step = match["op"] or "+", _number(match["step"] or "1")
    if start > stop:
        raise RangeError(f"empty range {text!r}: start {start} is greater than stop {stop}")
    if op == "+" and step <= 0:
        raise RangeError(f"bad range {text!r}: the step must be positive")
    if op == "*" and step <= 1:
        raise RangeError(f"bad range {text!r}: the factor must be greater than 1")
    if op == "*" and start <= 0:
        raise RangeError(f"bad range {text!r}: a geometric range must start above 0")
    integral = isinstance(start, int) and isinstance(step, int)
    tolerance = 1e-9 * max(abs(stop), 1.0)
    values: list[Number] = []
    for k in range(_MAX_VALUES + 1):
        value = start + k * step if op == "+" else start * step**k
        if value > stop + tolerance:
            return values
        if not integral:
            value = float(round(value, 12)) if math.isfinite(value) else value
        values.append(value)
    raise RangeError(f"range {text!r} has more than {_MAX_VALUES} values")


def parse_values(raw: object) -> list[Number]:
    """Turn a parameter specification into its list of values.

    Parameters
    ----------
    raw : list of numbers, or str
        A list of numbers, a range string, or comma-separated numbers (``"1,2,4"``).

    Returns
    -------
    list of int or float
        Distinct values in the order given.

    Raises
    ------
    RangeError
        On anything that is not a number, an empty list or range, or repeated values.
    """
    if isinstance(raw, str):
        if ".." in raw:
            values = expand_range(raw)
        else:
            words = [w.strip() for w in raw.split(",")]
            if not any(words):
                raise RangeError("empty value list")
            values = []
            for word in words:
                if not re.fullmatch(_NUMBER, word):
                    raise RangeError(f"{word!r} is not a number")
                values.append(_number(word))
    elif isinstance(raw, list):
        if not raw:
            raise RangeError("empty value list")
        values = []
        for item in raw:
            if isinstance(item, bool) or not isinstance(item, int | float):
                raise RangeError(f"{item!r} is not a number")
            if not math.isfinite(item):
                raise RangeError(f"{item!r} is not a finite number")
            values.append(item)
    else:
        raise RangeError(f"expected a list of numbers or a range string, not {raw!r}")
    seen: set[float] = set()
    for value in values:
        if value in seen:
            raise RangeError(f"value {value} appears twice")
        seen.add(value)
    return values
