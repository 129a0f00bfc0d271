"""Modeling on a Dask cluster: the kernels of every series modeled in chunks on its workers.

The statistics of a series (location estimates, the noise prior) are computed in the calling
process from all its kernels; each chunk of :attr:`DaskChunks.kernels_per_chunk` kernels then
goes straight to a worker with those statistics and comes back as finished models (quality
gates, backtests and selection spread added there, see
:meth:`perfcast.model.base.SeriesModeler.fit_finished`), the models a fit in one process
gives, bit for bit. At most :attr:`DaskChunks.in_flight` chunks are submitted at once, so the
calling process never holds a second copy of all the data.

``dask.distributed`` is an optional dependency (the ``distributed`` extra), imported only here
and only when a cluster is asked for.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import pickle
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from perfcast.core.errors import WorkError
from perfcast.model.fitting.selection import CHUNK_KERNELS

if TYPE_CHECKING:
    from distributed import Client

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Seconds to wait for a scheduler to answer before giving up.
CONNECT_TIMEOUT = 10.0
#: Largest TCP port number.
MAX_PORT = 65535
#: Chunks submitted per worker before the first result is awaited.
CHUNKS_PER_WORKER = 2


class DaskChunks:
    """Runs modeling chunks on the workers of a Dask client (a
    :class:`~perfcast.model.base.ChunkMap`).

    Parameters
    ----------
    client : distributed.Client
        Connected to a scheduler with at least one worker.
    kernels_per_chunk : int
        Kernels of a series modeled by one task; a multiple of the search's own chunk
        (:data:`~perfcast.model.fitting.selection.CHUNK_KERNELS`) by default, 1 or more.
    """

    def __init__(self, client: Client, kernels_per_chunk: int = CHUNK_KERNELS):
        if not isinstance(kernels_per_chunk, int) or kernels_per_chunk < 1:
            raise ValueError(
                f"kernels_per_chunk: must be a whole number >= 1, not {kernels_per_chunk!r}"
            )
        self.client = client
        self.kernels_per_chunk = kernels_per_chunk
        #: Tasks submitted so far (chunks, backtest blocks, chunks modeled again).
        self.submitted = 0

    @property
    def in_flight(self) -> int:
        """Most chunks submitted and not yet collected: two per worker."""
        workers = len(self.client.scheduler_info(n_workers=-1).get("workers", {}))
        return CHUNKS_PER_WORKER * max(workers, 1)

    def map(self, function: Callable[[Item], Result], items: Iterable[Item]) -> Iterator[Result]:
        """``function`` of every item, run on the workers, yielded in the order of ``items``.

        Raises
        ------
        WorkError
            When a worker died while running a chunk, or the scheduler went away.
        """
        # Data and results go straight between this process and the workers, not through the
        # scheduler (unless the configuration says distributed.client.direct-to-workers: false).
        direct = self.client.direct_to_workers is not False
        packed = functools.partial(run_packed, function)
        pending: collections.deque = collections.deque()
        try:
            limit = self.in_flight
            for item in items:
                # Not inside the task graph: the task then runs where its data is.
                [data] = self.client.scatter([item], hash=False, direct=direct)
                pending.append(self.client.submit(packed, data, pure=False))
                self.submitted += 1
                if len(pending) >= limit:
                    yield pickle.loads(self.client.gather(pending.popleft(), direct=direct))
            while pending:
                yield pickle.loads(self.client.gather(pending.popleft(), direct=direct))
        except (OSError, TimeoutError) as error:
            raise WorkError(f"the Dask cluster failed while modeling: {error}") from error
        except Exception as error:
            if type(error).__name__ == "KilledWorker":
                raise WorkError(f"a Dask worker died while modeling: {error}") from error
            # When the scheduler goes away mid-run, distributed cancels every task and its
            # client fails in whatever call comes next (an AttributeError inside scatter).
            if isinstance(error, concurrent.futures.CancelledError) or (
                self.client.status != "running"
            ):
                raise WorkError(
                    "the Dask cluster failed while modeling: the connection to the scheduler "
                    f"was lost ({type(error).__name__})"
                ) from error
            raise
        finally:
            for future in pending:
                future.cancel()


def run_packed(function: Callable[[Item], Result], item: Item) -> bytes:
    """``function(item)`` pickled into one buffer, for a worker to send back.

    Dask would send each array of a result (a covariance per model) as a frame of its own,
    thousands per chunk, and the calling process's share of the work is mostly unpacking
    them: one buffer is unpickled at a fraction of that cost.
    """
    return pickle.dumps(function(item), protocol=pickle.HIGHEST_PROTOCOL)


def scheduler_address(text: str) -> str:
    """``text`` checked as the address of a Dask scheduler: ``PROTOCOL://HOST:PORT`` with a
    protocol of ``dask.distributed`` that has hosts and ports (``tcp``, ``tls``, ``ws``,
    ``wss``), or ``HOST:PORT`` (``tcp``), the port 1 to 65535.

    Parameters
    ----------
    text : str
        E.g. ``tcp://10.0.0.1:8786``.

    Returns
    -------
    str
        The address with its protocol (``tcp://`` added where there was none).

    Raises
    ------
    ValueError
        Naming the address and what is wrong with it. Without ``dask.distributed`` only the
        form is checked (connecting then says the package is missing).
    """
    form = "PROTOCOL://HOST:PORT, e.g. tcp://10.0.0.1:8786"
    address = text if "://" in text else f"tcp://{text}"
    protocol, _, location = address.partition("://")
    host, colon, port = location.rpartition(":")
    if not (protocol and host.strip("[]") and colon and port.isascii() and port.isdigit()):
        raise ValueError(f"scheduler address '{text}' is not {form}")
    if not 1 <= int(port) <= MAX_PORT:
        raise ValueError(f"scheduler address '{text}': port {port} is not in 1..{MAX_PORT}")
    try:
        from distributed.comm.registry import get_backend
    except ImportError:
        return address
    try:
        get_backend(protocol).get_address_host_port(location)
    except (ValueError, NotImplementedError):
        raise ValueError(
            f"scheduler address '{text}': '{protocol}' is not a protocol of dask.distributed "
            "with hosts and ports (tcp, tls, ws, wss)"
        ) from None
    return address


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Client]:
    """A Dask client: connected to ``scheduler``, or to a local cluster of ``workers``
    processes (one thread each) started here and stopped on leaving the block.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler, e.g. ``tcp://10.0.0.1:8786``.
    workers : int, optional
        Worker processes of a local cluster, when there is no ``scheduler``; 1 or more.

    Raises
    ------
    WorkError
        When ``dask.distributed`` is not installed, or the scheduler cannot be reached within
        :data:`CONNECT_TIMEOUT` seconds.
    ValueError
        When neither or both of ``scheduler`` and ``workers`` are given, ``workers < 1``, or
        ``scheduler`` is not an address (:func:`scheduler_address`).
    """
    if (scheduler is None) == (workers is None):
        raise ValueError("cluster: give either a scheduler address or a number of workers")
    if scheduler is not None:
        scheduler = scheduler_address(scheduler)
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers: must be a whole number >= 1, not {workers!r}")
    try:
        import distributed
    except ImportError:
        raise WorkError(
            "distributed modeling needs the dask.distributed package "
            "(pip install 'perfcast[distributed]')"
        ) from None
    if scheduler is not None:
        _check_handshake(scheduler)
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as error:
            raise WorkError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
        with client:
            yield client
        return
    with (
        distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _check_handshake(scheduler: str) -> None:
    """Connect to ``scheduler`` once, handshake included, within :data:`CONNECT_TIMEOUT`.

    ``distributed.Client`` bounds only the opening of the connection: a server at that address
    that is no Dask scheduler (a web server, the dashboard's port) answers the handshake with
    bytes read as a frame length, and the client then waits for ever or tries to allocate
    exabytes. Here the whole handshake has a deadline and any failure of it is the scheduler
    being unreachable.

    Raises
    ------
    WorkError
        Naming the address, when no Dask scheduler answered there in time.
    """
    import distributed
    from distributed.comm import connect

    arguments = distributed.Security().get_connection_args("client")

    async def handshake() -> None:
        comm = await connect(scheduler, timeout=CONNECT_TIMEOUT, **arguments)
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(handshake(), CONNECT_TIMEOUT))
    except (OSError, TimeoutError) as error:
        reason = str(error) or f"no answer to the handshake within {CONNECT_TIMEOUT:g} s"
        raise WorkError(f"cannot reach the Dask scheduler at {scheduler}: {reason}") from None
    except (Exception, MemoryError) as error:
        raise WorkError(
            f"cannot reach the Dask scheduler at {scheduler}: the server there did not answer "
            f"as a Dask scheduler does ({type(error).__name__})"
        ) from None
