"""Inputs larger than memory: fit a file block by block and stream the models out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from perfcast.api.modeling import fit_with_settings
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.model.distributed import DaskChunks
from perfcast.model.fitting.assembly import Skip
from perfcast.model.registry import make_modeler

if TYPE_CHECKING:
    from distributed import Client


#: Kernels per block when an input is read in blocks (:func:`fit_stream`): a fit's peak memory
#: grows by about 5 MiB per 1,000 one-parameter kernels, so a block stays near 300 MiB.
STREAM_KERNELS = 50_000


@dataclass(frozen=True)
class StreamedFit:
    """What :func:`fit_stream` wrote.

    Attributes
    ----------
    models : int
        Models written.
    blocks : int
        Blocks of kernels read and modeled.
    warned : int
        Models written with a warning of the quality gates.
    skipped : list of Skip
        Kernels whose data admitted no model.
    notes : list of str
        The fits' notes, each once.
    """

    models: int
    blocks: int
    warned: int
    skipped: list[Skip]
    notes: list[str]


def fit_stream(
    path: str | Path,
    target: str | Path | TextIO,
    *,
    kernels: int = STREAM_KERNELS,
    modeler: str = "pmnf",
    metric: str | Sequence[str] | None = None,
    every_metric: bool = False,
    strict: bool = False,
    client: Client | DaskChunks | None = None,
    format: str | None = None,  # noqa: A002 - as load's
    **settings: Any,
) -> StreamedFit:
    """Model an input larger than memory: read it in blocks of ``kernels`` whole kernels
    (Parquet tables by row groups, Extra-P JSON Lines line by line; each kernel's rows
    together, see :mod:`perfcast.io.kernel_blocks`), fit each block as :func:`fit` does and
    write its models to ``target`` before reading the next, as one model document (the JSON
    of :meth:`ModelSet.to_json`, which :meth:`ModelSet.from_json` reads).

    What a fit pools over the kernels of a series (the noise shape behind the location
    estimator, the noise prior, the series-wide search choices) is pooled over each block, as
    the backtests pool over blocks of 32,768 kernels: the models are those of :func:`fit` on
    each block on its own, and a note in the document says so when there was more than one.

    Parameters
    ----------
    path : str or Path
        A Parquet long table or an Extra-P JSON Lines file.
    target : str, Path or text stream
        A file (written under a temporary name and renamed when complete, so a failure leaves
        no partial document and an existing file as it was) or an open stream.
    kernels : int
        Kernels per block, 1 or more.
    modeler, strict, client, **settings
        As for :func:`fit` (``client``: each block is modeled on the cluster).
    metric : str or sequence of str, optional
        The metric(s) to model; by default each block's default metric (its only one, or
        ``time``).
    every_metric : bool
        Model every metric of each block instead.
    format : str, optional
        The input format (``table`` or ``extrap-jsonlines``); detected when None.

    Returns
    -------
    StreamedFit

    Raises
    ------
    InputError
        For bad input (naming the file and row or line), a format that is not read in blocks,
        a metric no block has, or when no kernel at all can be modeled.
    """
    import os
    import tempfile

    from perfcast.io import detect_format
    from perfcast.io.kernel_blocks import read_blocks

    if not Path(path).exists():
        raise InputError("no such file or directory", path)
    blocks = read_blocks(path, kernels, format or detect_format(path))
    estimator = make_modeler(modeler, **settings)  # settings checked before any output
    if not isinstance(target, str | Path):
        return _stream_blocks(
            blocks, target, estimator.get_params(), modeler, metric, every_metric, strict,
            client, kernels, str(path), settings,
        )  # fmt: skip
    directory = Path(target).resolve().parent
    try:
        handle, temporary = tempfile.mkstemp(prefix=".perfcast-", suffix=".json", dir=directory)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", target) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            summary = _stream_blocks(
                blocks, stream, estimator.get_params(), modeler, metric, every_metric, strict,
                client, kernels, str(path), settings,
            )  # fmt: skip
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return summary


def _stream_blocks(
    blocks: Iterable[Experiment],
    stream: TextIO,
    params: Mapping[str, Any],
    modeler: str,
    metric: str | Sequence[str] | None,
    every_metric: bool,
    strict: bool,
    client: Client | DaskChunks | None,
    kernels: int,
    source: str,
    settings: Mapping[str, Any],
) -> StreamedFit:
    """Fit every block and write its models (see :func:`fit_stream`)."""
    from perfcast.model.modelstream import ModelStreamWriter

    writer = ModelStreamWriter(stream, modeler, params, source)
    wanted = [metric] if isinstance(metric, str) else None if metric is None else list(metric)
    seen: set[str] = set()
    count = warned = 0
    for count, block in enumerate(blocks, start=1):  # noqa: B007 - the count is used below
        if every_metric:
            names = block.metric_names
        elif wanted is None:
            names = [block.default_metric()]
        else:
            names = [name for name in wanted if name in block.metric_names]
        seen.update(names)
        if not names:
            continue
        models = fit_with_settings(block, modeler, names, strict, False, client, settings)
        writer.add(models)
        warned += sum(1 for m in models.models if m.warnings)
    missing = [name for name in wanted or () if name not in seen]
    if missing:
        raise InputError(f"no metric '{missing[0]}' in any block", source, value=missing[0])
    if count > 1:
        writer.notes.append(
            f"read in {count} blocks of up to {kernels} kernels: the noise statistics and "
            "the series-wide choices of the search were pooled over each block, not the "
            "whole input"
        )
    if not writer.written and writer.skipped:  # as fit: no kernel at all could be modeled
        raise writer.skipped[0].error(source)
    writer.close()
    return StreamedFit(writer.written, count, warned, list(writer.skipped), list(writer.notes))
