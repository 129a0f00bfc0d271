"""Named regions for Python programs: ``perfcast.region("name")``.

A region is a context manager and a decorator::

    with perfcast.region("solve"):
        ...

    @perfcast.region("assemble")     # or @perfcast.region() to use the function's name
    def assemble(...): ...

Regions nest into call paths (``solve->assemble``); each thread records its own tree. At program
end, if the environment variable ``PERFCAST_OUTPUT`` names a file, the records are appended to it
in one write, one JSON object per line, the same contract as the C library (``perfcast.h``)::

    {"kernel": "solve->assemble", "metric": "time", "value": 0.12}
    {"kernel": "solve->assemble", "metric": "visits", "value": 10}

``time`` is inclusive seconds (the maximum over threads that entered the path), ``visits`` the
number of entries (summed over threads). ``PERFCAST_OUTPUT=-`` writes to stderr; unset, nothing is
written. A region that ends while another one is innermost is reported on stderr and ignored.

Limits: a region begins and ends in one thread. Decorating a generator function times only the
creation of the generator, and a generator suspended inside a ``with`` region leaves the region
open while its consumer runs (the consumer's regions then nest inside it).
"""

from __future__ import annotations

import atexit
import functools
import inspect
import json
import os
import sys
import threading
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _Node:
    __slots__ = ("name", "parent", "children", "visits", "total_ns", "start_ns")

    def __init__(self, name: str, parent: _Node | None) -> None:
        self.name = name
        self.parent = parent
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.total_ns = 0
        self.start_ns = 0

    def path(self) -> str:
        names = []
        node: _Node | None = self
        while node is not None and node.parent is not None:
            names.append(node.name)
            node = node.parent
        return "->".join(reversed(names))


class _Tree:
    __slots__ = ("root", "current")

    def __init__(self) -> None:
        self.root = _Node("", None)
        self.current = self.root


_local = threading.local()
_trees: list[_Tree] = []
_trees_lock = threading.Lock()


def _new_tree() -> _Tree:
    tree = _local.tree = _Tree()
    with _trees_lock:
        if not _trees:
            atexit.register(_write_at_exit)
        _trees.append(tree)
    return tree


class region:  # noqa: N801 - used like a function: perfcast.region("name")
    """A named region: context manager and function decorator.

    Parameters
    ----------
    name
        Region name. May be omitted when decorating: the function's qualified name is used.

    Examples
    --------
    >>> with region("solve"):
    ...     pass
    >>> @region()
    ... def assemble():
    ...     pass
    """

    __slots__ = ("name",)

    def __init__(self, name: str | None = None) -> None:
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"a region name must be a non-empty string, not {name!r}")
        self.name = name

    def __enter__(self) -> region:
        name = self.name
        if name is None:
            raise ValueError("region() without a name can only decorate a function")
        try:
            tree = _local.tree
        except AttributeError:
            tree = _new_tree()
        parent = tree.current
        node = parent.children.get(name)
        if node is None:
            node = parent.children[name] = _Node(name, parent)
        node.visits += 1
        tree.current = node
        node.start_ns = perf_counter_ns()
        return self

    def __exit__(self, *exc_info: object) -> None:
        now = perf_counter_ns()
        tree = getattr(_local, "tree", None)
        name = self.name
        if tree is None or tree.current is tree.root:
            print(
                f"perfcast: region {name!r} ends without an open region; ignored", file=sys.stderr
            )
            return
        node = tree.current
        if node.name != name:
            print(
                f"perfcast: region {name!r} ends while {node.name!r} is the innermost open region;"
                " ignored",
                file=sys.stderr,
            )
            return
        node.total_ns += now - node.start_ns
        tree.current = node.parent

    def __call__(self, function: F) -> F:
        timer = region(self.name or function.__qualname__)
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def timed_coroutine(*args: Any, **kwargs: Any) -> Any:
                with timer:
                    return await function(*args, **kwargs)

            return timed_coroutine  # type: ignore[return-value]

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with timer:
                return function(*args, **kwargs)

        return timed  # type: ignore[return-value]


def records(warn_open: bool = False) -> list[dict[str, Any]]:
    """The records of every region so far, merged over threads, in the output contract's form.

    Regions still open count their time up to now.

    Parameters
    ----------
    warn_open
        Report regions still open on stderr.

    Returns
    -------
    list of dict
        ``{"kernel", "metric", "value"}`` dicts: ``time`` (seconds, max over threads) and
        ``visits`` (summed over threads) for each call path, depth first, children in order
        of first entry.
    """
    now = perf_counter_ns()
    merged: dict[str, list[float]] = {}
    with _trees_lock:
        trees = list(_trees)
    for tree in trees:
        open_nodes = set()
        open_node: _Node | None = tree.current
        while open_node is not None and open_node is not tree.root:
            open_nodes.add(id(open_node))
            if warn_open:
                print(
                    f"perfcast: region {open_node.name!r} still open at the end of measurement;"
                    " its time is counted up to here",
                    file=sys.stderr,
                )
            open_node = open_node.parent
        stack = list(reversed(tree.root.children.values()))
        while stack:
            node = stack.pop()
            total = node.total_ns + (now - node.start_ns if id(node) in open_nodes else 0)
            entry = merged.setdefault(node.path(), [0.0, 0])
            entry[0] = max(entry[0], total * 1e-9)
            entry[1] += node.visits
            stack.extend(reversed(node.children.values()))
    result = []
    for path, (seconds, visits) in merged.items():
        result.append({"kernel": path, "metric": "time", "value": seconds})
        result.append({"kernel": path, "metric": "visits", "value": visits})
    return result


def write(target: str, warn_open: bool = False) -> None:
    """Append the records to ``target`` in one write (``"-"``: stderr).

    Parameters
    ----------
    target
        File to append to, created if missing.
    warn_open
        Report regions still open on stderr.
    """
    text = "".join(json.dumps(record) + "\n" for record in records(warn_open=warn_open))
    if not text:
        return
    if target == "-":
        sys.stderr.write(text)
        return
    data = text.encode()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _write_at_exit() -> None:
    target = os.environ.get("PERFCAST_OUTPUT")
    if not target:
        return
    try:
        write(target, warn_open=True)
    except OSError as error:
        print(f"perfcast: cannot write PERFCAST_OUTPUT {target!r}: {error}", file=sys.stderr)
