"""Strict JSON input: an object that names a key twice is an error, not "the last one wins".

Python's :func:`json.loads` silently keeps the last of two equal keys, so a hand-edited or
concatenated file could lose a value without a word. :func:`parse_json` refuses such input with
a :class:`DuplicateKeyError`, a :class:`json.JSONDecodeError` whose line is the line where the
object holding the repeated key begins, so every reader's existing handling of malformed JSON
names the file and line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json import decoder as json_decoder
from json import scanner as json_scanner
from typing import Any


class DuplicateKeyError(json.JSONDecodeError):
    """A JSON object names one key twice (``msg`` names the key, ``lineno`` the object's line)."""


class _RepeatedKey(ValueError):
    """Raised by the fast parse when a key repeats; the slow parse then locates it."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _RepeatedKey(key)
        result[key] = value
    return result


def parse_json(
    text: str | bytes | bytearray,
    *,
    parse_float: Callable[[str], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """The value of the JSON ``text``, refusing objects that repeat a key.

    Parameters
    ----------
    text : str or bytes
        A JSON document (bytes in UTF-8, UTF-16 or UTF-32, as :func:`json.loads` takes them).
    parse_float, parse_constant : callable, optional
        As for :func:`json.loads` (e.g. :func:`perfcast.core.numbers.json_float`).

    Returns
    -------
    Any
        The parsed value.

    Raises
    ------
    json.JSONDecodeError
        For malformed JSON, or JSON nested too deeply for the decoder (at the bracket that goes
        too deep); :class:`DuplicateKeyError` (a subclass) when an object repeats a key.
    """
    if isinstance(text, bytes | bytearray):
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    options: dict[str, Any] = {}
    if parse_float is not None:
        options["parse_float"] = parse_float
    if parse_constant is not None:
        options["parse_constant"] = parse_constant
    try:
        try:
            return json.loads(text, object_pairs_hook=_unique_pairs, **options)
        except _RepeatedKey as repeated:
            raise _locate_repeated_key(text, options, repeated.args[0]) from None
    except RecursionError:
        raise _too_deep(text) from None


#: Nesting depth reported as too deep: Python's decoder recurses once per level and gives up
#: near the interpreter's recursion limit (1000 by default), so arrays or objects nested that
#: deep (``[[[[...`` as an attack, or a damaged file) cannot be read by any perfcast reader.
_REPORTED_DEPTH = 500

_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(text: str) -> json.JSONDecodeError:
    """The error for ``text`` nested beyond what the decoder can follow, at the first bracket
    that opens level :data:`_REPORTED_DEPTH` (strings skipped)."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth >= _REPORTED_DEPTH:
                return json.JSONDecodeError(
                    f"arrays or objects nested more than {_REPORTED_DEPTH - 1} levels deep",
                    text,
                    match.start(),
                )
        elif bracket in "]}":
            depth -= 1
    return json.JSONDecodeError("arrays or objects nested too deeply", text, 0)


def _locate_repeated_key(text: str, options: dict[str, Any], key: str) -> DuplicateKeyError:
    """The error for the first object of ``text`` that repeats a key, at the line where that
    object starts: ``text`` parsed again with the pure-Python scanner, whose object parser knows
    where each object starts. Only taken on the error path, so the fast C scanner serves all
    valid input."""
    decoder = json.JSONDecoder(**options)

    def parse_object(
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: Callable[[str, int], tuple[Any, int]],
        object_hook: Any,
        object_pairs_hook: Any,
        memo: dict[str, str] | None = None,
    ) -> tuple[Any, int]:
        document, start = s_and_end
        parse_members: Callable[..., tuple[Any, int]] = json_decoder.JSONObject  # type: ignore[attr-defined]
        try:
            return parse_members(s_and_end, strict, scan_once, object_hook, _unique_pairs, memo)
        except _RepeatedKey as repeated:
            raise DuplicateKeyError(
                f"the key {repeated.args[0]!r} appears twice in one object", document, start - 1
            ) from None

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json_scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except DuplicateKeyError as located:
        return located
    return DuplicateKeyError(f"the key {key!r} appears twice in one object", text, 0)
