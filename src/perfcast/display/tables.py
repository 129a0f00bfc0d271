"""Models and predictions as text tables, markdown, CSV and JSON documents."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import CALL_PATH_SEPARATOR, call_path
from perfcast.core.function import Model
from perfcast.core.jsonout import dumps
from perfcast.core.points import format_point, plain_value
from perfcast.model.modelset import ModelSet
from perfcast.model.predict import Prediction

FORMATS = ("text", "json", "markdown", "csv")
#: What marks a cut cell of a table fitted to a width.
ELLIPSIS = "..."
#: The narrowest a cut column becomes.
MIN_CUT_WIDTH = 12
#: What an inclusive metric's name holds (``time_inclusive``, ``time_inclusive_rank_max``);
#: without it, the name of the exclusive metric.
INCLUSIVE_MARK = "_inclusive"


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def model_rows(models: Sequence[Model]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the model table (quality figures formatted)."""
    header = ["kernel", "metric", "model", "SMAPE %", "adj R2", "CV SMAPE %", "LOF p"]
    rows = []
    for m in models:
        q = m.quality
        rows.append(
            [
                m.kernel,
                m.metric,
                m.expression(),
                _number(q.smape if q else None, ".2f"),
                _number(q.adj_r2 if q else None, ".4f"),
                _number(q.cv_smape if q else None, ".2f"),
                _number(q.lof_p if q else None, ".3f"),
            ]
        )
    return header, rows


def format_models(
    models: ModelSet,
    output_format: str,
    at: Mapping[str, float] | None = None,
    width: int | None = None,
) -> str:
    """Render models as ``text``, ``json`` (the :meth:`ModelSet.to_json` document), ``markdown``
    or ``csv``.

    Tables list each metric's models most expensive first at ``at`` (default: the set's
    :attr:`~ModelSet.point`, the largest measured values); the JSON document keeps the
    fitting order. A ``text`` table wider than ``width`` characters has its model cells
    continued on further lines and its kernel cells cut, ending in an ellipsis.
    """
    if output_format == "json":
        return models.to_json()
    ordered = by_cost(models, at)
    if output_format == "csv":
        return _models_csv(ordered)
    header, rows = model_rows(ordered)
    return render_table(header, rows, output_format, width, cut=("kernel",), wrap=("model",))


def by_cost(models: ModelSet, at: Mapping[str, float] | None = None) -> list[Model]:
    """Every model, metric by metric, most expensive first at ``at`` (see
    :meth:`ModelSet.ranked`)."""
    return [model for metric in models.metrics for model in models.ranked(at, metric)]


def _models_csv(models: Sequence[Model]) -> str:
    parameters = list(dict.fromkeys(p for m in models for p in m.parameters))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "kernel",
            "metric",
            "expression",
            "constant",
            "rss",
            "smape",
            "adj_r2",
            "cv_smape",
            "lof_p",
        ]
        + [f"lead_{p}" for p in parameters]
    )
    for m in models:
        q = m.quality.to_dict() if m.quality else {}
        writer.writerow(
            [m.kernel, m.metric, m.expression(digits=None), repr(m.constant)]
            + [
                "" if q.get(k) is None else q[k]
                for k in ("rss", "smape", "adj_r2", "cv_smape", "lof_p")
            ]
            + [m.lead_term(p) if p in m.parameters else "" for p in parameters]
        )
    return out.getvalue()


