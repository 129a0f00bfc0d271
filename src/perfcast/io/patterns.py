"""Run parameters taken from file and directory names.

A name pattern such as ``mm.x{x}y{y}z{z}.r{rep}`` names the parameters carried by a run's name:
each ``{name}`` matches a number, ``*`` matches any text, everything else matches itself. The
group ``{rep}`` is the repetition number rather than a parameter.

Without a pattern, :func:`infer_name_values` reads names the way Extra-P reads Score-P cube sets:
``<prefix>.<p1><v1><p2><v2>...[.r<rep>]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.core.numbers import parse_number

REPETITION_GROUP = "rep"

# A decimal number; a comma is accepted as decimal separator (as in Extra-P's cube-set names).
_NUMBER = r"[-+]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)(?:[eE][-+]?[0-9]+)?"
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

_ROLES = {
    "p": "processes",
    "np": "processes",
    "procs": "processes",
    "processes": "processes",
    "ranks": "processes",
    "nodes": "processes",
    "t": "threads",
    "threads": "threads",
    "n": "problem_size",
    "size": "problem_size",
    "problem_size": "problem_size",
}


def guess_role(name: str) -> str | None:
    """The role a parameter name conventionally has (``p`` processes, ``t`` threads, ``n`` size).

    Returns None for names without a convention.
    """
    return _ROLES.get(name.lower())


def parse_name_number(text: str, source: str | Path) -> float:
    """Convert a number matched in a name (``"2,5"`` or ``"2.5"``, ASCII digits only) to float;
    an :class:`InputError` naming ``source`` when a double cannot hold it."""
    return parse_number(text.replace(",", "."), f"the number {text!r} in the name", source, None)


@dataclass
class NamePattern:
    """A compiled name pattern.

    Parameters
    ----------
    template : str
        The pattern, e.g. ``"mm.x{x}y{y}z{z}.r{rep}"``. A ``/`` in it matches the separator of
        the last path components of a run's path (``"p{p}/run{rep}"``).

    Attributes
    ----------
    fields : tuple of str
        The group names in order of appearance (``rep`` included when present).
    regex : re.Pattern
        The regular expression the template compiles to; one named group per field.
    """

    template: str
    fields: tuple[str, ...] = field(init=False)
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        parts: list[str] = []
        names: list[str] = []
        position = 0
        for found in _FIELD.finditer(self.template):
            parts.append(_literal(self.template[position : found.start()]))
            name = found.group(1)
            if name in names:
                raise InputError(f"the name pattern '{self.template}' uses {{{name}}} twice")
            names.append(name)
            parts.append(f"(?P<{name}>{_NUMBER})")
            position = found.end()
        parts.append(_literal(self.template[position:]))
        if not names:
            raise InputError(
                f"the name pattern '{self.template}' has no {{name}} field; "
                "write e.g. 'mm.x{x}y{y}.r{rep}'"
            )
        self.fields = tuple(names)
        self.regex = re.compile("".join(parts))

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameter fields (every field but ``rep``)."""
        return tuple(name for name in self.fields if name != REPETITION_GROUP)

    def subjects(self, path: str | Path) -> list[str]:
        """The texts of ``path`` the pattern is tried against, in order.

        That is the last ``k`` path components (``k`` = 1 + number of ``/`` in the template),
        first as they are, then with the file suffix removed from the last one.
        """
        tail = list(Path(path).parts[-(self.template.count("/") + 1) :])
        subjects = ["/".join(tail)]
        suffix = Path(tail[-1]).suffix
        if suffix:
            subjects.append("/".join([*tail[:-1], tail[-1][: -len(suffix)]]))
        return subjects

    def match(self, path: str | Path) -> dict[str, float]:
        """Field values found in the name of ``path``.

        Raises
        ------
        InputError
            When the name does not match the pattern.
        """
        subjects = self.subjects(path)
        for subject in subjects:
            found = self.regex.fullmatch(subject)
            if found is not None:
                return {
                    name: parse_name_number(text, path) for name, text in found.groupdict().items()
                }
        raise InputError(
            f"the name '{subjects[0]}' does not match the pattern '{self.template}'", path
        )


def _literal(text: str) -> str:
    return ".*?".join(re.escape(piece) for piece in text.split("*"))


_EXTRAP_PAIR = re.compile(r"([A-Za-z_]+)([0-9]+(?:[.,][0-9]+)?\.?)")
_REPETITION_SUFFIX = re.compile(r"\.r([0-9]+)$")


def infer_name_values(name: str, source: str | Path | None = None) -> dict[str, float]:
    """Parameter values in a name like ``mm.x10y1z25.r3``, read the way Extra-P reads cube sets.

    The text after the first ``.`` and before a trailing ``.r<rep>`` is a sequence of
    ``<name><number>`` pairs (names of letters and ``_``); ``.r<rep>``, when present, gives the
    repetition under the key ``rep``.

    Parameters
    ----------
    name : str
        A directory or file name.
    source : str or Path, optional
        Used in error messages.

    Raises
    ------
    InputError
        When the name holds no ``<name><number>`` pairs or has text that is not part of one.
    """
    where = source if source is not None else name
    values: dict[str, float] = {}
    repetition = _REPETITION_SUFFIX.search(name)
    end = len(name) if repetition is None else repetition.start()
    if repetition is not None:
        values[REPETITION_GROUP] = float(repetition.group(1))
    body = name[name.find(".") + 1 : end]
    position = 0
    for pair in _EXTRAP_PAIR.finditer(body):
        if pair.start() != position:
            break
        key = pair.group(1)
        if key in values:
            raise InputError(f"parameter '{key}' appears twice in the name '{name}'", where)
        values[key] = parse_name_number(pair.group(2).rstrip("."), where)
        position = pair.end()
    if position != len(body) or len(values) == (REPETITION_GROUP in values):
        raise InputError(
            f"cannot read parameters from the name '{name}': expected "
            "'<prefix>.<name><value><name><value>...[.r<repetition>]' (e.g. mm.x10y1z1.r1)",
            where,
            reason="unparsed-run-name",
            value=name,
        )
    return values
