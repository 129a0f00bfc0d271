"""The registry of modelers: the one list that ``--modeler``, the Python API, the report and the
model JSON read.

Each entry names a modeler class by module and attribute, so listing the modelers imports none of
them (the hybrid modeler's module brings sympy and pandas).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfcast.model.base import SeriesModeler


@dataclass(frozen=True)
class ModelerEntry:
    """One registered modeler.

    Attributes
    ----------
    name : str
        The name ``--modeler``, :func:`perfcast.fit` and the model JSON use.
    module, attribute : str
        Where the class lives (imported on first use).
    summary : str
        One line for help texts and reports.
    needs_static : bool
        Whether the modeler needs a static analysis of the source (``report=`` setting).
    """

    name: str
    module: str
    attribute: str
    summary: str
    needs_static: bool = False

    def load(self) -> type[SeriesModeler]:
        """The modeler class."""
        cls: type[SeriesModeler] = getattr(importlib.import_module(self.module), self.attribute)
        return cls


REGISTRY: Mapping[str, ModelerEntry] = {
    entry.name: entry
    for entry in (
        ModelerEntry(
            "pmnf",
            "perfcast.model.pmnf",
            "PMNFModeler",
            "search of the performance model normal form, F-tested against the measured noise",
        ),
        ModelerEntry(
            "sparse",
            "perfcast.model.sparse",
            "SparseModeler",
            "EPMNF predictors and interactions screened by a positive LASSO, then refitted",
        ),
        ModelerEntry(
            "hybrid",
            "perfcast.model.hybrid",
            "HybridModeler",
            "candidate terms from a static analysis of the source, empirical where it stops",
            needs_static=True,
        ),
        ModelerEntry(
            "segmented",
            "perfcast.model.segmented",
            "SegmentedModeler",
            "one pmnf or sparse model per range of a parameter where the trend changes (F-test)",
        ),
    )
}


def modeler_names(*, standalone: bool = False) -> tuple[str, ...]:
    """Names of the registered modelers; ``standalone`` leaves out those needing static input."""
    return tuple(n for n, e in REGISTRY.items() if not (standalone and e.needs_static))


def modeler_entry(name: str) -> ModelerEntry:
    """The registry entry of ``name``.

    Raises
    ------
    ValueError
        When no modeler has that name (the message lists the registered ones).
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"modeler: unknown name {name!r}; registered: {', '.join(REGISTRY)}"
        ) from None


def make_modeler(name: str = "pmnf", **settings: Any) -> SeriesModeler:
    """A modeler by registered name, constructed (and so validated) with ``settings``.

    Raises
    ------
    ValueError
        For an unknown name or a setting outside its allowed range.
    TypeError
        For a setting the modeler does not take.
    """
    return modeler_entry(name).load()(**settings)
