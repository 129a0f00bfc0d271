"""Life-long online modeling: replay streams, serve spools, read the model store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError

if TYPE_CHECKING:
    from perfcast.io.online_store import ModelStore
    from perfcast.model.online import OnlineModeler


def open_store(url: str | Path, *, create: bool = True) -> ModelStore:
    """Open (creating or migrating as needed) a model store of online modeling.

    Parameters
    ----------
    url : str or Path
        A SQLite file (``runs.db`` or ``sqlite:///runs.db``) or a ``postgresql://`` URL.
    create : bool
        Create a missing SQLite file (else an :class:`InputError`).

    Returns
    -------
    ModelStore
        Close it with ``close()`` or use it in a ``with`` block.
    """
    from perfcast.io.online_store import ModelStore

    return ModelStore(url, create=create)


def online_modeler(
    *,
    modeler: str = "pmnf",
    batch: int = 512,
    store: ModelStore | None = None,
    application: str = "default",
    **settings: Any,
) -> OnlineModeler:
    """An online modeler, resumed from ``store``'s state of ``application`` when given.

    Parameters
    ----------
    modeler : str
        The registered modeler refitted on every batch.
    batch : int
        Measurements per kernel between model updates.
    store : ModelStore, optional
        Where earlier runs left models, statistics and back-off state.
    application : str
        The application's name in the store.
    **settings
        Settings of :class:`perfcast.model.online.OnlineModeler` (``backoff``, ``clusters``,
        ``seed``, ``exception_level``, ...) and of the modeler.
    """
    from perfcast.model.online import OnlineModeler, state_of

    online = OnlineModeler(modeler, batch, **settings)
    if store is not None:
        for item in store.read(application, history=0):
            online.resume(state_of(item, store.url))
    return online


def replay_stream(
    stream: str | Path,
    *,
    modeler: str = "pmnf",
    batch: int = 512,
    store: str | Path | None = None,
    application: str = "default",
    **settings: Any,
) -> list[dict[str, Any]]:
    """Feed a recorded measurement stream through the online modeler.

    The whole stream is read and checked first, so a malformed line changes nothing in the
    store. With a store, the modeler starts from its state and every completed batch is
    written at once (one transaction), so that an interrupted replay loses at most its
    unfinished batches.

    Parameters
    ----------
    stream : str or Path
        JSON Lines in arrival order (:mod:`perfcast.io.online_stream`).
    modeler, batch, application, **settings
        As :func:`online_modeler`.
    store : str or Path, optional
        A model store URL (see :func:`open_store`).

    Returns
    -------
    list of dict
        A summary per kernel of the stream (see :func:`render_online`); exception indices are
        the 0-based line numbers of the stream.

    Raises
    ------
    InputError
        For a malformed line (file and line named) or a bad store.
    """
    from perfcast.io.online_stream import read_stream
    from perfcast.model.online import Measurement

    records = list(read_stream(stream))
    opened = open_store(store) if store is not None else None
    try:
        online = online_modeler(
            modeler=modeler,
            batch=batch,
            store=opened,
            application=application,
            source=str(stream),
            **settings,
        )
        measurements = [
            Measurement(r.kernel, r.metric, r.params, r.value, r.index, r.skipped)
            if r.value is not None
            else r
            for r in records
        ]
        online.check(m for m in measurements if isinstance(m, Measurement))
        for measurement in measurements:
            done = online.batches_done
            if isinstance(measurement, Measurement):
                online.partial_fit([measurement])
            else:
                online.add_skipped(measurement.kernel, measurement.metric, measurement.skipped)
            if opened is not None and online.batches_done != done:
                opened.write(application, online.drain())
        online.finish()
        if opened is not None:
            opened.write(application, online.drain())
    finally:
        if opened is not None:
            opened.close()
    return online.summaries(touched_only=True)


def serve_spool(
    spool: str | Path,
    store: str | Path,
    *,
    application: str = "default",
    modeler: str = "pmnf",
    batch: int = 512,
    once: bool = False,
    poll: float = 0.2,
    should_stop: Callable[[], bool] | None = None,
    on_rejected: Callable[[str], None] | None = None,
    **settings: Any,
) -> int:
    """Collect the batches instrumented programs hand over through a spool directory.

    Each batch file (:mod:`perfcast.measure.online_spool`) is modeled with the program's
    back-off decisions taken as made, written to the store in one transaction and then deleted;
    the kernels' control files then tell the programs how many measurements to skip. A file
    that is not a valid stream is renamed ``*.rejected`` and reported through ``on_rejected``
    (the collector goes on). Partly filled batches are judged and stored when serving ends.

    Parameters
    ----------
    spool : str or Path
        The directory the programs write into (``PERFCAST_ONLINE_SPOOL``).
    store : str or Path
        The model store URL (see :func:`open_store`).
    application, modeler, batch, **settings
        As :func:`online_modeler`; ``batch`` should equal the programs' batch size.
    once : bool
        Process the files present and return, instead of waiting for more.
    poll : float
        Seconds between looks at the spool while waiting.
    should_stop : callable, optional
        Asked between files; serving ends when it returns True.
    on_rejected : callable, optional
        Called with a message for each rejected file.

    Returns
    -------
    int
        The number of batch files modeled.

    Raises
    ------
    InputError
        When ``spool`` exists but is no directory (reason ``bad-spool``), or for a bad store.
    """
    import time

    from perfcast.io.online_batch import SUFFIX, read_batch_file
    from perfcast.io.online_stream import read_stream
    from perfcast.measure.online_spool import pending_batches, write_control
    from perfcast.model.online import Measurement

    processed = 0
    if Path(spool).exists() and not Path(spool).is_dir():
        # a missing spool is waited for (the programs create it); a file never becomes one
        raise InputError("the spool is not a directory", spool, reason="bad-spool")
    with open_store(store) as opened:
        online = online_modeler(
            modeler=modeler, batch=batch, store=opened, application=application, **settings
        )
        while not (should_stop is not None and should_stop()):
            files = pending_batches(spool)
            for path in files:
                try:
                    binary = path.suffix == SUFFIX
                    records = read_batch_file(path) if binary else list(read_stream(path))
                    measurements = [
                        Measurement(r.kernel, r.metric, r.params, r.value, r.index, r.skipped)
                        for r in records
                        if r.value is not None
                    ]
                    online.check(measurements)
                except InputError as error:
                    path.rename(path.with_suffix(".rejected"))
                    if on_rejected is not None:
                        on_rejected(str(error))
                    continue
                online.partial_fit(measurements, taken=True)
                for record in records:
                    if record.value is None:
                        online.add_skipped(record.kernel, record.metric, record.skipped)
                opened.write(application, online.drain())
                for key in {(m.kernel, m.metric) for m in measurements}:
                    state = online.states_[key]
                    write_control(spool, key[0], key[1], state.batches, state.skip_left)
                path.unlink()
                processed += 1
                if should_stop is not None and should_stop():
                    break
            if once:
                break
            if not files:
                time.sleep(poll)
        online.finish()
        opened.write(application, online.drain())
    return processed


def read_clusters(path: str | Path) -> list[list[str]]:
    """Similarity clusters for online modeling from a file: the JSON of ``perfcast static
    --format json`` (its ``clusters``) or a JSON list of lists of kernel names.

    Raises
    ------
    InputError
        When the file cannot be read, holds neither form, or names a kernel in two clusters
        (reason ``bad-clusters``).
    """
    from perfcast.core.jsonin import parse_json

    try:
        data = parse_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(
            f"cannot read the clusters ({error})", path, reason="bad-clusters"
        ) from None
    clusters = data.get("clusters") if isinstance(data, dict) else data
    valid = isinstance(clusters, list) and all(
        isinstance(c, list) and c and all(isinstance(k, str) for k in c) for c in clusters
    )
    if not valid:
        raise InputError(
            "expected a static report with 'clusters' or a list of lists of kernel names",
            path,
            reason="bad-clusters",
        )
    assert isinstance(clusters, list)  # checked above
    seen: dict[str, int] = {}
    for number, cluster in enumerate(clusters, start=1):
        for kernel in cluster:
            if seen.setdefault(kernel, number) != number:
                raise InputError(
                    f"kernel {kernel!r} is in cluster {seen[kernel]} and cluster {number}: "
                    "a kernel belongs to one cluster",
                    path,
                    reason="bad-clusters",
                    value=kernel,
                )
    return [list(c) for c in clusters]


def stored_models(store: str | Path, *, application: str = "default") -> list[dict[str, Any]]:
    """The kernels of ``application`` in a model store, summarized as :func:`replay_stream`
    does (the latest 10,000 judgements and exceptions of each kernel; an exception's index is
    its line in the stream or spool file it came from).

    Raises
    ------
    InputError
        For a bad store or an application the store does not hold.
    """
    from perfcast.model.online import OnlineModeler, state_of

    with open_store(store, create=False) as opened:
        items = opened.read(application, history=10000)
        if not items:
            known = ", ".join(opened.applications()) or "none"
            raise InputError(
                f"the store holds no application '{application}' (it holds: {known})",
                str(store),
                reason="unknown-application",
                value=application,
            )
        online = OnlineModeler()
        for item in items:
            online.resume(state_of(item, str(store)))
    return online.summaries()


def render_online(summaries: Sequence[Mapping[str, Any]], format: str = "text") -> str:  # noqa: A002
    """Text or JSON (``{"kernels": [...]}``) of :func:`replay_stream`'s or
    :func:`stored_models`' summaries."""
    from perfcast.display.online import render_online as render_summaries

    return render_summaries([dict(s) for s in summaries], format)
