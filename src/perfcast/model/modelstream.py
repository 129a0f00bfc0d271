"""One model document written block by block: the models of an input read in blocks of
kernels (:mod:`perfcast.io.kernel_blocks`) go out as each block is modeled.

The document is the one :meth:`ModelSet.to_json <perfcast.model.modelset.ModelSet.to_json>`
writes (same format, version and model layout, read by :meth:`ModelSet.from_json`), with its
fields in another order: what is known before the first block (format, version, modeler,
source) comes first, then the models as they arrive, and what is known only after the last
block (skipped kernels, measured ranges, notes) last. JSON objects have no order, so readers
see the same document.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

from perfcast.core.jsonout import dumps
from perfcast.model.fitting.assembly import Skip
from perfcast.model.modelset import ModelSet


class ModelStreamWriter:
    """Writes the models of many :class:`ModelSet` as one model document to ``stream``.

    Parameters
    ----------
    stream : text stream
        Where the document goes; written as models arrive.
    modeler : str
        The modeler's name, as in :attr:`ModelSet.modeler`.
    settings : mapping
        Its settings.
    source : str, optional
        The input file.

    Attributes
    ----------
    written : int
        Models written so far.
    skipped : list of Skip
        Kernels the fits skipped so far.
    notes : list of str
        The fits' notes so far, each once, in order of appearance.
    """

    def __init__(
        self, stream: TextIO, modeler: str, settings: Mapping[str, Any], source: str | None
    ):
        self.stream = stream
        self.written = 0
        self.skipped: list[Skip] = []
        self.notes: list[str] = []
        self._ranges: dict[str, tuple[float, float]] = {}
        self._head = ModelSet([], modeler=modeler, settings=settings, source=source).to_dict()
        self.stream.write("{")
        for key in ("format", "version", "modeler", "source"):
            self._field(key, self._head[key])
        self.stream.write(',\n  "models": [')

    def add(self, models: ModelSet) -> None:
        """Write the models of ``models`` and keep its skipped kernels, ranges and notes."""
        for model in models.models:
            self.stream.write(("," if self.written else "") + "\n    ")
            self.stream.write(dumps(model.to_dict()).replace("\n", "\n    "))
            self.written += 1
        self.skipped.extend(models.skipped)
        self.notes.extend(note for note in models.notes if note not in self.notes)
        for name, (low, high) in models.ranges.items():
            known = self._ranges.get(name, (low, high))
            self._ranges[name] = (min(low, known[0]), max(high, known[1]))

    def close(self) -> None:
        """Finish the document: the skipped kernels, the measured ranges and the notes."""
        self.stream.write("\n  ]" if self.written else "]")
        tail = ModelSet(
            [],
            modeler=self._head["modeler"]["name"],
            ranges=self._ranges,
            notes=self.notes,
            skipped=self.skipped,
        ).to_dict()
        self.stream.write(',\n  "skipped": ')
        self.stream.writelines(_items(tail["skipped"]))
        for key in ("ranges", "notes"):
            self._field(key, tail[key], first=False)
        self.stream.write("\n}\n")

    def _field(self, key: str, value: Any, first: bool | None = None) -> None:
        comma = "" if first or (first is None and key == "format") else ","
        self.stream.write(f"{comma}\n  {json.dumps(key)}: " + dumps(value).replace("\n", "\n  "))


def _items(values: list[Any]) -> Iterator[str]:
    """A JSON list item by item, indented as a field of the document."""
    if not values:
        yield "[]"
        return
    for index, value in enumerate(values):
        yield ("," if index else "[") + "\n    " + dumps(value).replace("\n", "\n    ")
    yield "\n  ]"
