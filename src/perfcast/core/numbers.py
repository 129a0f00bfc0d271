"""Numbers read from text: one strict parser for every reader.

Python's ``float`` accepts much that no measurement file means: ``8_1`` (81), full-width and
other scripts' digits (``１２``, ``١٢``), ``nan`` and ``inf`` in any case, and it silently turns
``1e400`` into infinity and ``1e-400`` into 0. perfcast accepts only

- ASCII decimal notation with an optional sign and an optional exponent: ``42``, ``-1.5``,
  ``+3``, ``.5``, ``5.``, ``-1.5e-3``, ``2E+6`` (``.5`` and ``5.`` because C's ``printf`` and
  many tools write them); spaces and tabs around the text are ignored;
- values a double holds without loss of range: no overflow to infinity and no underflow of a
  non-zero text below the smallest normal double (about 2.2e-308), to 0 or to a subnormal.

Everything else is an :class:`~perfcast.core.errors.InputError` with reason ``"bad-number"`` and
the offending text as its value. JSON numbers are ASCII already, but ``json`` turns ``1e400``
into infinity and ``1e-400`` into 0: :func:`json_float` (the ``parse_float`` of ``json.loads``)
marks such numbers so that :func:`parse_number` rejects them where it knows the file and line.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError

if TYPE_CHECKING:  # numpy loads where many numbers are parsed at once
    import numpy as np

BAD_NUMBER = "bad-number"
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_SPACE = " \t"
_SMALLEST_NORMAL = sys.float_info.min


class OutOfRange(float):
    """A JSON number a double cannot hold: the float ``json`` would have given (infinity or a
    value below the smallest normal double), with the number's text."""

    text: str

    def __new__(cls, text: str) -> OutOfRange:
        number = super().__new__(cls, text)
        number.text = text
        return number


def json_float(text: str) -> float:
    """``parse_float`` for ``json.loads``: the float of a JSON number, an :class:`OutOfRange`
    when it overflows or a non-zero number underflows."""
    number = float(text)
    if _out_of_range(number, text):
        return OutOfRange(text)
    return number


def _out_of_range(number: float, text: str) -> bool:
    """True when ``number`` (the float of the decimal ``text``) lost the text's range."""
    if math.isinf(number):
        return True
    return abs(number) < _SMALLEST_NORMAL and _nonzero_mantissa(text)


def _nonzero_mantissa(text: str) -> bool:
    mantissa = text.lower().partition("e")[0]
    return any(digit in mantissa for digit in "123456789")


def number_problem(text: str) -> str | None:
    """Why ``text`` is not a number perfcast accepts (words for a message), None when it is one."""
    stripped = text.strip(_SPACE)
    if not _DECIMAL.fullmatch(stripped):
        if stripped.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            return "not a finite number"
        return "not a number (ASCII decimal or scientific notation expected)"
    number = float(stripped)
    if math.isinf(number):
        return "too large for a double-precision number"
    if abs(number) < _SMALLEST_NORMAL and _nonzero_mantissa(stripped):
        return (
            "too small for a double-precision number "
            "(below 2.2e-308, it loses digits or reads as 0)"
        )
    return None


def parse_number(raw: Any, what: str, source: str | Path | None, line: int | None) -> float:
    """``raw`` (text, or a number from ``json.loads``) as a finite float.

    Parameters
    ----------
    raw : str or number
        The value as found in the input.
    what : str
        What the value is, for the message (e.g. ``"value"`` or ``"parameter 'p'"``).
    source : str or Path, optional
        The file it was found in.
    line : int, optional
        The line (or record) it was found in.

    Returns
    -------
    float

    Raises
    ------
    InputError
        With reason ``"bad-number"`` and the text as value when ``raw`` is missing, not a number,
        not written as the module describes, not finite, or out of a double's range.
    """
    kind = type(raw)
    if (kind is float and math.isfinite(raw)) or kind is int and abs(raw) < 2**1000:
        return float(raw)
    if isinstance(raw, OutOfRange):
        raise InputError(
            f"{what} is {raw.text}, out of the range of a double-precision number",
            source,
            line,
            reason=BAD_NUMBER,
            value=raw.text,
        )
    if isinstance(raw, str):
        problem = number_problem(raw)
        if problem is None:
            return float(raw.strip(_SPACE))
        raise InputError(
            f"{what} is {raw!r}, {problem}", source, line, reason=BAD_NUMBER, value=raw
        )
    np = sys.modules.get("numpy")  # a numpy number exists only once numpy is imported
    if np is not None and isinstance(raw, np.integer | np.floating):
        return parse_number(repr(raw.item()), what, source, line)
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return parse_number(repr(raw), what, source, line)
    shown = "missing" if raw is None else f"{raw!r}, not a number"
    raise InputError(f"{what} is {shown}", source, line, reason=BAD_NUMBER, value=raw)


def parse_numbers(texts: Sequence[str]) -> tuple[np.ndarray, int | None]:
    """Many texts at once: their floats and the index of the first one :func:`parse_number`
    would reject (None when every one is good; the floats are then all finite).

    Parameters
    ----------
    texts : sequence of str

    Returns
    -------
    numbers : ndarray of float, shape (len(texts),)
        Meaningful only when ``first_bad`` is None.
    first_bad : int or None
    """
    import numpy as np

    malformed = next(
        (i for i, text in enumerate(texts) if not _DECIMAL.fullmatch(text.strip(_SPACE))), None
    )
    end = len(texts) if malformed is None else malformed
    numbers = np.zeros(len(texts))
    numbers[:end] = np.fromiter(map(float, texts[:end]), dtype=float, count=end)
    head = numbers[:end]
    suspicious = ~np.isfinite(head) | ((head != 0) & (np.abs(head) < _SMALLEST_NORMAL))
    # A zero is suspicious only when written with an exponent (1e-400 underflows to 0; "0",
    # "0.0" and the like are common and fine).
    zeros = np.flatnonzero(head == 0).tolist()
    suspicious[[i for i in zeros if "e" in texts[i] or "E" in texts[i]]] = True
    for index in np.flatnonzero(suspicious).tolist():
        if number_problem(texts[index]) is not None:
            return numbers, index
    return numbers, malformed