def render_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    output_format: str,
    width: int | None = None,
    cut: Sequence[str] = (),
    wrap: Sequence[str] = (),
) -> str:
    """Aligned plain-text table (``text``) or a markdown table (``markdown``).

    With ``width``, the ``text`` table's columns named in ``cut`` or ``wrap`` are narrowed,
    the widest first, to no less than :data:`MIN_CUT_WIDTH`, until a line fits. A cell of a
    ``wrap`` column continues on the next lines, broken between words, so nothing of it is
    lost; a cell of a ``cut`` column ends in :data:`ELLIPSIS`, a cut call path (a cell holding
    ``->``) starts with it, so its last elements stay.
    """
    if output_format == "markdown":
        escape = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in escape]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]
    wrapped = {list(header).index(n) for n in wrap if n in header}
    if width is not None:
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        floors = {
            list(header).index(n): max(MIN_CUT_WIDTH, len(n)) for n in (*cut, *wrap) if n in header
        }
        while excess > 0:
            wider = [c for c in floors if widths[c] > floors[c]]
            if not wider:
                break
            widest = max(wider, key=lambda c: widths[c])
            widths[widest] -= 1
            excess -= 1
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    for row in rows:
        pieces = [
            _wrap(str(c), w) if i in wrapped else [_cut(str(c), w)]
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        for line in range(max(len(p) for p in pieces)):
            cells = [p[line] if line < len(p) else "" for p in pieces]
            lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n"


def _wrap(cell: str, width: int) -> list[str]:
    """``cell`` on lines of at most ``width`` characters, broken after a space or a ``*``
    (between the terms and factors of a model) where it can, inside a word where it must."""
    lines: list[str] = []
    line = ""
    for chunk in re.findall(r"[^ *]*[ *]|[^ *]+$", cell):
        if line and len(line) + len(chunk.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        while len(chunk.rstrip()) > width:
            lines.append(chunk[:width])
            chunk = chunk[width:]
        line += chunk
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def format_warnings(items: Sequence[Model | Prediction]) -> str:
    """The warnings of models or predictions, one line each: ``kernel: message`` (with the
    metric when the items hold several). A message every item of several carries (too few
    values, oversubscription) is printed once, as ``all kernels: message``. Empty when no item
    has a warning."""
    several_metrics = len({item.metric for item in items}) > 1
    counts: dict[str, int] = {}
    for item in items:
        for message in dict.fromkeys(w.message for w in item.warnings):
            counts[message] = counts.get(message, 0) + 1
    common = {m for m, n in counts.items() if n == len(items) > 1}
    lines = [f"all kernels: {message}" for message in counts if message in common]
    for item in items:
        name = f"{item.kernel} ({item.metric})" if several_metrics else item.kernel
        lines += [f"{name}: {w.message}" for w in item.warnings if w.message not in common]
    return "".join(line + "\n" for line in lines)


def _cut(cell: str, width: int) -> str:
    """``cell`` in at most ``width`` characters: its start and an ellipsis, or for a call path
    an ellipsis and its end."""
    if len(cell) <= width:
        return cell
    keep = max(width - len(ELLIPSIS), 1)
    if CALL_PATH_SEPARATOR in cell:
        return ELLIPSIS + cell[-keep:]
    return cell[:keep] + ELLIPSIS


def format_predictions(
    predictions: Sequence[Prediction], output_format: str, width: int | None = None
) -> str:
    """Render predictions (already ranked) in one of :data:`FORMATS`; a ``text`` table wider
    than ``width`` has its model cells continued on further lines and its kernel cells cut
    (see :func:`render_table`)."""
    if output_format == "json":
        return dumps({"predictions": [p.to_dict() for p in predictions]}) + "\n"
    header = ["rank", "kernel", "metric", "at", "prediction", "interval", "model"]
    rows = [
        [
            str(i + 1),
            p.kernel,
            p.metric,
            format_point(p.point),
            f"{p.value:.6g}",
            f"[{p.lower:.4g}, {p.upper:.4g}] ({100 * p.level:g}%)"
            if math.isfinite(p.lower) and math.isfinite(p.upper)
            else "none",
            p.expression,
        ]
        for i, p in enumerate(predictions)
    ]
    if output_format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["rank", "kernel", "metric", "at", "prediction", "lower", "upper", "level"])
        for i, p in enumerate(predictions):
            at = format_point(p.point)
            bounds = [b if math.isfinite(b) else "" for b in (p.lower, p.upper)]  # none: empty
            writer.writerow([i + 1, p.kernel, p.metric, at, p.value, *bounds, p.level])
        return out.getvalue()
    return render_table(header, rows, output_format, width, cut=("kernel",), wrap=("model",))


def format_tree(
    models: ModelSet,
    output_format: str,
    at: Mapping[str, float] | None = None,
    width: int | None = None,
) -> str:
    """The models of call-path kernels (``main->solve->spmv``) as a call tree.

    Each call path is a node under its caller, indented by depth, children most expensive
    first. Exclusive values (a metric without ``_inclusive`` in its name, the set's cost metric
    when it is one) and inclusive ones (the same name with ``_inclusive``) stay in separate
    columns; the total and every share come from exclusive values only, since an inclusive
    value also holds its callees'. The JSON document (``perfcast-call-tree``) names both metrics
    and says ``"total_from": "exclusive"``.

    Raises
    ------
    InputError
        When every metric of the set is inclusive (no exclusive values to total).
    """
    tree = call_tree(models, at)
    if output_format == "json":
        return dumps(tree) + "\n"
    inclusive = tree["metrics"]["inclusive"]
    header = ["call path", "model", f"{tree['metrics']['exclusive']} (excl)", "share %"]
    header += [f"{inclusive} (incl)"] if inclusive else []
    rows = []
    for node in tree["nodes"]:
        own, total = node["exclusive"], node["inclusive"]
        name = node["kernel"] if output_format == "csv" else "  " * node["depth"] + node["name"]
        row = [
            name,
            own["expression"] if own else "",
            _number(own["value"], ".4g") if own else "",
            _number(None if own is None or own["share"] is None else 100 * own["share"], ".1f"),
        ]
        rows.append(row + ([_number(total["value"], ".4g") if total else ""] if inclusive else []))
    if output_format == "csv":
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([header, *rows])
        return out.getvalue()
    text = render_table(header, rows, output_format, width, wrap=("model",))
    if output_format == "text":
        text += f"total (exclusive values) at {format_point(tree['at'])}: {tree['total']:.4g}\n"
    return text


def call_tree(models: ModelSet, at: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The call tree of :func:`format_tree` as plain data: ``metrics`` (``exclusive``,
    ``inclusive`` or None), ``at``, ``total``, ``total_from`` and ``nodes`` in display order,
    each ``kernel``, ``name``, ``depth``, ``exclusive`` (``value``, ``share``, ``expression``)
    and ``inclusive`` (``value``, ``expression``), None where the node has no model."""
    exclusive, inclusive = tree_metrics(models)
    point = dict(models.point if at is None else at)
    own = {m.kernel: (m, _cost(m, point)) for m in models.of_metric(exclusive)}
    held = (
        {m.kernel: (m, _cost(m, point)) for m in models.of_metric(inclusive)} if inclusive else {}
    )
    total = math.fsum(v for _, v in own.values() if math.isfinite(v))
    children: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    below: dict[tuple[str, ...], float] = {}
    for kernel in [*own, *held]:
        path = call_path(kernel)
        for depth in range(1, len(path) + 1):
            node = path[:depth]
            if node not in below:
                below[node] = 0.0
                children.setdefault(node[:-1], []).append(node)
        value = own[kernel][1] if kernel in own else 0.0
        for depth in range(1, len(path) + 1):
            below[path[:depth]] += value if math.isfinite(value) else 0.0
    nodes: list[dict[str, Any]] = []

    def visit(parent: tuple[str, ...]) -> None:
        ranked = sorted(children.get(parent, []), key=lambda n: -_ranking_cost(n, held, below))
        for node in ranked:
            kernel = CALL_PATH_SEPARATOR.join(node)
            mine, theirs = own.get(kernel), held.get(kernel)
            nodes.append(
                {
                    "kernel": kernel,
                    "name": node[-1],
                    "depth": len(node) - 1,
                    "exclusive": None
                    if mine is None
                    else {
                        "value": mine[1],
                        "share": mine[1] / total if total > 0 and math.isfinite(mine[1]) else None,
                        "expression": mine[0].expression(),
                    },
                    "inclusive": None
                    if theirs is None
                    else {"value": theirs[1], "expression": theirs[0].expression()},
                }
            )
            visit(node)

    visit(())
    return {
        "format": "perfcast-call-tree",
        "metrics": {"exclusive": exclusive, "inclusive": inclusive},
        "at": {name: plain_value(value) for name, value in point.items()},
        "total": total,
        "total_from": "exclusive",
        "nodes": nodes,
    }


def tree_metrics(models: ModelSet) -> tuple[str, str | None]:
    """The exclusive metric of a call tree (the cost metric, or the first exclusive one) and
    its inclusive counterpart when modeled (None otherwise).

    Raises
    ------
    InputError
        When every metric is inclusive.
    """
    exclusive = [m for m in models.metrics if INCLUSIVE_MARK not in m]
    if not exclusive:
        raise InputError(
            f"a call tree totals exclusive values, but every metric is inclusive "
            f"({', '.join(models.metrics)})",
            models.source,
            reason="no-exclusive-metric",
        )
    chosen = models.cost_metric() if models.cost_metric() in exclusive else exclusive[0]
    return chosen, inclusive_metric(chosen, models.metrics)


def inclusive_metric(exclusive: str, metrics: Sequence[str]) -> str | None:
    """The inclusive counterpart of the metric ``exclusive`` among ``metrics`` (``time``:
    ``time_inclusive``; ``time_rank_max``: ``time_inclusive_rank_max``), None if not there."""
    return next(
        (
            m
            for m in metrics
            if INCLUSIVE_MARK in m and m.replace(INCLUSIVE_MARK, "", 1) == exclusive
        ),
        None,
    )


def _cost(model: Model, point: Mapping[str, float]) -> float:
    coordinates = np.array([[point[p] for p in model.parameters]], dtype=float)
    return float(model.evaluate(coordinates)[0])


def _ranking_cost(
    node: tuple[str, ...],
    inclusive: Mapping[str, tuple[Model, float]],
    below: Mapping[tuple[str, ...], float],
) -> float:
    """A node's weight among its siblings: its inclusive value, else the exclusive values of
    its subtree."""
    kernel = CALL_PATH_SEPARATOR.join(node)
    value = inclusive[kernel][1] if kernel in inclusive else below[node]
    return value if math.isfinite(value) else -math.inf
