"""Pausing Python's cyclic garbage collector while much is made and nothing is garbage."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration of the block.

    Meant for work that makes many objects that stay alive: an analysis holding a unit's tens
    of thousands of cursors, or the import of a large package (sympy's classes and caches).
    Each collection pass there would only re-scan live objects (a third of the time of a
    static analysis of a 4,000-line file; a sixth of ``import sympy``). Reference counting
    still frees what is dropped; cycles wait for the first pass after the block. The
    collector is enabled again at the end only when it was enabled at the start.

    Examples
    --------
    >>> with collector_paused():
    ...     table = {n: [n] for n in range(1000)}
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
