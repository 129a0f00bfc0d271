"""Text shown on a terminal cannot drive it: control characters from input are made visible.

Kernel names, file names and values come from input files; printed raw, an escape sequence in
a kernel name could recolour, move the cursor, retitle or clear the user's terminal, and Unicode
direction overrides could reorder what a line seems to say. :func:`visible` spells such
characters as Python escapes (``\\x1b``, ``\\u202e``); :class:`VisibleStream` applies it to
everything written to a stream that is a terminal. Files and pipes get the exact text.
"""

from __future__ import annotations

from typing import TextIO

_DIRECTION_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0), *_DIRECTION_CONTROLS)
    if chr(code) not in "\n\t"
}


def visible(text: str) -> str:
    """``text`` with control and direction-override characters (not newline or tab) escaped.

    Parameters
    ----------
    text : str
        Text that may hold characters from input.

    Returns
    -------
    str
        The same text, safe to show on a terminal.
    """
    return text.translate(_CONTROLS)


class VisibleStream:
    """A text stream writing :func:`visible` text to the terminal stream it wraps.

    Parameters
    ----------
    stream : TextIO
        The terminal's stream (``sys.stdout`` or ``sys.stderr``).
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters escaped; returns the length of ``text``."""
        self._stream.write(visible(text))
        return len(text)

    @property
    def terminal(self) -> TextIO:
        """The wrapped stream, for writers that send their own control sequences."""
        return self._stream

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
