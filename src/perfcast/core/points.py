"""Parameter points written as text, such as ``p=4096,n=1e6``."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from perfcast.core.errors import InputError
from perfcast.core.numbers import number_problem

BAD_POINT = "bad-point"


def parse_point(
    text: str, parameters: Sequence[str] | None = None, source: str | None = None
) -> dict[str, float]:
    """Parse ``p=4096,n=1e6`` into ``{"p": 4096.0, "n": 1e6}``.

    The text is comma-separated ``NAME=VALUE`` items; spaces around names, values and items
    are ignored. Values are read like every number of an input file
    (:func:`perfcast.core.numbers.number_problem`: ASCII decimal or scientific notation, no
    ``8_1``, other scripts' digits, ``nan`` or ``inf``) and are positive (the scaling functions
    take their logarithm), so zero and negative values are rejected here.

    Parameters
    ----------
    text : str
        The point.
    parameters : sequence of str, optional
        The names a point may use; any name when not given.
    source : str, optional
        Where the text came from (a file, a setting), named in error messages.

    Returns
    -------
    dict of str to float
        The values, in the order the text gives them.

    Raises
    ------
    InputError
        With reason ``"bad-point"`` and the text as value, on an empty text, an item that is
        not ``NAME=VALUE`` (an empty item included), a name given twice, a name not in
        ``parameters``, or a value that is not a positive finite number.
    """

    def bad(problem: str) -> InputError:
        return InputError(f"point '{text}': {problem}", source, reason=BAD_POINT, value=text)

    if not text.strip():
        raise bad("no NAME=VALUE item")
    point: dict[str, float] = {}
    for name, value in name_value_items(
        text,
        lambda item: bad(f"'{item}' is not NAME=VALUE"),
        lambda name: bad(f"'{name}' is given twice"),
    ):
        if parameters is not None and name not in parameters:
            raise bad(f"'{name}' is not a parameter (parameters: {', '.join(parameters)})")
        problem = number_problem(value)
        if problem is not None:
            raise bad(f"'{value}' for '{name}' is {problem}")
        number = float(value)
        if number <= 0:
            raise bad(f"{name} must be a positive finite number, not {value}")
        point[name] = number
    return point


def name_value_items(
    text: str,
    malformed: Callable[[str], Exception],
    repeated: Callable[[str], Exception],
) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs of comma-separated ``NAME=VALUE`` items, both stripped.

    Parameters
    ----------
    text : str
        The items, e.g. ``p=4096,n=1e6`` or ``p=processes,n=size``.
    malformed : callable
        Builds the error for an item (given as written) that is not ``NAME=VALUE`` with a
        name and a value, an empty item included.
    repeated : callable
        Builds the error for a name given twice.

    Raises
    ------
    Exception
        The error ``malformed`` or ``repeated`` builds.
    """
    pairs: list[tuple[str, str]] = []
    for item in (part.strip() for part in text.split(",")):
        name, equals, value = (piece.strip() for piece in item.partition("="))
        if not equals or not name or not value:
            raise malformed(item)
        if any(name == seen for seen, _ in pairs):
            raise repeated(name)
        pairs.append((name, value))
    return pairs


def plain_value(value: float) -> float | int:
    """A parameter value as JSON should hold it: whole numbers (up to 2**53, exactly
    representable) as ``int``, others unchanged."""
    if math.isfinite(value) and value == int(value) and abs(value) <= 2**53:
        return int(value)
    return value


def format_value(value: float) -> str:
    """A parameter value as text: whole numbers in full (``64``, ``1048576``), others in
    ``%g`` notation (``0.5``, ``1.5e+20``)."""
    plain = plain_value(value)
    return str(plain) if isinstance(plain, int) else format(value, "g")


def format_point(point: Mapping[str, float]) -> str:
    """``p=64,n=1000000``: a point in the text :func:`parse_point` reads, integers written as
    integers."""
    return ",".join(f"{name}={format_value(value)}" for name, value in point.items())
