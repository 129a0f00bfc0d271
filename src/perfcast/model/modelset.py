"""What a fit produces: the models of every kernel and metric, and how they were made.

A :class:`ModelSet` maps kernel -> metric -> :class:`~perfcast.core.function.Model`. Iterating
it gives the kernels, most expensive first at its cost point; it predicts, renders a table
(pandas), plots one kernel (matplotlib) and round-trips through JSON that records the modeler,
its settings and the format version.

The JSON document (format ``perfcast-models``, version 1) holds ``format``, ``version``,
``modeler`` (``name``, ``settings``), ``source``, ``ranges``, ``notes``, ``models`` and
``skipped``: the kernels whose data admitted no model, each ``{"kernel", "metric", "reason"}``.
``skipped`` came after the first documents of version 1; readers treat it as optional (absent:
none skipped), so the version did not change. The same holds for each model's ``warnings`` (a
list of ``{"code", "message"}`` from :mod:`perfcast.model.gates`; absent: none).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.function import Model
from perfcast.core.jsonin import parse_json
from perfcast.core.jsonout import dumps
from perfcast.core.points import plain_value
from perfcast.model.fitting.assembly import Skip
from perfcast.model.predict import Prediction, predict

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from perfcast.core.experiment import Experiment

#: The ``format`` field of model JSON documents.
FORMAT_NAME = "perfcast-models"
#: The version this perfcast writes; documents of a higher version are refused.
FORMAT_VERSION = 1


class ModelSet(Mapping[str, Mapping[str, Model]]):
    """Models by kernel and metric, with the modeler and settings that produced them.

    Parameters
    ----------
    models : iterable of Model
        At most one model per kernel and metric.
    modeler : str, optional
        Registered name of the modeler that fitted them.
    settings : mapping, optional
        The modeler's settings (:meth:`~perfcast.model.base.SeriesModeler.get_params`).
    point : mapping of str to float, optional
        Where cost is judged when ordering kernels; default: every parameter at the largest
        value any model was measured at, when known (see ``ranges``), else 1.
    ranges : mapping of str to (float, float), optional
        Smallest and largest measured value of each parameter (used by :meth:`plot` and for
        the default cost point).
    source : str, optional
        Where the measurements came from.
    notes : sequence of str, optional
        What a user should know about the fit (e.g. how point values were estimated).
    skipped : sequence of Skip, optional
        Kernels the fit left out because their data admits no model, with the reason.

    Raises
    ------
    ValueError
        When two models share a kernel and metric.
    """

    def __init__(
        self,
        models: Iterable[Model],
        *,
        modeler: str | None = None,
        settings: Mapping[str, Any] | None = None,
        point: Mapping[str, float] | None = None,
        ranges: Mapping[str, tuple[float, float]] | None = None,
        source: str | None = None,
        notes: Sequence[str] = (),
        skipped: Sequence[Skip] = (),
    ) -> None:
        self._models: dict[str, dict[str, Model]] = {}
        self._order: list[Model] = []
        for model in models:
            per_kernel = self._models.setdefault(model.kernel, {})
            if model.metric in per_kernel:
                raise ValueError(
                    f"models: two models of kernel {model.kernel!r}, metric {model.metric!r}"
                )
            per_kernel[model.metric] = model
            self._order.append(model)
        self.modeler = modeler
        self.settings = dict(settings or {})
        self.ranges = {k: (float(lo), float(hi)) for k, (lo, hi) in (ranges or {}).items()}
        self.source = source
        self.notes = list(notes)
        self.skipped = list(skipped)
        self.point = dict(point) if point is not None else self._default_point()

    # --- mapping -------------------------------------------------------------------------------

    def __getitem__(self, kernel: str) -> Mapping[str, Model]:
        return MappingProxyType(self._models[kernel])

    def __len__(self) -> int:
        return len(self._models)

    def __iter__(self) -> Iterator[str]:
        """Kernels, most expensive first at :attr:`point` (see :meth:`ranked`); kernels without
        a model of the cost metric follow in the order given."""
        ranked = [model.kernel for model in self.ranked()]
        seen = set(ranked)
        return iter(ranked + [k for k in self._models if k not in seen])

    def __repr__(self) -> str:
        parameters = ", ".join(self.parameters) or "none"
        return (
            f"<ModelSet {self.source or 'in memory'!r}: {len(self)} kernels, "
            f"metrics {', '.join(self.metrics) or 'none'}, parameters {parameters}, "
            f"modeler {self.modeler or 'unknown'}>"
        )

    # --- contents ------------------------------------------------------------------------------

    @property
    def models(self) -> list[Model]:
        """Every model, in the order given (as fitted: metric by metric, kernels in the
        experiment's order)."""
        return list(self._order)

    @property
    def metrics(self) -> list[str]:
        """Metric names in order of first appearance."""
        return list(dict.fromkeys(m.metric for m in self.models))

    @property
    def parameters(self) -> tuple[str, ...]:
        """Parameter names of the models (of the first model; all share them)."""
        models = self.models
        return models[0].parameters if models else ()

    def cost_metric(self) -> str:
        """The metric kernels are ranked by: ``time`` when modeled, else the first one.

        Raises
        ------
        InputError
            When the set is empty.
        """
        metrics = self.metrics
        if not metrics:
            raise InputError("the model set is empty", self.source)
        return "time" if "time" in metrics else metrics[0]

    def of_metric(self, metric: str) -> list[Model]:
        """The models of one metric, in fitting order.

        Raises
        ------
        InputError
            When no model has that metric (the error's ``value`` is the metric).
        """
        chosen = [m for m in self.models if m.metric == metric]
        if not chosen:
            raise InputError(
                f"no models of metric '{metric}' (have {', '.join(self.metrics) or 'none'})",
                self.source,
                reason="unknown-metric",
                value=metric,
            )
        return chosen

    def skipped_kernels(self, metric: str) -> list[str]:
        """The kernels skipped for ``metric`` (their data admitted no model)."""
        return [skip.kernel for skip in self.skipped if skip.metric == metric]

    def for_experiment(self, experiment: Experiment, metric: str) -> ModelSet:
        """The models of ``metric`` for the kernels of ``experiment``, one for each kernel that
        was not skipped (the skipped ones stay listed in :attr:`skipped`).

        Raises
        ------
        InputError
            When a kernel of the experiment that was not skipped has no model of that metric
            (``value``: the kernel).
        """
        kernels = set(experiment.kernels)
        chosen = [m for m in self.models if m.metric == metric and m.kernel in kernels]
        skipped = [s for s in self.skipped if s.metric == metric and s.kernel in kernels]
        missing = sorted(kernels - {m.kernel for m in chosen} - {s.kernel for s in skipped})
        if missing:
            raise InputError(
                f"no {metric} model for kernel '{missing[0]}' of the experiment",
                self.source,
                reason="missing-model",
                value=missing[0],
            )
        return ModelSet(
            chosen,
            modeler=self.modeler,
            settings=self.settings,
            ranges=self.ranges or measured_ranges(experiment),
            source=self.source,
            notes=self.notes,
            skipped=skipped,
        )

    def ranked(
        self, at: Mapping[str, float] | None = None, metric: str | None = None
    ) -> list[Model]:
        """Models of one metric, most expensive first at ``at`` (default :attr:`point`).

        Parameters
        ----------
        at : mapping of str to float, optional
            A value for every parameter.
        metric : str, optional
            Default: :meth:`cost_metric`.

        Raises
        ------
        InputError
            When ``at`` misses a parameter of the models.
        """
        if not self._models:
            return []
        point = dict(self.point if at is None else at)
        missing = [p for p in self.parameters if p not in point]
        if missing:
            raise InputError(
                f"the point {point} has no value of {', '.join(missing)}",
                self.source,
                reason="bad-point",
                value=point,
            )
        models = self.of_metric(metric or self.cost_metric())
        coordinates = np.array([[point[p] for p in models[0].parameters]], dtype=float)
        costs = [float(m.evaluate(coordinates)[0]) for m in models]
        order = sorted(range(len(models)), key=lambda i: -_finite_or_low(costs[i]))
        return [models[i] for i in order]

    def predict(
        self, at: Mapping[str, float], *, metric: str | None = None, level: float = 0.95
    ) -> list[Prediction]:
        """Predictions with intervals of every model of ``metric`` at ``at``, most expensive first.

        Parameters
        ----------
        at : mapping of str to float
            A positive value for every parameter.
        metric : str, optional
            Default: :meth:`cost_metric`.
        level : float
            Probability of the prediction interval.

        Each prediction carries an ``extrapolation`` warning where ``at`` lies far beyond
        :attr:`ranges` (see :mod:`perfcast.model.predict`).

        Raises
        ------
        InputError
            When ``at`` misses a parameter, names an unknown one or has a non-positive value.
        """
        return predict(self.of_metric(metric or self.cost_metric()), dict(at), level, self.ranges)

    # --- JSON ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as plain data (format, version, modeler, settings, models, skipped
        kernels)."""
        return {
            **self._document_head(),
            "models": [m.to_dict() for m in self.models],
            "skipped": [skip.to_dict() for skip in self.skipped],
        }

    def _document_head(self) -> dict[str, Any]:
        """The fields of :meth:`to_dict` before the models."""
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "modeler": {"name": self.modeler, "settings": _plain_settings(self.settings)},
            "source": self.source,
            "ranges": {k: [plain_value(v) for v in pair] for k, pair in self.ranges.items()},
            "notes": self.notes,
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """Strict JSON text of :meth:`to_dict` (no NaN); also written to ``path`` when given.

        Raises
        ------
        InputError
            When ``path`` cannot be written.
        """
        text = "".join(self._json_pieces())
        if path is not None:
            try:
                Path(path).write_text(text, encoding="utf-8")
            except OSError as error:
                raise InputError(f"cannot write: {error.strerror}", path) from None
        return text

    def write_json(self, target: str | Path | TextIO) -> None:
        """Write the text of :meth:`to_json` to a file or stream one model at a time, so that
        a set of many models is never held as one string.

        Raises
        ------
        InputError
            When ``target`` is a path that cannot be written.
        """
        if not isinstance(target, str | Path):
            target.writelines(self._json_pieces())
            return
        try:
            with Path(target).open("w", encoding="utf-8") as stream:
                stream.writelines(self._json_pieces())
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror}", target) from None

    def _json_pieces(self) -> Iterator[str]:
        """The text of :meth:`to_dict` as ``json.dumps(..., indent=2)`` writes it, in pieces:
        the lists of models and skipped kernels item by item."""
        head = self._document_head()
        lists = {
            "models": (m.to_dict() for m in self.models),
            "skipped": (skip.to_dict() for skip in self.skipped),
        }
        yield "{"
        for index, key in enumerate([*head, *lists]):
            yield ("," if index else "") + f"\n  {json.dumps(key)}: "
            if key in head:
                yield dumps(head[key]).replace("\n", "\n  ")
                continue
            empty = True
            for item in lists[key]:
                yield ("[" if empty else ",") + "\n    " + dumps(item).replace("\n", "\n    ")
                empty = False
            yield "[]" if empty else "\n  ]"
        yield "\n}\n"

    @classmethod
    def from_json(
        cls, text: str | bytes | Mapping[str, Any], source: str | None = None
    ) -> ModelSet:
        """Rebuild a model set from :meth:`to_json` output (or its parsed form).

        Documents without a version (perfcast 0.1 wrote ``{"models": [...]}``) are read as
        version 1, which has the same model layout.

        Raises
        ------
        InputError
            When the text is not JSON, not a model document, of a newer format version, or a
            model in it is malformed (naming the model's position).
        """
        if isinstance(text, Mapping):
            data: Any = text
        else:
            try:
                data = parse_json(text)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise InputError(f"not JSON: {error}", source) from None
        if isinstance(data, list):
            data = {"models": data}
        if not isinstance(data, Mapping) or not isinstance(data.get("models"), list):
            raise InputError('not a model document: expected {"models": [...]}', source)
        version = data.get("version", FORMAT_VERSION)
        if data.get("format", FORMAT_NAME) != FORMAT_NAME:
            raise InputError(f"not a model document: format is {data['format']!r}", source)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise InputError(f"model document with an invalid format version {version!r}", source)
        if version > FORMAT_VERSION:
            raise InputError(
                f"model document of format version {version}, written by a newer perfcast; "
                f"this one reads versions up to {FORMAT_VERSION}",
                source,
            )
        models = []
        for index, item in enumerate(data["models"], start=1):
            where = f"{source}: model {index}" if source else f"model {index}"
            if not isinstance(item, Mapping):
                raise InputError("not an object", where)
            models.append(Model.from_dict(item, source=where))
        modeler = data.get("modeler") or {}
        ranges = data.get("ranges") or {}
        try:
            return cls(
                models,
                modeler=modeler.get("name") if isinstance(modeler, Mapping) else None,
                settings=modeler.get("settings") if isinstance(modeler, Mapping) else None,
                ranges=_ranges(ranges),
                source=data.get("source") or source,
                notes=[str(note) for note in data.get("notes") or []],
                skipped=_skips(data.get("skipped"), source),
            )
        except (TypeError, ValueError, IndexError, AttributeError) as error:
            raise InputError(f"malformed model document: {error}", source) from None

    @classmethod
    def load(cls, path: str | Path) -> ModelSet:
        """Read a model document written by :meth:`to_json` or ``perfcast model --format json``.

        Raises
        ------
        InputError
            When the file cannot be read or is not a valid model document.
        """
        try:
            text = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", path) from None
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", path) from None
        return cls.from_json(text, source=str(path))

    # --- tables and plots ----------------------------------------------------------------------

    def to_frame(self) -> pd.DataFrame:
        """One row per model: kernel, metric, expression, terms, quality and the predicted cost
        at :attr:`point` (pandas)."""
        import pandas as pd

        rows = []
        for model in self.models:
            quality = model.quality.to_dict() if model.quality is not None else {}
            coordinates = np.array([[self.point[p] for p in model.parameters]], dtype=float)
            rows.append(
                {
                    "kernel": model.kernel,
                    "metric": model.metric,
                    "expression": model.expression(),
                    "terms": len(model.terms),
                    "cost_at_point": float(model.evaluate(coordinates)[0]),
                    **quality,
                }
            )
        return pd.DataFrame(rows)

    def plot(
        self,
        kernel: str,
        metric: str | None = None,
        ax: Axes | None = None,
        experiment: Experiment | None = None,
    ) -> Axes:
        """Draw one kernel's model over its first parameter (the others at :attr:`point`).

        Parameters
        ----------
        kernel : str
        metric : str, optional
            Default: the kernel's only metric, or :meth:`cost_metric`.
        ax : matplotlib Axes, optional
            Drawn into; a new figure's when None.
        experiment : Experiment, optional
            Its measured means of the kernel are drawn as points too.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        InputError
            When the kernel or metric has no model.
        """
        import matplotlib.pyplot as plt

        model = self._model(kernel, metric)
        x_name = model.parameters[0]
        low, high = self.ranges.get(x_name, (1.0, float(self.point[x_name])))
        xs = np.geomspace(max(low, 1e-12), max(high * 2, low * 2, 2.0), 200)
        grid = np.array(
            [[x if p == x_name else self.point[p] for p in model.parameters] for x in xs]
        )
        if ax is None:
            _, ax = plt.subplots()
        ax.plot(xs, model.evaluate(grid), label=f"model: {model.expression(digits=3)}")
        if experiment is not None:
            _plot_measured(ax, experiment, model, x_name, self.point)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(x_name)
        ax.set_ylabel(model.metric)
        ax.set_title(kernel if len(kernel) <= 60 else kernel[:57] + "...")
        ax.legend(loc="best", fontsize="small")
        return ax

    def _model(self, kernel: str, metric: str | None) -> Model:
        per_kernel = self._models.get(kernel)
        if per_kernel is None:
            raise InputError(f"no model of kernel '{kernel}'", self.source)
        if metric is None:
            metric = next(iter(per_kernel)) if len(per_kernel) == 1 else self.cost_metric()
        if metric not in per_kernel:
            raise InputError(f"kernel '{kernel}' has no model of metric '{metric}'", self.source)
        return per_kernel[metric]

    def _default_point(self) -> dict[str, float]:
        return {p: self.ranges.get(p, (1.0, 1.0))[1] for p in self.parameters}


def measured_ranges(experiment: Experiment) -> dict[str, tuple[float, float]]:
    """Smallest and largest measured value of every parameter of ``experiment``."""
    points = experiment.points()
    return {
        name: (float(points[:, j].min()), float(points[:, j].max()))
        for j, name in enumerate(experiment.parameter_names)
    }


def _plot_measured(
    ax: Axes, experiment: Experiment, model: Model, x_name: str, point: Mapping[str, float]
) -> None:
    """The kernel's measured means along ``x_name`` where the other parameters equal the
    point's values (all measurements of the kernel when no line matches)."""
    frame = experiment.select(metric=model.metric).frame
    frame = frame[frame["kernel"] == model.kernel]
    others = [p for p in model.parameters if p != x_name]
    line = frame
    for name in others:
        line = line[line[name] == point[name]]
    means = (line if len(line) else frame).groupby(x_name)["value"].mean()
    ax.plot(means.index.to_numpy(), means.to_numpy(), "o", label="measured means")


def _ranges(data: Any) -> dict[str, tuple[float, float]]:
    """The ``ranges`` of a model document: per parameter ``[smallest, largest]`` measured.

    Raises
    ------
    ValueError
        When it is not an object of pairs of finite numbers, the smallest first.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"ranges: must be an object, not {data!r}")
    ranges = {}
    for name, pair in data.items():
        if not (
            isinstance(pair, list | tuple)
            and len(pair) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in pair)
            and all(math.isfinite(v) for v in pair)
            and pair[0] <= pair[1]
        ):
            raise ValueError(
                f"ranges: '{name}' must be [smallest, largest] finite numbers, not {pair!r}"
            )
        ranges[str(name)] = (float(pair[0]), float(pair[1]))
    return ranges


def _skips(entries: Any, source: str | None) -> list[Skip]:
    """The ``skipped`` list of a model document (None when absent: none skipped)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InputError("malformed model document: 'skipped' is not a list", source)
    skips = []
    for index, entry in enumerate(entries, start=1):
        fields = entry if isinstance(entry, Mapping) else {}
        kernel, metric, reason = (fields.get(k) for k in ("kernel", "metric", "reason"))
        if not (isinstance(kernel, str) and isinstance(metric, str) and isinstance(reason, str)):
            where = f"{source}: skipped {index}" if source else f"skipped {index}"
            raise InputError("not an object of strings kernel, metric and reason", where)
        skips.append(Skip(kernel, metric, reason))
    return skips


def _finite_or_low(value: float) -> float:
    return value if math.isfinite(value) else -math.inf


def _plain_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as JSON values; objects (a static report) are recorded by their type name."""
    plain: dict[str, Any] = {}
    for name, value in settings.items():
        if value is None or isinstance(value, bool | int | float | str):
            plain[name] = value
        elif isinstance(value, Mapping):
            plain[name] = {str(k): _plain_settings({"v": v})["v"] for k, v in value.items()}
        elif isinstance(value, Sequence):
            plain[name] = [_plain_settings({"v": v})["v"] for v in value]
        else:
            plain[name] = f"<{type(value).__name__}>"
    return plain


__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "ModelSet", "measured_ranges"]
